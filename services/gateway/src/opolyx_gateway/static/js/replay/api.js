// The replay endpoints' JSON, or an error with the code the page words through errorText
// (never the server's English message): the gateway's coded error body; an unreadable
// answer is the server's (upstream/bad_reply); no answer, or an error without a code (a
// proxy's page), is the server not reachable now (service/unavailable).

import { ERRORS, GATEWAY_ERRORS } from "../constants.js";

function coded(code) {
  return Object.assign(new Error(code), { code });
}

export async function replayJson(url, init) {
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    throw coded(ERRORS.UNAVAILABLE);
  }
  const body = await response.json().catch(() => null);
  if (response.ok) {
    if (body === null) throw coded(GATEWAY_ERRORS.UPSTREAM_BAD_REPLY);
    return body;
  }
  throw coded(body && typeof body.code === "string" ? body.code : ERRORS.UNAVAILABLE);
}
