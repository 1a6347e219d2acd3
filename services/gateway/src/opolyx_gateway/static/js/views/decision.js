// The decision box in the board's centre: whose turn, and the pending decision's controls.

import { COMMAND_TYPES as C, DECISION_KINDS as K } from "../constants.js";
import { $, h, money, singleClick } from "../dom.js";
import { act } from "../actions.js";
import { t } from "../i18n.js";
import { seatName, squareName, winnerText } from "../names.js";
import { can, legalOf, store } from "../store.js";
import { openManage, showEnd } from "./dialogs.js";

let rerender = () => {};
let focusedFor = null;

// A decision's button: a double click sends its command once (singleClick says why).
export function cmdButton(label, command, cls = "") {
  const onclick = singleClick(() => act(command));
  return h(`button${cls}`, { type: "button", dataset: { cmd: command.type }, onclick }, label);
}

// How a payment's reason reads ("rent", "tax", ...), from the log's reason names.
function reasonText(reason) {
  const key = `log.reasons.${reason}`;
  const text = t(key);
  return text === key ? String(reason || "").replaceAll("_", " ") : text;
}

export function render(tb) {
  const state = tb.view.state;
  const me = tb.seat;
  const turn = $("#turn");
  const box = $("#decision");
  const p = state.pending;
  const parts = [];
  if (state.finished) {
    turn.textContent = winnerText(state);
    box.replaceChildren(h("button.primary", { onclick: () => showEnd(state) }, t("ui.end.results")));
    return;
  }
  const mine = p && p.seat === me;
  const who = p ? seatName(p.seat) : seatName(state.current_seat);
  turn.textContent = mine ? t("ui.turn.your_move") : t("ui.turn.to_play", { name: who, round: state.round });
  if (me === null || me === undefined) turn.append(" ", h("span.spectating", {}, t("ui.turn.spectating")));
  if (!p) {
    box.replaceChildren();
    return;
  }
  const sq = p.square !== undefined ? store.board[p.square] : null;
  const name = p.square !== undefined ? squareName(p.square) : "";
  switch (p.kind) {
    case K.ROLL:
      parts.push(h("p.prompt", {}, mine
        ? (state.seats[me].in_jail ? t("ui.decision.roll_jail") : t("ui.decision.roll_mine"))
        : t("ui.decision.roll_other", { name: who })));
      if (mine) parts.push(h("div.actions", {},
        can(C.ROLL) ? cmdButton(t("ui.decision.roll"), { type: C.ROLL }, ".primary") : null,
        can(C.PAY_BAIL) ? cmdButton(t("ui.decision.pay_bail"), { type: C.PAY_BAIL }) : null));
      break;
    case K.BUY:
      parts.push(h("p.prompt", {}, mine
        ? t("ui.decision.buy_mine", { square: name, price: money(sq.price) })
        : t("ui.decision.buy_other", { name: who, square: name })));
      if (mine) parts.push(h("div.actions", {},
        can(C.BUY) ? cmdButton(t("ui.decision.buy", { price: money(sq.price) }), { type: C.BUY }, ".primary") : null,
        can(C.DECLINE) ? cmdButton(t("ui.decision.decline"), { type: C.DECLINE }) : null));
      break;
    case K.AUCTION: {
      const lead = p.leader === null
        ? t("ui.decision.no_bids")
        : t("ui.decision.leading_bid", { amount: money(p.bid), name: seatName(p.leader) });
      parts.push(h("p.prompt", {}, t("ui.decision.auction", { square: name, lead })));
      if (mine) parts.push(h("div.actions", {},
        can(C.BID) ? cmdButton(t("ui.decision.bid", { amount: money(p.minimum) }), { type: C.BID }, ".primary") : null,
        can(C.PASS) ? cmdButton(t("ui.decision.pass"), { type: C.PASS }) : null));
      else parts.push(h("p.muted", {}, t("ui.decision.bids_next", { name: who })));
      break;
    }
    case K.PAYMENT: {
      const reason = reasonText(p.reason);
      parts.push(h("p.prompt", {}, mine
        ? t("ui.decision.owe_mine", { amount: money(p.amount), reason })
        : t("ui.decision.owe_other", { name: who, amount: money(p.amount), reason })));
      if (mine) {
        const short = state.seats[me].cash < p.amount;
        if (short) parts.push(h("p.muted", {}, t("ui.decision.raise_hint")));
        parts.push(h("div.actions", {},
          can(C.PAY) ? cmdButton(t("ui.decision.pay", { amount: money(p.amount) }), { type: C.PAY }, ".primary") : null,
          h("button", { type: "button", dataset: { action: "raise-funds" }, onclick: openManage }, t("ui.decision.raise_funds")),
          can(C.BANKRUPT) ? cmdButton(t("ui.decision.bankrupt"), { type: C.BANKRUPT }, ".danger") : null));
      }
      break;
    }
    case K.JACKPOT:
      parts.push(h("p.prompt", {}, mine ? t("ui.decision.jackpot_mine") : t("ui.decision.jackpot_other", { name: who })));
      if (mine) {
        const pick = store.jackpotPick;
        const nums = h("div.numbers", { role: "group", "aria-label": t("ui.decision.jackpot_numbers") });
        for (let n = 1; n <= 6; n++) {
          nums.append(h("button", {
            type: "button", "aria-pressed": pick.has(n) ? "true" : "false", dataset: { number: n },
            onclick: () => { if (pick.has(n)) pick.delete(n); else if (pick.size < 3) pick.add(n); rerender(); },
          }, n));
        }
        const mode = store.modes[state.mode] || {};
        parts.push(nums, h("div.actions", {},
          h("button.primary", {
            type: "button", dataset: { cmd: C.JACKPOT }, disabled: pick.size < 1 || !can(C.JACKPOT),
            onclick: singleClick(() => { const numbers = [...pick].sort(); pick.clear(); act({ type: C.JACKPOT, numbers }); }),
          }, t("ui.decision.jackpot_bet", { amount: money(mode.jackpot_stake || 1000) })),
          can(C.JACKPOT_DECLINE) ? cmdButton(t("ui.decision.jackpot_skip"), { type: C.JACKPOT_DECLINE }) : null));
      }
      break;
    case K.BUS: {
      parts.push(h("p.prompt", {}, mine ? t("ui.decision.bus_mine") : t("ui.decision.bus_other", { name: who })));
      const [a, b] = state.dice || [0, 0];
      const steps = { sum: a + b, first: a, second: b };
      if (mine) parts.push(h("div.actions", {}, legalOf(C.BUS).map((c) =>
        cmdButton(t(`ui.decision.bus_${c.move}`, { count: steps[c.move] }), c))));
      break;
    }
    case K.TELEPORT:
      parts.push(h("p.prompt", {}, mine ? t("ui.decision.teleport_mine") : t("ui.decision.teleport_other", { name: who })));
      if (mine) {
        const select = h("select", { id: "teleport-to", "aria-label": t("ui.decision.teleport_to") },
          legalOf(C.TELEPORT).map((c) => h("option", { value: c.square }, `${c.square} · ${squareName(c.square)}`)));
        parts.push(h("div.actions", {}, select,
          h("button.primary", {
            type: "button", dataset: { cmd: C.TELEPORT },
            onclick: singleClick(() => act({ type: C.TELEPORT, square: Number(select.value) })),
          }, t("ui.decision.teleport"))));
      }
      break;
    default:
      parts.push(h("p.prompt", {}, `${who}: ${p.kind}`));
  }
  box.replaceChildren(...parts);
  // the player's own decision gets the focus once, unless they are elsewhere on the page
  const primary = box.querySelector("button.primary");
  const key = `${tb.view.seq}:${p.kind}`;
  if (mine && primary && focusedFor !== key && !document.querySelector("dialog[open]")) {
    focusedFor = key;
    const active = document.activeElement;
    if (!active || active === document.body) primary.focus({ preventScroll: true });
  }
}

export function mount(renderTable) {
  rerender = renderTable;
}
