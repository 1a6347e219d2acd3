// opolyx web client: sign-in, lobby and table, on one websocket to the gateway.

import { Board } from "./board.js";
import {
  COMMAND_TYPES as C, DECISION_KINDS as K, ERRORS, EVENT_TYPES as E, LOBBY_ACTIONS as L,
  LOBBY_ERRORS, LOBBY_EVENT_TYPES, MODES, PUSH_TYPES as P, ROOM_STATUSES, SQUARES,
} from "./constants.js";
import { $, h, money, toast } from "./dom.js";
import { describe } from "./log.js";
import { Connection, DISCONNECTED, signIn } from "./net.js";
import { fairness, openTradeDialog, sideValue } from "./trade.js";

const SESSION_KEY = "opolyx.session";
const TABLE_KEY = "opolyx.table";
const LOG_LIMIT = 200;
const LOG_REPLAY = 150; // events replayed into the log when a page comes back to a game

const app = {
  session: null,
  conn: null,
  board: null, // squares by index, from /api/board
  modes: {},
  rooms: new Map(),
  room: null,
  invite: null,
  table: null,
  boardView: null,
  jackpotPick: new Set(),
};

// ---------------------------------------------------------------- utilities
function show(view) {
  for (const id of ["signin", "lobby", "table"]) $(`#view-${id}`).hidden = id !== view;
  $("#conn").hidden = view === "signin";
  document.body.dataset.view = view;
}

function saveSession(session) {
  app.session = session;
  if (session) localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else localStorage.removeItem(SESSION_KEY);
}

function loadSession() {
  try {
    const s = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    if (s && s.token && s.expires_at * 1000 > Date.now()) return s;
  } catch { /* a damaged entry is the same as none */ }
  return null;
}

function rememberTable() {
  const t = app.table;
  if (t) localStorage.setItem(TABLE_KEY, JSON.stringify({ id: t.id, seq: t.seq }));
  else localStorage.removeItem(TABLE_KEY);
}

function fail(err) {
  toast(err && err.message ? err.message : String(err));
}

async function lobby(action, fields = {}) {
  return app.conn.request("lobby", { action, ...fields });
}

// ---------------------------------------------------------------- sign-in
async function onSignIn(ev) {
  ev.preventDefault();
  const name = $("#signin-name").value;
  $("#signin-error").textContent = "";
  try {
    const s = await signIn(name);
    saveSession(s);
    connect();
  } catch (err) {
    $("#signin-error").textContent = err.message;
  }
}

function signOut() {
  if (app.conn) app.conn.close();
  app.conn = null;
  app.table = null;
  rememberTable();
  saveSession(null);
  $("#me-name").textContent = "";
  $("#sign-out").hidden = true;
  setStatus("offline");
  show("signin");
}

function setStatus(status) {
  const el = $("#conn");
  el.textContent = status;
  el.className = `conn ${status}`;
}

function connect() {
  $("#me-name").textContent = app.session.name;
  $("#sign-out").hidden = false;
  app.conn = new Connection(app.session.token, {
    onPush,
    onReady,
    onStatus: setStatus,
    onAuthFailed: (err) => { signOut(); $("#signin-error").textContent = `${err.message}`; },
  });
  app.conn.open();
}

async function onReady() {
  if (app.table) {
    watchTable(app.table.id);
    return;
  }
  show("lobby");
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
    history.replaceState(null, "", "/");
    startWatching(params.get("watch"), 0);
    return;
  }
  if (params.get("room") && !app.room) {
    history.replaceState(null, "", "/");
    joinRoom(params.get("room"), params.get("invite"));
  }
}

// ---------------------------------------------------------------- lobby
async function refreshRooms() {
  try {
    const data = await lobby(L.LIST);
    app.rooms = new Map((data.rooms || []).map((r) => [r.room_id, r]));
    renderRooms();
  } catch (err) {
    fail(err);
  }
}

