// The page's state: who is signed in, the lobby, and one state per watched table. Pushes from
// the gateway go through one reducer (`reduce`); views listen to topics (`on`) and re-render
// from the state, never from the push itself.
//
// Topics: "screen" (signin/lobby/table), "session", "status" (connection), "rooms" (public
// list), "room" (the player's own room), "mygame" (a running game the player sits in),
// "table" (the watched table's state or log changed), "started" ({tableId}: a room of this
// player has started; actions.js starts watching).

import { EVENT_TYPES as E, LOBBY_EVENT_TYPES, MODES, PUSH_TYPES as P, SQUARES } from "./constants.js";

export const LOG_EVENTS = 400; // raw events kept per table for the log (it condenses them)

export const store = {
  screen: "signin",
  status: "offline",
  session: null, // {player_id, name, token, expires_at}
  conn: null,
  board: Object.fromEntries(SQUARES.map((s) => [s.square, s])),
  modes: MODES,
  rooms: new Map(), // public rooms by id
  room: null, // the room this player is in
  invite: null, // its invite code when private
  myGame: null, // id of a running table this player sits at (for "back to my game")
  tables: new Map(), // table id -> table state (see newTable)
  watching: null, // id of the table on screen
  jackpotPick: new Set(),
  get table() {
    return this.watching === null ? null : this.tables.get(this.watching) || null;
  },
};

const listeners = new Map();

export function on(topic, fn) {
  if (!listeners.has(topic)) listeners.set(topic, []);
  listeners.get(topic).push(fn);
}

export function emit(topic, detail) {
  for (const fn of listeners.get(topic) || []) fn(detail);
}

export function setScreen(screen) {
  store.screen = screen;
  emit("screen", screen);
}

export function setStatus(status) {
  store.status = status;
  emit("status", status);
}

export function setRoom(room, inviteCode) {
  store.room = room;
  if (inviteCode !== undefined) store.invite = inviteCode;
  if (!room) store.invite = null;
  emit("room", room);
  emit("rooms");
}

export function setMyGame(tableId) {
  store.myGame = tableId || null;
  emit("mygame", store.myGame);
}

// A table's state on this page: `view` is the last table.state push (state, pending, seats),
// `events` the recent raw events (the log is described from them in the current language),
// `card` the event card on show ({seat, card, text}) until the next turn; `partial` says the
// events start partway through the game (the log then starts at a turn and says so).
export function newTable(id, since) {
  const table = {
    id, seq: since ?? 0, seat: null, view: null, events: [], card: null, endShown: false,
    resumeFrom: since, skew: 0, offset: null, partial: false,
  };
  store.tables.set(id, table);
  return table;
}

export function dropTable(id) {
  store.tables.delete(id);
  if (store.watching === id) store.watching = null;
}

// ---------------------------------------------------------------- the reducer
export function reduce(push) {
  switch (push.type) {
    case P.LOBBY_EVENT: lobbyEvent(push.event); break;
    case P.LOBBY_ROOMS: roomsChanged(push); break;
    case P.TABLE_UPDATE: tableUpdate(push); break;
    case P.TABLE_EVENTS: tableEvents(push.table, push.seq, push.events); break;
    case P.TABLE_STATE: tableState(push); break;
    default: emit(`push:${push.type}`, push); // e.g. chat messages, for the modules that show them
  }
}

// A room this player is (or was) in changed: the player's own view of it.
function lobbyEvent(event) {
  const room = event.room;
  const me = store.session && store.session.player_id;
  const stillIn = Boolean(room && room.members.some((m) => m.player_id === me));
  if (event.type === LOBBY_EVENT_TYPES.ROOM_STARTED && event.table_id && stillIn) {
    emit("started", { tableId: event.table_id });
    return;
  }
  if (store.room && store.room.room_id === event.room_id) {
    setRoom(stillIn ? room : null);
    if (!stillIn && room) emit("removed-from-room", room);
  }
}

// The public room list changed: rows to add or replace, ids to drop.
function roomsChanged(push) {
  for (const room of push.upserted) store.rooms.set(room.room_id, room);
  for (const id of push.removed) store.rooms.delete(id);
  emit("rooms");
}

// Events a push carries that this page has not seen yet (replays, then live updates).
function tableEvents(tableId, seq, records) {
  const t = store.tables.get(tableId);
  if (!t) return;
  // what the autopilot played for a seat keeps its mark (the log says so)
  const fresh = records.filter((r) => r.seq > t.seq);
  const events = fresh.map((r) => (r.autopilot ? { ...r.event, by_autopilot: true } : r.event));
  // a log replayed from the middle of the game (a return, a finished game) starts partway
  if (!t.events.length && fresh.length && fresh[0].seq > 1) t.partial = true;
  t.seq = Math.max(t.seq, seq);
  t.resumeFrom = t.seq;
  if (!events.length) return;
  for (const e of events) {
    if (e.type === E.CARD_DRAWN) t.card = { seat: e.seat, card: e.card, text: e.text };
    // the banner is for the turn the card was drawn in
    if (e.type === E.TURN_STARTED || e.type === E.DICE_ROLLED) t.card = null;
  }
  t.events.push(...events);
  if (t.events.length > LOG_EVENTS) {
    t.events.splice(0, t.events.length - LOG_EVENTS);
    t.partial = true;
  }
  if (t.view) emit("table", t);
}

// One stored batch (the table's update as published): its events, then the state after
// them (the seats stay as they were).
function tableUpdate(push) {
  const t = store.tables.get(push.table_id);
  if (!t || !t.view) return;
  const fresh = push.events.filter((r) => r.seq > t.seq).map((r) => r.event);
  tableEvents(push.table_id, push.last_seq, push.events);
  tableState({
    type: P.TABLE_STATE, table: push.table_id, seq: push.last_seq, version: push.version,
    state: push.view, net_worth: push.net_worth, pending: push.pending, seats: t.view.seats,
    autopilot: push.autopilot,
    deadline_at: push.deadline_at, now: push.now,
  });
  // what just happened, for sound and motion (never the log replayed on a return)
  if (fresh.length) emit("live-events", { table: t, events: fresh });
}

function tableState(push) {
  const t = store.tables.get(push.table);
  if (!t) return;
  t.view = push;
  t.skew = push.now - Date.now() / 1000;
  const state = push.state;
  // game seconds -> wall clock, from the next deadline the table reported
  const deadlines = [state.pending?.deadline, ...(state.offers || []).map((o) => o.deadline)]
    .filter((d) => d !== undefined && d !== null);
  t.offset = push.deadline_at && deadlines.length ? push.deadline_at - Math.min(...deadlines) : null;
  if (push.seq > t.seq) t.seq = push.seq;
  emit("table", t);
}

// ---------------------------------------------------------------- questions views ask
// This seat's legal commands: the pending decisions list every seat's.
export function myLegal(t = store.table) {
  const mine = (t?.view?.pending || []).find((d) => d.seat === t.seat);
  return mine ? mine.legal : [];
}
export const legalOf = (type) => myLegal().filter((c) => c.type === type);
export const can = (type, square) => legalOf(type).some((c) => square === undefined || c.square === square);

// Game seconds of the watched table -> wall-clock seconds, or null before a deadline is known.
export function wall(gameSeconds, t = store.table) {
  return !t || t.offset === null || t.offset === undefined ? null : gameSeconds + t.offset;
}

// A seat's net worth as the table computed it (the rules' net_worths, sent with every
// state); 0 from a table that sent none.
export function worthOf(state, seat, t = store.table) {
  const worths = t && t.view && t.view.net_worth;
  return worths && worths[seat] !== undefined ? worths[seat] : 0;
}
