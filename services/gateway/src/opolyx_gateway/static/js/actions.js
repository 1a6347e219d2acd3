// What the player does that goes to the gateway: sign-in, lobby requests, table commands,
// watching a table. Each updates the store; the views re-render from it.

import { ERRORS, LOBBY_ACTIONS as L, LOBBY_ERRORS } from "./constants.js";
import { toast } from "./dom.js";
import { has, t } from "./i18n.js";
import { Connection, DISCONNECTED, signIn } from "./net.js";
import {
  dropTable, emit, newTable, on, reduce, setMyGame, setRoom, setScreen, setStatus, store,
} from "./store.js";

const SESSION_KEY = "opolyx.session";
const TABLE_KEY = "opolyx.table";
const LOG_REPLAY = 150; // events replayed into the log when a page comes back to a game

// A failed request as the player reads it, always from the catalogue: the text for its
// code ("ui.errors.lobby_room_full" for lobby/room_full), else the text for the code's
// namespace ("ui.errors.area.lobby"), else a general one naming the code. (The server's
// message is English and for developers; every code the gateway serves in constants.js
// has a text in every language, checked by the catalogue tests.)
export function errorText(err) {
  const code = String((err && err.code) || "");
  const [area] = code.split("/");
  for (const key of [`ui.errors.${code.replaceAll("/", "_")}`, `ui.errors.area.${area}`]) {
    if (code && has(key)) return t(key);
  }
  return t("ui.errors.unexpected", { code: code || "?" });
}

export function fail(err) {
  toast(errorText(err));
}

// Requests sent and not answered yet, by what they ask: a double click or tap sends its
// request once. The second one was refused and shown as an error ("already in a game" after
// Create room), or worse, applied to the state after the first: a second roll after doubles,
// before the player saw the first throw. The same request goes out again once the first is
// answered (its outcome on screen). `run`'s failure is shown to the player: by `failed`,
// where the request has a place of its own for errors, else as a toast.
const inFlight = new Set();

export async function once(key, run, failed = fail) {
  if (inFlight.has(key)) return;
  inFlight.add(key);
  try {
    await run();
  } catch (err) {
    failed(err);
  } finally {
    inFlight.delete(key);
  }
}

// ---------------------------------------------------------------- session
export function saveSession(session) {
  store.session = session;
  if (session) localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else localStorage.removeItem(SESSION_KEY);
  emit("session", session);
}

export function loadSession() {
  try {
    const s = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    if (s && s.token && s.expires_at * 1000 > Date.now()) return s;
  } catch { /* a damaged entry is the same as none */ }
  return null;
}

function rememberTable() {
  const tb = store.table;
  if (tb) localStorage.setItem(TABLE_KEY, JSON.stringify({ id: tb.id, seq: tb.seq }));
  else localStorage.removeItem(TABLE_KEY);
}

export async function signInAs(name) {
  const s = await signIn(name);
  saveSession(s);
  connect();
}

export function signOut() {
  if (store.conn) store.conn.close();
  store.conn = null;
  if (store.watching !== null) dropTable(store.watching);
  rememberTable();
  setMyGame(null);
  saveSession(null);
  setStatus("offline");
  setScreen("signin");
}

export function connect() {
  store.conn = new Connection(store.session.token, {
    onPush: (push) => {
      reduce(push);
      if (store.table) rememberTable();
    },
    onReady,
    onStatus: setStatus,
    onAuthFailed: (err) => { signOut(); emit("signin-error", errorText(err)); },
    onSession: saveSession, // the renewed token, for the next page load
  });
  store.conn.open();
}

async function onReady() {
  if (store.table) {
    watchTable(store.table.id);
    return;
  }
  setScreen("lobby");
  refreshRooms();
  try {
    const mine = await lobby(L.MINE);
    const saved = JSON.parse(localStorage.getItem(TABLE_KEY) || "null");
    if (mine.table_id) {
      // a fresh page rebuilds the recent log from the stored events
      const seen = saved && saved.id === mine.table_id ? saved.seq : 0;
      startWatching(mine.table_id, Math.max(0, seen - LOG_REPLAY));
      return;
    }
    setRoom(mine.room || null, mine.invite_code);
  } catch (err) {
    if (err.code !== LOBBY_ERRORS.NOT_IN_ROOM) fail(err);
  }
  const params = new URLSearchParams(location.search);
  if (params.get("watch")) {
    dropParams("watch");
    startWatching(params.get("watch"), 0);
    return;
  }
  if (params.get("room") && !store.room) {
    dropParams("room", "invite");
    joinRoom(params.get("room"), params.get("invite"));
  }
}

// Takes the one-shot parameters off the address, keeping the others (?lang=).
function dropParams(...names) {
  const params = new URLSearchParams(location.search);
  for (const name of names) params.delete(name);
  const rest = params.toString();
  history.replaceState(null, "", rest ? `/?${rest}` : "/");
}