function renderRooms() {
  const list = $("#rooms");
  const rooms = [...app.rooms.values()].filter((r) => r.status === ROOM_STATUSES.OPEN && r.public);
  if (!rooms.length) {
    list.replaceChildren(h("li.empty", {}, "No open rooms yet: create one!"));
    return;
  }
  list.replaceChildren(...rooms.map((r) => {
    const mineHere = app.room && app.room.room_id === r.room_id;
    return h("li", { dataset: { room: r.room_id } },
      h("div", {},
        h("strong", {}, modeName(r.mode)), " ",
        h("span.tag", {}, `${r.members.length}/${r.seat_count} seats`), " ",
        h("span.muted", {}, r.members.map((m) => m.name).join(", "))),
      mineHere ? h("span.tag", {}, "your room")
        : h("button", { onclick: () => joinRoom(r.room_id), disabled: r.members.length >= r.seat_count || Boolean(app.room) }, "Join"));
  }));
}

const modeName = (m) => m.charAt(0).toUpperCase() + m.slice(1);

async function joinRoom(room, invite) {
  try {
    const data = await lobby(L.JOIN, { room, invite: invite || undefined });
    setRoom(data.room, data.invite_code);
  } catch (err) {
    fail(err);
  }
}

function setRoom(room, inviteCode) {
  app.room = room;
  if (inviteCode !== undefined) app.invite = inviteCode;
  if (!room) app.invite = null;
  renderRoom();
  renderRooms();
}

function renderRoom() {
  const card = $("#my-room");
  const room = app.room;
  $("#create-card").hidden = Boolean(room);
  card.hidden = !room;
  if (!room) return;
  const me = app.session.player_id;
  const creator = room.creator === me;
  const full = room.members.length >= room.seat_count;
  const body = $("#my-room-body");
  const parts = [
    h("p", {}, h("strong", {}, `${modeName(room.mode)} room`), ` · ${room.members.length} of ${room.seat_count} seats · `,
      room.public ? "public" : "private"),
  ];
  if (!room.public && app.invite) {
    const link = `${location.origin}/?room=${encodeURIComponent(room.room_id)}&invite=${encodeURIComponent(app.invite)}`;
    const input = h("input", { id: "invite-link", readonly: true, value: link, "aria-label": "Invite link" });
    parts.push(h("div.invite", {}, input,
      h("button", { type: "button", onclick: () => { input.select(); navigator.clipboard?.writeText(link).then(() => toast("Invite link copied"), () => {}); } }, "Copy")));
  }
  parts.push(h("ul.members", { id: "members" }, room.members.map((m) => h("li", {},
    h("span", {}, m.name, " ", m.bot ? h("span.tag", {}, `bot · ${m.style || ""}`) : null,
      m.player_id === room.creator ? h("span.tag", {}, "creator") : null),
    creator && m.player_id !== me
      ? h("button.link", { onclick: () => lobbyAct(m.bot ? L.REMOVE_BOT : L.KICK, { target: m.player_id }) },
        m.bot ? "Remove" : "Kick")
      : null))));
  parts.push(h("div.actions", {},
    creator ? h("button", { id: "add-bot", disabled: full, onclick: () => lobbyAct(L.ADD_BOT) }, "Add bot") : null,
    creator ? h("button.primary", { id: "start-game", disabled: room.members.length < 2, onclick: startGame }, "Start game") : null,
    creator ? null : h("span.muted", {}, "Waiting for the creator to start…"),
    h("button.link", { id: "leave-room", onclick: () => lobbyAct(L.LEAVE).then(() => setRoom(null)) }, "Leave room")));
  body.replaceChildren(...parts);
}

async function lobbyAct(action, fields = {}) {
  try {
    const data = await lobby(action, { room: app.room?.room_id, ...fields });
    if (data && data.room) setRoom(data.room, data.invite_code ?? app.invite);
    return data;
  } catch (err) {
    fail(err);
    throw err;
  }
}

async function startGame() {
  try {
    const data = await lobby(L.START, { room: app.room.room_id });
    if (data.table_id) startWatching(data.table_id, 0);
  } catch (err) {
    fail(err);
  }
}

async function onCreate(ev) {
  ev.preventDefault();
  try {
    const data = await lobby(L.CREATE, {
      mode: $("#create-mode").value,
      seats: Number($("#create-seats").value),
      private: $("#create-private").checked,
    });
    setRoom(data.room, data.invite_code);
  } catch (err) {
    fail(err);
  }
}

// A room this player is (or was) in changed: the player's own view of it.
function onLobbyEvent(event) {
  const room = event.room;
  const stillIn = Boolean(room && room.members.some((m) => m.player_id === app.session.player_id));
  if (event.type === LOBBY_EVENT_TYPES.ROOM_STARTED && event.table_id && stillIn) {
    startWatching(event.table_id, 0);
    return;
  }
  if (app.room && app.room.room_id === event.room_id) {
    setRoom(stillIn ? room : null);
    if (!stillIn && room) toast("You are no longer in that room");
  }
}

