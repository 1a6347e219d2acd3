// Dialogs at the table: a square's card (with build/mortgage actions), "My properties" and
// the results. Open dialogs are re-rendered whenever the table changes, so what they offer
// follows each action.

import { COMMAND_TYPES as C } from "../constants.js";
import { $, h, money, singleClick } from "../dom.js";
import { act } from "../actions.js";
import { t } from "../i18n.js";
import { seatName, squareName, winnerText } from "../names.js";
import { can, store, worthOf } from "../store.js";

let propertyShown = null; // square whose card is open

function groupName(group) {
  const key = `ui.groups.${group}`;
  const text = t(key);
  return text === key ? String(group).replace("-", " ") : text;
}

function kindName(kind) {
  const key = `ui.kinds.${kind}`;
  const text = t(key);
  return text === key ? kind : text;
}

// A square's Build / Sell / Mortgage / Unmortgage. The open dialog is re-rendered with the
// state after each one, with the same button where it was: a double click on Build, its
// second click after the first one's reply, could build a second house (singleClick).
function propActions(square) {
  const labels = [[C.BUILD, "build"], [C.SELL, "sell"], [C.MORTGAGE, "mortgage"], [C.UNMORTGAGE, "unmortgage"]];
  return h("div.actions", {}, labels.map(([type, key]) =>
    h("button", {
      type: "button", dataset: { cmd: type, square }, disabled: !can(type, square),
      onclick: singleClick(() => act({ type, square })),
    }, t(`ui.property.${key}`))));
}

function renderProperty(square) {
  const sq = store.board[square];
  const state = store.table.view.state;
  const prop = state.squares.find((p) => p.square === square);
  $("#prop-title").textContent = squareName(square);
  const rows = [h("p.muted", {}, sq.group ? `${groupName(sq.group)} · ${kindName(sq.kind)}` : kindName(sq.kind))];
  if (sq.price) rows.push(h("p", {}, t("ui.property.price", { price: money(sq.price), mortgage: money(Math.floor(sq.price / 2)) })));
  if (sq.rents.length) rows.push(h("p", {}, t("ui.property.rents", { rents: sq.rents.map(money).join(" / "), cost: money(sq.building_cost) })));
  if (sq.tax) rows.push(h("p", {}, t("ui.property.tax", { amount: money(sq.tax) })));
  if (prop) {
    const facts = [prop.owner === null ? t("ui.property.bank_owned") : t("ui.property.owned_by", { name: seatName(prop.owner) })];
    if (prop.buildings) facts.push(t("ui.property.buildings", { count: prop.buildings }));
    if (prop.mortgaged) facts.push(t("ui.property.mortgaged"));
    rows.push(h("p", {}, facts.join(" · ")), propActions(square));
  }
  $("#prop-body").replaceChildren(...rows);
}

export function openProperty(square) {
  propertyShown = square;
  renderProperty(square);
  const dialog = $("#property-dialog");
  if (!dialog.open) dialog.showModal();
}

function renderManage() {
  const tb = store.table;
  const state = tb.view.state;
  const mine = state.squares.filter((p) => p.owner === tb.seat);
  $("#manage-body").replaceChildren(...(mine.length ? mine.map((p) => {
    const sq = store.board[p.square];
    const facts = [];
    if (p.buildings) facts.push(t("ui.property.buildings", { count: p.buildings }));
    if (p.mortgaged) facts.push(t("ui.property.mortgaged"));
    return h("div.prop-row", { dataset: { square: p.square } },
      h("span", {}, h(`span.swatch.g-${sq.group}`), squareName(p.square),
        facts.length ? ` · ${facts.join(" · ")}` : ""),
      propActions(p.square));
  }) : [h("p.muted", {}, t("ui.manage.none"))]));
}

export function openManage() {
  const tb = store.table;
  if (!tb?.view || tb.seat === null || tb.seat === undefined) return;
  renderManage();
  const dialog = $("#manage-dialog");
  if (!dialog.open) dialog.showModal();
}

// The finished game's replay page: its analytics and the fairness check of its dice.
function replayLinks() {
  const id = store.table?.id;
  if (!id) return "";
  const href = `/replay.html?table=${encodeURIComponent(id)}`;
  return h("p.end-replay", {}, h("a", { href: `${href}#analytics` }, t("replay.end.analytics")), " · ",
    h("a", { href: `${href}#verify` }, t("replay.end.verify")));
}

export function showEnd(state) {
  const list = h("ol.placement", {}, state.placement.map((seat) =>
    h("li", {}, h(`span.swatch.c${seat}`), seatName(seat), " · ",
      t("ui.players.worth", { amount: money(worthOf(state, seat)) }),
      state.seats[seat].out ? ` · ${t("ui.players.out")}` : "")));
  $("#end-title").textContent = winnerText(state);
  $("#end-body").replaceChildren(h("p", {}, t("ui.end.finished_round", { round: state.round })), list, replayLinks());
  const dialog = $("#end-dialog");
  if (!dialog.open) dialog.showModal();
}

// The table changed: open dialogs show the state after it.
export function refresh(tb) {
  if (!tb.view) return;
  if ($("#property-dialog").open && propertyShown !== null) renderProperty(propertyShown);
  if ($("#manage-dialog").open) renderManage();
  if ($("#end-dialog").open && tb.view.state.finished) showEnd(tb.view.state);
}

export function closeAll() {
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
}

export function mount() {
  $("#property-dialog").addEventListener("close", () => { propertyShown = null; });
}
