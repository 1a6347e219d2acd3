// The table: board, players, dice, the event card, whose turn, countdowns, the log, the tools.
// The decision box, offers and dialogs are views of their own (decision.js, offers.js,
// dialogs.js); this one calls them when the table changes.

import { Board } from "../board.js";
import { COMMAND_TYPES as C, DECISION_KINDS as K } from "../constants.js";
import { $, h, money } from "../dom.js";
import { act, fail, leaveTable } from "../actions.js";
import { onLanguage, t } from "../i18n.js";
import { describe, newestLines } from "../log.js";
import { cardText, seatName, squareLabel, squareName, winnerText } from "../names.js";
import { followsNow, setFollowing } from "../progression.js";
import { can, legalOf, on, store, wall, worthOf } from "../store.js";
import { openTradeDialog } from "../trade.js";
import * as decision from "./decision.js";
import * as dialogs from "./dialogs.js";
import * as offers from "./offers.js";

const LOG_LIMIT = 200;
let boardView = null;

function render() {
  const tb = store.table;
  if (!tb || !tb.view) return;
  const state = tb.view.state;
  const me = tb.seat;
  if (!boardView) boardView = new Board($("#board"), Object.values(store.board), pickSquare);
  const targets = new Set(legalOf(C.TELEPORT).map((c) => c.square));
  boardView.render(state, { names: seatName, targets, squareName, squareLabel });
  renderPlayers(tb);
  renderDice(state);
  renderCard(tb);
  renderOut(tb);
  decision.render(tb);
  offers.render(tb);
  dialogs.refresh(tb);
  const out = me !== null && me !== undefined && state.seats[me] && state.seats[me].out;
  $("#resign").disabled = !can(C.RESIGN);
  $("#open-trade").disabled = me === null || me === undefined || state.finished || out;
  $("#open-manage").disabled = me === null || me === undefined || out;
  if (state.finished && !tb.endShown) {
    tb.endShown = true;
    dialogs.showEnd(state);
  }
  renderLog(tb);
  tick();
}


function renderPlayers(tb) {
  const state = tb.view.state;
  $("#players").replaceChildren(...state.seats.map((s) => {
    const meta = [];
    if (s.in_jail) meta.push(t("ui.players.in_jail"));
    if (tb.view.seats[s.seat]?.bot) meta.push(t("ui.players.bot"));
    if (s.team !== null && s.team !== undefined) meta.push(t("ui.players.team", { number: s.team + 1 }));
    if (s.out) meta.push(t("ui.players.out"));
    meta.push(t("ui.players.worth", { amount: money(worthOf(state, s.seat)) }));
    return h(`li${s.seat === state.current_seat && !state.finished ? ".turn-now" : ""}${s.out ? ".out" : ""}`,
      { dataset: { seat: s.seat } },
      h(`span.dot.c${s.seat}`),
      h("span", {}, h("span", {}, seatName(s.seat)), " ",
        h("span.follow-slot", { dataset: { seat: s.seat } }, followButton(tb.view.seats[s.seat])),
        h("br"), h("span.meta", {}, meta.join(" · "))),
      h("span.cash", { "aria-label": t("ui.players.cash_label", { amount: money(s.cash) }) }, money(s.cash)));
  }));
}

// Follow (or stop following) another human player from their seat; none for oneself, for
// bots, signed out, or while whom the player follows is not known yet.
function followButton(info) {
  const me = store.session && store.session.player_id;
  if (!info || info.bot || !me || info.player_id === me) return null;
  const following = followsNow(info.player_id);
  if (following === null) return null;
  const name = info.name || info.player_id;
  return h("button.link.follow", {
    type: "button", dataset: { follow: info.player_id }, "aria-pressed": String(following),
    "aria-label": t(following ? "social.follows.unfollow_name" : "social.follows.follow_name", { name }),
    onclick: async (ev) => {
      ev.currentTarget.disabled = true;
      try {
        await setFollowing(info.player_id, !following); // "follows" draws the list again
      } catch (err) {
        fail(err);
        refreshFollowButtons();
      }
    },
  }, t(following ? "social.follows.followed" : "social.follows.follow"));
}