// The public room list changed: rows to add or replace, ids to drop.
function onRooms(push) {
  for (const room of push.upserted) app.rooms.set(room.room_id, room);
  for (const id of push.removed) app.rooms.delete(id);
  renderRooms();
}

// ---------------------------------------------------------------- table
function startWatching(tableId, since) {
  if (app.table && app.table.id === tableId) return; // the start reply and the lobby event both say so
  app.room = null;
  $("#log").replaceChildren();
  app.jackpotPick.clear();
  app.table = {
    id: tableId, seq: since ?? 0, seat: null, view: null, log: [], card: null, endShown: false,
    resumeFrom: since,
  };
  rememberTable();
  show("table");
  watchTable(tableId);
}

async function watchTable(tableId) {
  const t = app.table;
  try {
    const watch = await app.conn.request("table.watch", { table: tableId, since: t.resumeFrom ?? (t.seq || undefined) });
    if (app.table !== t) return;
    t.seat = watch.seat;
    if (t.view) renderTable();
  } catch (err) {
    if (err.code === DISCONNECTED) return; // watched again on reconnect
    fail(err);
    if (err.code === ERRORS.TABLE_NOT_FOUND) leaveTable();
  }
}

function leaveTable() {
  if (app.table && app.conn) app.conn.request("table.unwatch", { table: app.table.id }).catch(() => {});
  app.table = null;
  rememberTable();
  $("#end-dialog").open && $("#end-dialog").close();
  show("lobby");
  refreshRooms();
}

function names(seat) {
  const t = app.table;
  const info = t && t.view && t.view.seats[seat];
  if (info && info.player_id === app.session.player_id) return `${info.name || "You"} (you)`;
  return (info && info.name) || `Seat ${seat + 1}`;
}

function squareName(square) {
  return app.board[square] ? app.board[square].name : `square ${square}`;
}

// Events a push carries that this page has not logged yet (replays, then live updates).
function onEvents(push) {
  const t = app.table;
  if (!t || push.table !== t.id) return;
  const events = push.events.filter((r) => r.seq > t.seq).map((r) => r.event);
  t.seq = Math.max(t.seq, push.seq);
  t.resumeFrom = t.seq;
  rememberTable();
  if (!events.length) return;
  if (!t.view) {
    // replayed before the first state: describe them once the seats' names are known
    t.early = (t.early || []).concat(events);
    return;
  }
  logEvents(events);
}

// One stored batch (the table's update as published): its events, then the state after
// them (the seats stay as they were).
function onUpdate(push) {
  const t = app.table;
  if (!t || push.table_id !== t.id || !t.view) return;
  onEvents({ table: push.table_id, seq: push.last_seq, events: push.events });
  onState({
    type: P.TABLE_STATE, table: push.table_id, seq: push.last_seq, version: push.version,
    state: push.view, pending: push.pending, seats: t.view.seats,
    deadline_at: push.deadline_at, now: push.now,
  });
}

function logEvents(events) {
  const t = app.table;
  for (const e of events) {
    if (e.type === E.CARD_DRAWN) t.card = e.text;
    if (e.type === E.DICE_ROLLED) t.card = null;
  }
  const lines = describe(events, { seatName: names, squareName });
  t.log.push(...lines);
  if (t.log.length > LOG_LIMIT) t.log.splice(0, t.log.length - LOG_LIMIT);
  renderLog(lines);
}

function renderLog(lines) {
  const list = $("#log");
  for (const line of lines) list.prepend(h(`li${line.kind ? "." + line.kind : ""}`, {}, line.text));
  while (list.children.length > LOG_LIMIT) list.lastChild.remove();
}

function onState(push) {
  const t = app.table;
  if (!t || push.table !== t.id) return;
  t.view = push;
  t.skew = push.now - Date.now() / 1000;
  const state = push.state;
  // game seconds -> wall clock, from the next deadline the table reported
  const deadlines = [state.pending?.deadline, ...(state.offers || []).map((o) => o.deadline)].filter((d) => d !== undefined && d !== null);
  t.offset = push.deadline_at && deadlines.length ? push.deadline_at - Math.min(...deadlines) : null;
  if (push.seq > t.seq) t.seq = push.seq;
  rememberTable();
  if (t.early) {
    const early = t.early;
    t.early = null;
    logEvents(early);
  }
  renderTable();
}