// ---------------------------------------------------------------- lobby
export function lobby(action, fields = {}) {
  return store.conn.request("lobby", { action, ...fields });
}

export async function refreshRooms() {
  try {
    const data = await lobby(L.LIST);
    store.rooms = new Map((data.rooms || []).map((r) => [r.room_id, r]));
    emit("rooms");
  } catch (err) {
    fail(err);
  }
}

export async function joinRoom(room, invite) {
  await once(`${L.JOIN} ${room}`, async () => {
    const data = await lobby(L.JOIN, { room, invite: invite || undefined });
    setRoom(data.room, data.invite_code);
  });
}

export async function createRoom({ mode, seats, isPrivate, autopilot = true }) {
  await once(L.CREATE, async () => {
    const data = await lobby(L.CREATE, { mode, seats, private: isPrivate, autopilot });
    setRoom(data.room, data.invite_code);
  });
}

// A request about the player's own room (add or remove a bot, kick a member); the reply's
// room replaces the shown one. Sent once while its twin is unanswered: two clicks added two
// bots, and a second Remove or Kick was refused and shown as an error. Returns the reply,
// else null (no room, the request failed, shown to the player, or its twin was unanswered).
export async function roomAct(action, fields = {}) {
  if (!store.room) return null;
  const room = store.room.room_id;
  let data = null;
  await once(`${action} ${room} ${JSON.stringify(fields)}`, async () => {
    const reply = await lobby(action, { room, ...fields });
    if (reply && reply.room) setRoom(reply.room, reply.invite_code ?? store.invite);
    data = reply;
  });
  return data;
}

export async function leaveRoom() {
  if (!store.room) return;
  const room = store.room.room_id;
  await once(`${L.LEAVE} ${room}`, async () => {
    await lobby(L.LEAVE, { room });
    setRoom(null);
  });
}

export async function startGame() {
  if (!store.room) return;
  const room = store.room.room_id;
  await once(`${L.START} ${room}`, async () => {
    const data = await lobby(L.START, { room });
    if (data.table_id) startWatching(data.table_id, 0);
  });
}

// ---------------------------------------------------------------- table
export function startWatching(tableId, since) {
  if (store.watching === tableId) return; // the start reply and the lobby event both say so
  if (store.watching !== null) dropTable(store.watching);
  setRoom(null);
  store.jackpotPick.clear();
  newTable(tableId, since);
  store.watching = tableId;
  rememberTable();
  setScreen("table");
  watchTable(tableId);
}

async function watchTable(tableId) {
  const tb = store.tables.get(tableId);
  if (!tb) return;
  try {
    const watch = await store.conn.request("table.watch", { table: tableId, since: tb.resumeFrom ?? (tb.seq || undefined) });
    if (store.tables.get(tableId) !== tb) return;
    if (watch.replayed === 0 && watch.seq > LOG_REPLAY && tb.resumeFrom === 0 && !tb.events.length) {
      // a long or finished game is replayed no further back than the gateway's limit:
      // watch again from its recent end, so the log is not empty
      tb.resumeFrom = Math.max(0, watch.seq - LOG_REPLAY);
      tb.seq = tb.resumeFrom;
      await watchTable(tableId);
      return;
    }
    tb.seat = watch.seat;
    if (tb.seat !== null && tb.seat !== undefined) setMyGame(tableId);
    if (tb.view) emit("table", tb);
  } catch (err) {
    if (err.code === DISCONNECTED) return; // watched again on reconnect
    fail(err);
    if (err.code === ERRORS.TABLE_NOT_FOUND) leaveTable();
  }
}

// Back to the lobby. A seated player in a running game keeps a way back to it (myGame).
export function leaveTable() {
  const tb = store.table;
  if (tb && store.conn) store.conn.request("table.unwatch", { table: tb.id }).catch(() => {});
  const running = tb && tb.seat !== null && tb.seat !== undefined && tb.view && !tb.view.state.finished
    && !tb.view.state.seats[tb.seat].out;
  setMyGame(running ? tb.id : null);
  if (tb) dropTable(tb.id);
  rememberTable();
  setRoom(null);
  setScreen("lobby");
  refreshRooms();
}

// Back to the game the player sits in, with the recent log replayed.
export function returnToGame() {
  const id = store.myGame;
  if (id) startWatching(id, Math.max(0, (lastSeq.get(id) || 0) - LOG_REPLAY));
}

const lastSeq = new Map(); // table id -> last sequence seen, for the replay on return
on("table", (tb) => lastSeq.set(tb.id, tb.seq));
on("started", ({ tableId }) => startWatching(tableId, 0));

export async function act(command) {
  const tb = store.table;
  if (!tb) return;
  await once(`table.cmd ${tb.id} ${JSON.stringify(command)}`, () =>
    store.conn.request("table.cmd", { table: tb.id, command }));
}