// The buttons only (a follow changes nothing else in the list, nor the autopilot's badges).
function refreshFollowButtons() {
  const tb = store.table;
  if (!tb || !tb.view) return;
  for (const slot of document.querySelectorAll("#players .follow-slot")) {
    const button = followButton(tb.view.seats[Number(slot.dataset.seat)]);
    slot.replaceChildren(...(button ? [button] : []));
  }
}

function renderDice(state) {
  const dice = $("#dice");
  dice.setAttribute("aria-label", t("ui.table.last_roll"));
  dice.replaceChildren(...(state.dice || []).map((d) => h("span.die", {}, d)));
  if (state.third) dice.append(h("span.die.third", {}, state.third));
}

// The event card drawn this turn, with who drew it; it goes at the next turn.
function renderCard(tb) {
  const card = $("#card-drawn");
  card.hidden = !tb.card;
  card.textContent = tb.card ? t("ui.table.card_banner", { name: seatName(tb.card.seat), text: cardText(tb.card) }) : "";
}

// A seated player who is out: a banner says so; the controls are off.
function renderOut(tb) {
  const banner = $("#out-banner");
  const me = tb.seat;
  const s = me !== null && me !== undefined ? tb.view.state.seats[me] : null;
  banner.hidden = !(s && s.out && !tb.view.state.finished);
  banner.textContent = banner.hidden ? "" : t("ui.table.you_are_out");
}

function renderLog(tb) {
  const ctx = { seatName, squareName, cardText, tableId: tb.id, partial: tb.partial, winnerText: () => winnerText(tb.view.state) };
  const lines = newestLines(describe(tb.events, ctx), LOG_LIMIT);
  $("#log").replaceChildren(...lines.reverse().map((line) =>
    h(`li${line.kind ? "." + line.kind : ""}`, {}, line.link
      ? [line.text, " ", h("a", { href: line.link.href }, line.link.text)] : line.text)));
}

function openTrade() {
  const tb = store.table;
  if (!tb?.view || tb.seat === null || tb.seat === undefined) return;
  openTradeDialog({
    state: tb.view.state, board: store.board, me: tb.seat, names: seatName, squareName,
    pct: store.modes[tb.view.state.mode]?.fairness_pct ?? 50, send: act,
  });
}

function pickSquare(square) {
  if (!store.table?.view) return;
  if (can(C.TELEPORT, square)) {
    act({ type: C.TELEPORT, square });
    return;
  }
  dialogs.openProperty(square);
}

// ---------------------------------------------------------------- countdowns
export function tick() {
  const tb = store.table;
  const el = $("#countdown");
  if (!tb?.view) return;
  const state = tb.view.state;
  const now = Date.now() / 1000 + (tb.skew || 0);
  const p = state.pending;
  const end = p && !state.finished ? wall(p.deadline) : null;
  el.hidden = end === null;
  if (end !== null) {
    const left = Math.max(0, end - now);
    const mode = store.modes[state.mode];
    const total = p.kind === K.AUCTION ? mode.auction_bid_seconds : mode.turn_seconds;
    const secs = Math.ceil(left);
    el.querySelector(".bar").style.width = `${Math.min(100, (left / total) * 100)}%`;
    el.querySelector(".secs").textContent = t("ui.table.seconds_short", { count: secs });
    el.classList.toggle("low", left < 10);
    el.setAttribute("aria-label", t("ui.table.seconds_left", { count: secs }));
  }
  for (const node of document.querySelectorAll("#offers [data-deadline]")) {
    const at = wall(Number(node.dataset.deadline));
    node.textContent = at === null ? "" : t("ui.offers.expires", { count: Math.max(0, Math.ceil(at - now)) });
  }
}

export function mount() {
  $("#open-manage").addEventListener("click", dialogs.openManage);
  $("#open-trade").addEventListener("click", openTrade);
  $("#resign").addEventListener("click", () => {
    if (window.confirm(t("ui.table.resign_confirm"))) act({ type: C.RESIGN });
  });
  $("#leave-table").addEventListener("click", leaveTable);
  $("#end-lobby").addEventListener("click", leaveTable);
  decision.mount(render);
  dialogs.mount();
  on("table", (tb) => { if (tb === store.table) render(); });
  on("follows", refreshFollowButtons);
  on("screen", (screen) => {
    if (screen !== "table") dialogs.closeAll();
  });
  onLanguage(() => {
    if (boardView) boardView.relabel(squareLabel);
    render();
  });
  setInterval(tick, 250);
}