// This seat's legal commands: the pending decisions list every seat's.
function myLegal() {
  const t = app.table;
  const mine = (t?.view?.pending || []).find((d) => d.seat === t.seat);
  return mine ? mine.legal : [];
}
const legalOf = (type) => myLegal().filter((c) => c.type === type);
const can = (type, square) => legalOf(type).some((c) => square === undefined || c.square === square);

async function act(command) {
  const t = app.table;
  try {
    await app.conn.request("table.cmd", { table: t.id, command });
  } catch (err) {
    fail(err);
  }
}

function cmdButton(label, command, cls = "") {
  return h(`button${cls}`, { type: "button", dataset: { cmd: command.type }, onclick: () => act(command) }, label);
}

function renderTable() {
  const t = app.table;
  const view = t.view;
  const state = view.state;
  const me = t.seat;
  if (!app.boardView) app.boardView = new Board($("#board"), Object.values(app.board), pickSquare);
  const targets = new Set(legalOf(C.TELEPORT).map((c) => c.square));
  app.boardView.render(state, names, targets);

  // players
  $("#players").replaceChildren(...state.seats.map((s) => {
    const worth = netWorth(state, s.seat);
    return h(`li${s.seat === state.current_seat && !state.finished ? ".turn-now" : ""}${s.out ? ".out" : ""}`,
      { dataset: { seat: s.seat } },
      h(`span.dot.c${s.seat}`),
      h("span", {}, h("span", {}, names(s.seat)), h("br"),
        h("span.meta", {}, [s.in_jail ? "in jail · " : "", view.seats[s.seat]?.bot ? "bot · " : "",
          s.team !== null && s.team !== undefined ? `team ${s.team + 1} · ` : "", `worth ${money(worth)}`].join(""))),
      h("span.cash", { "aria-label": `cash ${s.cash}` }, money(s.cash)));
  }));

  // dice and card
  const dice = $("#dice");
  dice.replaceChildren(...(state.dice || []).map((d) => h("span.die", {}, d)));
  if (state.third) dice.append(h("span.die.third", {}, state.third));
  const card = $("#card-drawn");
  card.hidden = !t.card;
  card.textContent = t.card ? `Event card: “${t.card}”` : "";

  renderDecision(state, me);
  renderOffers(state, me);
  $("#resign").disabled = !can(C.RESIGN);
  $("#open-trade").disabled = me === null || state.finished;
  $("#open-manage").disabled = me === null;
  if (state.finished && !t.endShown) {
    t.endShown = true;
    showEnd(state);
  }
  tick();
}

