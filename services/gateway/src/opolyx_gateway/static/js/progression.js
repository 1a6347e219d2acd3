// The signed-in player's progression over the gateway's REST routes (/api/me/..., the
// leaderboard): profile, cards, missions, follows, a game's credit. Each call sends the
// session token; a refusal rejects with a GatewayError carrying the server's code.

import { GatewayError } from "./net.js";
import { emit, on, store } from "./store.js";

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

// Whom the signed-in player follows, for views that mark names (the table's players): read
// once per session, then kept up to date by setFollowing. `null` until it was read.
let followed = null;
let reading = null;
on("session", () => { followed = null; reading = null; });

// Whether the player follows `playerId`: true/false, or null while not known yet (the first
// call reads the list; "follows" is heard once it is known).
export function followsNow(playerId) {
  if (followed) return followed.has(playerId);
  if (!reading && store.session) {
    const session = store.session;
    reading = following().then((reply) => {
      if (store.session !== session) return;
      followed = new Set(reply.players.map((p) => p.player_id));
      emit("follows", {});
    }).catch(() => { // no progression service: no follow buttons; ask again later
      setTimeout(() => { if (store.session === session) reading = null; }, 30_000);
    });
  }
  return null;
}

// Follows change what several views show (profile, chat name menus, the table's players):
// they hear "follows".
export async function setFollowing(playerId, follow) {
  const reply = await call(follow ? "PUT" : "DELETE", `/api/me/following/${encodeURIComponent(playerId)}`);
  if (followed) {
    if (reply.following) followed.add(playerId);
    else followed.delete(playerId);
  }
  emit("follows", { playerId, following: reply.following });
  return reply;
}
