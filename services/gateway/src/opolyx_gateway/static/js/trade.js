// Trade offers: the dialog, and the fairness rule of RULES.md R10 shown before sending.

import { COMMAND_TYPES } from "./constants.js";
import { $, h, money } from "./dom.js";
import { t } from "./i18n.js";

// value(side) = cash + price of each unmortgaged property + half price of each mortgaged one.
export function sideValue(cash, squares, state, board) {
  let value = Number(cash) || 0;
  for (const square of squares) {
    const prop = state.squares.find((p) => p.square === square);
    const price = board[square].price;
    value += prop && prop.mortgaged ? Math.floor(price / 2) : price;
  }
  return value;
}

export function fairness(give, take, pct, allies) {
  if (allies) return { ok: true, text: t("ui.trade.allies") };
  if (give === 0 && take === 0) return { ok: false, text: t("ui.trade.empty") };
  const small = Math.min(give, take);
  const large = Math.max(give, take);
  const share = large === 0 ? 100 : Math.floor((small * 100) / large);
  const ok = small * 100 >= large * pct;
  return {
    ok,
    text: t(ok ? "ui.trade.fair" : "ui.trade.unfair", { give: money(give), take: money(take), share, pct }),
  };
}

// A property can be traded when no street of its group has buildings (R10).
export function tradeable(state, board, seat) {
  const built = new Set();
  for (const p of state.squares) if (p.buildings > 0) built.add(board[p.square].group);
  return state.squares.filter((p) => p.owner === seat && !built.has(board[p.square].group)).map((p) => p.square);
}

export function openTradeDialog({ state, board, me, names, squareName, pct, send }) {
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
    for (const square of tradeable(state, board, seat)) {
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
  const update = () => {
    const offer = collect();
    const mine = state.seats[me];
    const theirs = state.seats[offer.to];
    const allies = mine.team !== null && mine.team !== undefined && mine.team === theirs.team;
    const verdict = fairness(
      sideValue(offer.give_cash, offer.give_squares, state, board),
      sideValue(offer.take_cash, offer.take_squares, state, board), pct, allies);
    const el = $("#trade-fairness");
    el.textContent = verdict.text;
    el.classList.toggle("bad", !verdict.ok);
    $("#trade-send").disabled = !verdict.ok;
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