function renderDecision(state, me) {
  const turn = $("#turn");
  const box = $("#decision");
  const p = state.pending;
  const parts = [];
  if (state.finished) {
    turn.textContent = state.winner === null ? "Game over" : `${names(state.winner)} wins!`;
    box.replaceChildren(h("button.primary", { onclick: () => showEnd(state) }, "Results"));
    return;
  }
  const mine = p && p.seat === me;
  const who = p ? names(p.seat) : names(state.current_seat);
  turn.textContent = mine ? "Your move" : `${who} to play · round ${state.round}`;
  if (me === null) turn.append(" ", h("span.spectating", {}, "spectating"));
  if (!p) {
    box.replaceChildren();
    return;
  }
  const sq = p.square !== undefined ? app.board[p.square] : null;
  switch (p.kind) {
    case K.ROLL:
      parts.push(h("p.prompt", {}, mine ? (state.seats[me].in_jail ? "You are in jail: roll for doubles or pay bail." : "Manage your properties, then roll.") : `Waiting for ${who} to roll.`));
      if (mine) parts.push(h("div.actions", {},
        can(C.ROLL) ? cmdButton("Roll the dice", { type: C.ROLL }, ".primary") : null,
        can(C.PAY_BAIL) ? cmdButton("Pay bail", { type: C.PAY_BAIL }) : null));
      break;
    case K.BUY:
      parts.push(h("p.prompt", {}, mine ? `Buy ${sq.name} for ${money(sq.price)}?` : `${who} is deciding on ${sq.name}.`));
      if (mine) parts.push(h("div.actions", {},
        can(C.BUY) ? cmdButton(`Buy for ${money(sq.price)}`, { type: C.BUY }, ".primary") : null,
        can(C.DECLINE) ? cmdButton("Decline (auction)", { type: C.DECLINE }) : null));
      break;
    case K.AUCTION: {
      const lead = p.leader === null ? "no bids yet" : `${money(p.bid)} by ${names(p.leader)}`;
      parts.push(h("p.prompt", {}, `Auction: ${sq.name} · ${lead}`));
      if (mine) parts.push(h("div.actions", {},
        can(C.BID) ? cmdButton(`Bid ${money(p.minimum)}`, { type: C.BID }, ".primary") : null,
        can(C.PASS) ? cmdButton("Pass", { type: C.PASS }) : null));
      else parts.push(h("p.muted", {}, `${who} bids next.`));
      break;
    }
    case K.PAYMENT: {
      const reason = String(p.reason || "").replaceAll("_", " ");
      parts.push(h("p.prompt", {}, mine ? `You owe ${money(p.amount)} (${reason}).` : `${who} owes ${money(p.amount)} (${reason}).`));
      if (mine) {
        const short = state.seats[me].cash < p.amount;
        if (short) parts.push(h("p.muted", {}, "Raise funds: sell buildings, mortgage or trade (My properties), then pay."));
        parts.push(h("div.actions", {},
          can(C.PAY) ? cmdButton(`Pay ${money(p.amount)}`, { type: C.PAY }, ".primary") : null,
          h("button", { type: "button", onclick: openManage }, "Raise funds"),
          can(C.BANKRUPT) ? cmdButton("Declare bankruptcy", { type: C.BANKRUPT }, ".danger") : null));
      }
      break;
    }
    case K.JACKPOT:
      parts.push(h("p.prompt", {}, mine ? "Jackpot! Pick 1 to 3 numbers and bet the stake, or skip." : `${who} is at the Jackpot.`));
      if (mine) {
        const pick = app.jackpotPick;
        const nums = h("div.numbers", { role: "group", "aria-label": "Jackpot numbers" });
        for (let n = 1; n <= 6; n++) {
          nums.append(h("button", { type: "button", "aria-pressed": pick.has(n) ? "true" : "false", dataset: { number: n },
            onclick: () => { pick.has(n) ? pick.delete(n) : pick.size < 3 && pick.add(n); renderTable(); } }, n));
        }
        const mode = app.modes[state.mode] || {};
        parts.push(nums, h("div.actions", {},
          h("button.primary", { type: "button", dataset: { cmd: C.JACKPOT }, disabled: pick.size < 1 || !can(C.JACKPOT),
            onclick: () => { const numbers = [...pick].sort(); pick.clear(); act({ type: C.JACKPOT, numbers }); } },
          `Bet ${money(mode.jackpot_stake || 1000)}`),
          can(C.JACKPOT_DECLINE) ? cmdButton("No thanks", { type: C.JACKPOT_DECLINE }) : null));
      }
      break;
    case K.BUS: {
      parts.push(h("p.prompt", {}, mine ? "Bus! Choose how far to move." : `${who} is choosing a Bus move.`));
      const [a, b] = state.dice || [0, 0];
      const steps = { sum: a + b, first: a, second: b };
      if (mine) parts.push(h("div.actions", {}, legalOf(C.BUS).map((c) =>
        cmdButton(`${c.move === "sum" ? "Both dice" : c.move === "first" ? "First die" : "Second die"}: ${steps[c.move]}`, c))));
      break;
    }
    case K.TELEPORT:
      parts.push(h("p.prompt", {}, mine ? "Triples! Pick any square on the board to teleport to." : `${who} is choosing where to teleport.`));
      if (mine) {
        const select = h("select", { id: "teleport-to", "aria-label": "Teleport to" },
          legalOf(C.TELEPORT).map((c) => h("option", { value: c.square }, `${c.square} · ${squareName(c.square)}`)));
        parts.push(h("div.actions", {}, select,
          h("button.primary", { type: "button", dataset: { cmd: C.TELEPORT }, onclick: () => act({ type: C.TELEPORT, square: Number(select.value) }) }, "Teleport")));
      }
      break;
    default:
      parts.push(h("p.prompt", {}, `${who}: ${p.kind}`));
  }
  box.replaceChildren(...parts);
  const primary = box.querySelector("button.primary");
  const key = `${app.table.view.seq}:${p.kind}`;
  if (mine && primary && app.focusedFor !== key && !document.querySelector("dialog[open]")) {
    app.focusedFor = key;
    const active = document.activeElement;
    if (!active || active === document.body) primary.focus({ preventScroll: true });
  }
}

