// The signed-in player's progression over the gateway's REST routes (/api/me/..., the
// leaderboard): profile, cards, missions, follows, a game's credit. Each call sends the
// session token; a refusal rejects with a GatewayError carrying the server's code.

import { GatewayError } from "./net.js";
import { emit, store } from "./store.js";

async function call(method, path) {
  const token = store.session && store.session.token;
  const response = await fetch(path, {
    method,
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new GatewayError(body.code || `http/${response.status}`, body.message || "");
  return body;
}

export const profile = () => call("GET", "/api/me/profile");
export const cards = () => call("GET", "/api/me/cards");
export const missions = () => call("GET", "/api/me/missions");
export const following = () => call("GET", "/api/me/following");
export const leaderboard = (scope = "weekly") =>
  call("GET", `/api/leaderboard?scope=${encodeURIComponent(scope)}`);
export const gameCredit = (tableId) => call("GET", `/api/me/games/${encodeURIComponent(tableId)}`);

// Follows change what several views show (profile, chat name menus): they hear "follows".
export async function setFollowing(playerId, follow) {
  const reply = await call(follow ? "PUT" : "DELETE", `/api/me/following/${encodeURIComponent(playerId)}`);
  emit("follows", { playerId, following: reply.following });
  return reply;
}
