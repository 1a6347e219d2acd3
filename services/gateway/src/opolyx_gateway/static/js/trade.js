// Trade offers: the dialog, and the verdict of the fairness rule (RULES.md R10) before
// sending. The verdict and both sides' values are the table's: every change of the draft
// asks it (`table.trade_preview`, answered by the rules' own guard), so this page computes
// no rule of its own; a property of a built group is listed and the table says no.

import { COMMAND_TYPES, RULES_ERRORS } from "./constants.js";
import { $, h, money } from "./dom.js";
import { errorText } from "./actions.js";
import { t } from "./i18n.js";
import { store } from "./store.js";

const PREVIEW_DELAY_MS = 120; // typing a sum asks once, not once a keystroke

// The squares a seat holds, in board order.
function holdings(state, seat) {
  return state.squares.filter((p) => p.owner === seat).map((p) => p.square);
}

// The dialog's text for the table's verdict (a TradePreviewResult).
export function verdictText(preview) {
  if (preview.allies) return t("ui.trade.allies");
  if (preview.give_value === 0 && preview.take_value === 0) return t("ui.trade.empty");
  const figures = {
    give: money(preview.give_value), take: money(preview.take_value),
    share: preview.share_pct, pct: preview.fairness_pct,
  };
  if (preview.allowed) return t("ui.trade.fair", figures);
  if (preview.refusal && preview.refusal.code === RULES_ERRORS.TRADE_UNFAIR) return t("ui.trade.unfair", figures);
  return t("app.trade.refused", { reason: errorText(preview.refusal || {}) });
}

export function openTradeDialog({ state, board, me, names, squareName, send }) {
  const dialog = $("#trade-dialog");
  const others = state.seats.filter((s) => !s.out && s.seat !== me);
  if (!others.length) return;
  const body = $("#trade-body");
  const select = h("select", { id: "trade-to" },
    others.map((s) => h("option", { value: s.seat }, names(s.seat))));
  const giveCash = h("input", { id: "trade-give-cash", type: "number", min: 0, step: 100, value: 0, inputmode: "numeric" });
  const takeCash = h("input", { id: "trade-take-cash", type: "number", min: 0, step: 100, value: 0, inputmode: "numeric" });
  const giveBox = h("fieldset", {}, h("legend", {}, t("ui.trade.you_give")));
  const takeBox = h("fieldset", {}, h("legend", {}, t("ui.trade.you_get")));
  const fill = (box, seat, cashInput) => {
    box.replaceChildren(box.firstChild, h("label", {}, t("ui.trade.cash"), cashInput));
    for (const square of holdings(state, seat)) {
      const sq = board[square];
      const prop = state.squares.find((p) => p.square === square);
      box.append(h("label.check", {},
        h("input", { type: "checkbox", value: square, dataset: { side: box === giveBox ? "give" : "take" } }),
        h(`span.swatch.g-${sq.group}`), t(prop.mortgaged ? "ui.trade.item_mortgaged" : "ui.trade.item", { square: squareName(square), price: money(sq.price) })));
    }
  };
  fill(giveBox, me, giveCash);
  const refill = () => fill(takeBox, Number(select.value), takeCash);
  refill();
  body.replaceChildren(h("label", {}, t("ui.trade.with"), select), h("div.trade-cols", {}, giveBox, takeBox));

  const collect = () => {
    const picked = (side) => [...body.querySelectorAll(`input[data-side=${side}]:checked`)].map((i) => Number(i.value));
    return {
      to: Number(select.value),
      give_cash: Math.max(0, Math.floor(Number(giveCash.value) || 0)),
      give_squares: picked("give"),
      take_cash: Math.max(0, Math.floor(Number(takeCash.value) || 0)),
      take_squares: picked("take"),
    };
  };
  const el = $("#trade-fairness");
  let asked = 0; // the newest question; older answers are dropped
  let timer = null;
  const show = (text, ok) => {
    el.textContent = text;
    el.classList.toggle("bad", !ok);
    $("#trade-send").disabled = !ok;
  };
  const ask = async () => {
    const question = ++asked;
    const table = store.table;
    if (!table) return;
    try {
      const preview = await store.conn.request("table.trade_preview", { table: table.id, ...collect() });
      if (question === asked) show(verdictText(preview), preview.allowed);
    } catch (err) {
      if (question === asked) show(t("app.trade.unavailable", { reason: errorText(err) }), false);
    }
  };
  const update = () => {
    $("#trade-send").disabled = true;
    el.classList.remove("bad");
    el.textContent = t("app.trade.checking");
    clearTimeout(timer);
    timer = setTimeout(ask, PREVIEW_DELAY_MS);
  };
  select.onchange = () => { refill(); update(); };
  body.oninput = update;
  update();
  dialog.onclose = () => {
    if (dialog.returnValue === "send") send({ type: COMMAND_TYPES.OFFER, ...collect() });
  };
  dialog.returnValue = "";
  dialog.showModal();
}