function renderOffers(state, me) {
  const offers = state.offers || [];
  $("#offers-card").hidden = !offers.length;
  $("#offers").replaceChildren(...offers.map((o) => {
    const side = (cash, squares) => [cash ? money(cash) : null, ...squares.map(squareName)].filter(Boolean).join(", ") || "nothing";
    const li = h("li", { dataset: { offer: o.id } },
      h("div", {}, h("strong", {}, `${names(o.from)} → ${names(o.to)}`)),
      h("div", {}, `gives ${side(o.give_cash, o.give_squares)}`),
      h("div", {}, `wants ${side(o.take_cash, o.take_squares)}`),
      h("div.muted", { dataset: { deadline: o.deadline } }, ""));
    const actions = h("div.actions");
    for (const [type, label] of [[C.ACCEPT, "Accept"], [C.REJECT, "Reject"], [C.CANCEL, "Cancel"]]) {
      const c = legalOf(type).find((x) => x.offer === o.id);
      if (c) actions.append(cmdButton(label, c, type === C.ACCEPT ? ".primary" : ""));
    }
    if (actions.children.length) li.append(actions);
    return li;
  }));
}

function netWorth(state, seat) {
  let worth = state.seats[seat].cash;
  for (const p of state.squares) {
    if (p.owner !== seat) continue;
    const sq = app.board[p.square];
    worth += p.mortgaged ? Math.floor(sq.price / 2) : sq.price;
    worth += p.buildings * sq.building_cost;
  }
  return worth;
}

function pickSquare(square) {
  if (!app.table?.view) return;
  if (can(C.TELEPORT, square)) {
    act({ type: C.TELEPORT, square });
    return;
  }
  const sq = app.board[square];
  const state = app.table.view.state;
  const prop = state.squares.find((p) => p.square === square);
  $("#prop-title").textContent = sq.name;
  const rows = [h("p.muted", {}, sq.group ? `${sq.group.replace("-", " ")} · ${sq.kind}` : sq.kind)];
  if (sq.price) rows.push(h("p", {}, `Price ${money(sq.price)} · mortgage value ${money(Math.floor(sq.price / 2))}`));
  if (sq.rents.length) rows.push(h("p", {}, `Rent ${sq.rents.map(money).join(" / ")} · building ${money(sq.building_cost)}`));
  if (sq.tax) rows.push(h("p", {}, `Tax ${money(sq.tax)}`));
  if (prop) {
    rows.push(h("p", {}, prop.owner === null ? "Owned by the bank" : `Owned by ${names(prop.owner)}`,
      prop.buildings ? ` · ${prop.buildings} building(s)` : "", prop.mortgaged ? " · mortgaged" : ""));
    rows.push(propActions(square));
  }
  $("#prop-body").replaceChildren(...rows);
  $("#property-dialog").showModal();
}

function propActions(square) {
  const labels = { [C.BUILD]: "Build", [C.SELL]: "Sell building", [C.MORTGAGE]: "Mortgage", [C.UNMORTGAGE]: "Lift mortgage" };
  return h("div.actions", {}, Object.entries(labels).map(([type, label]) =>
    h("button", { type: "button", dataset: { cmd: type, square }, disabled: !can(type, square),
      onclick: async () => { await act({ type, square }); } }, label)));
}

function openManage() {
  const t = app.table;
  if (!t?.view || t.seat === null) return;
  const state = t.view.state;
  const mine = state.squares.filter((p) => p.owner === t.seat);
  const body = $("#manage-body");
  body.replaceChildren(...(mine.length ? mine.map((p) => {
    const sq = app.board[p.square];
    return h("div.prop-row", {},
      h("span", {}, h(`span.swatch.g-${sq.group}`), sq.name,
        p.buildings ? ` · ${p.buildings} bld` : "", p.mortgaged ? " · mortgaged" : ""),
      propActions(p.square));
  }) : [h("p.muted", {}, "You own no properties yet.")]));
  const dialog = $("#manage-dialog");
  if (!dialog.open) dialog.showModal();
}

function showEnd(state) {
  const list = h("ol.placement", {}, state.placement.map((seat) =>
    h("li", {}, h(`span.swatch.c${seat}`), names(seat), ` · worth ${money(netWorth(state, seat))}`,
      state.seats[seat].out ? " · out" : "")));
  $("#end-title").textContent = state.winner === null ? "Game over" : `${names(state.winner)} wins!`;
  $("#end-body").replaceChildren(h("p", {}, `Finished in round ${state.round}.`), list);
  const dialog = $("#end-dialog");
  if (!dialog.open) dialog.showModal();
}

// ---------------------------------------------------------------- countdowns
function wall(gameSeconds) {
  const t = app.table;
  return t.offset === null || t.offset === undefined ? null : gameSeconds + t.offset;
}

function tick() {
  const t = app.table;
  const el = $("#countdown");
  if (!t?.view) return;
  const state = t.view.state;
  const now = Date.now() / 1000 + (t.skew || 0);
  const p = state.pending;
  const end = p && !state.finished ? wall(p.deadline) : null;
  el.hidden = end === null;
  if (end !== null) {
    const left = Math.max(0, end - now);
    const mode = app.modes[state.mode];
    const total = p.kind === K.AUCTION ? mode.auction_bid_seconds : mode.turn_seconds;
    el.querySelector(".bar").style.width = `${Math.min(100, (left / total) * 100)}%`;
    el.querySelector(".secs").textContent = `${Math.ceil(left)} s`;
    el.classList.toggle("low", left < 10);
    el.setAttribute("aria-label", `${Math.ceil(left)} seconds left`);
  }
  for (const node of document.querySelectorAll("#offers [data-deadline]")) {
    const at = wall(Number(node.dataset.deadline));
    node.textContent = at === null ? "" : `expires in ${Math.max(0, Math.ceil(at - now))} s`;
  }
}

// ---------------------------------------------------------------- pushes
function onPush(push) {
  switch (push.type) {
    case P.LOBBY_EVENT: onLobbyEvent(push.event); break;
    case P.LOBBY_ROOMS: onRooms(push); break;
    case P.TABLE_UPDATE: onUpdate(push); break;
    case P.TABLE_EVENTS: onEvents(push); break;
    case P.TABLE_STATE: onState(push); break;
    default: break; // chat.message: no chat panel yet
  }
}

// ---------------------------------------------------------------- start
async function main() {
  $("#signin-form").addEventListener("submit", onSignIn);
  $("#create-form").addEventListener("submit", onCreate);
  $("#join-code-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const [room, code] = $("#join-code").value.trim().split("/");
    if (room) joinRoom(room, code);
  });
  $("#refresh-rooms").addEventListener("click", refreshRooms);
  $("#sign-out").addEventListener("click", signOut);
  $("#open-manage").addEventListener("click", openManage);
  $("#open-trade").addEventListener("click", () => {
    const t = app.table;
    if (!t?.view || t.seat === null) return;
    openTradeDialog({
      state: t.view.state, board: app.board, me: t.seat, names,
      pct: app.modes[t.view.state.mode]?.fairness_pct ?? 50, send: act,
    });
  });
  $("#resign").addEventListener("click", () => {
    if (window.confirm("Resign from this game? Your properties go back to the bank.")) act({ type: C.RESIGN });
  });
  $("#leave-table").addEventListener("click", leaveTable);
  $("#end-lobby").addEventListener("click", leaveTable);
  $("#create-mode").addEventListener("change", () => {
    const allowed = app.modes[$("#create-mode").value].allowed_seats;
    const seats = $("#create-seats");
    seats.replaceChildren(...allowed.map((n) => h("option", { value: n, selected: n === 4 }, n)));
  });
  setInterval(tick, 250);
  app.board = Object.fromEntries(SQUARES.map((s) => [s.square, s]));
  app.modes = MODES;
  const modeSelect = $("#create-mode");
  modeSelect.replaceChildren(...Object.keys(MODES).map((name) => h("option", { value: name }, modeName(name))));
  modeSelect.dispatchEvent(new Event("change"));
  const saved = loadSession();
  if (saved) {
    saveSession(saved);
    connect();
  } else {
    show("signin");
    $("#signin-name").focus();
  }
}

// exported for tests of the fairness rule in the browser
window.opolyx = { fairness, sideValue, app };
main();
