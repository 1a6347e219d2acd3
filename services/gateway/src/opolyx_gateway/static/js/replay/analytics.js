// The analytics view: computed by the gateway with the rules library (analytics.py), drawn
// here: the landing heatmap on the board, net worth over rounds, rent, trades, auctions and
// the highlights of the game.

import { Board } from "../board.js";
import { $, h, money } from "../dom.js";
import { t } from "../i18n.js";
import { seatName, squareLabel, squareName } from "../names.js";
import { store } from "../store.js";

const SVG = "http://www.w3.org/2000/svg";
const CHART_W = 600;
const CHART_H = 260;
let heatBoard = null;

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

function row(cells, header = false) {
  return h("tr", {}, ...cells.map((c) => h(header ? "th" : "td", {}, c)));
}

function squares(list, mode) {
  return list.map((sq) => squareName(sq, mode)).join(", ");
}

function side(cash, list, mode) {
  const parts = [];
  if (cash) parts.push(money(cash));
  if (list.length) parts.push(squares(list, mode));
  return parts.join(" + ") || "—";
}

function renderHeatmap(a, mode, state) {
  if (!heatBoard) heatBoard = new Board($("#rp-heat"), Object.values(store.board), () => {});
  heatBoard.render(state, {
    names: seatName, targets: new Set(), squareName: (sq) => squareName(sq, mode), squareLabel: (sq) => squareLabel(sq, mode),
  });
  const most = Math.max(1, ...a.landings);
  a.landings.forEach((count, square) => {
    const cell = $("#rp-heat").querySelector(`[data-square="${square}"]`);
    if (!cell) return;
    // CSSOM, not a style attribute: the page's policy allows no inline styles.
    cell.style.setProperty("--heat", (count / most).toFixed(3));
    cell.dataset.landings = String(count);
    const label = t("replay.analytics.heat_cell", { square: squareName(square, mode), count });
    cell.setAttribute("aria-label", label);
    cell.title = label;
  });
}

function renderWorth(a) {
  const rounds = a.rounds;
  const most = Math.max(1, ...a.net_worth.flat());
  const x = (i) => (rounds.length > 1 ? (i / (rounds.length - 1)) * (CHART_W - 40) + 36 : 36);
  const y = (v) => CHART_H - 20 - (v / most) * (CHART_H - 30);
  const lines = a.net_worth.map((series, seat) => svg("polyline", {
    class: `line s${seat}`, fill: "none", "stroke-width": 2,
    points: series.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
  }));
  const axis = [
    svg("line", { x1: 36, y1: CHART_H - 20, x2: CHART_W - 4, y2: CHART_H - 20, class: "axis" }),
    svg("line", { x1: 36, y1: 10, x2: 36, y2: CHART_H - 20, class: "axis" }),
    svg("text", { x: 34, y: 16, "text-anchor": "end", class: "tick" }, money(most)),
    svg("text", { x: 34, y: CHART_H - 22, "text-anchor": "end", class: "tick" }, "0"),
    svg("text", { x: CHART_W - 4, y: CHART_H - 4, "text-anchor": "end", class: "tick" },
      t("replay.rounds", { rounds: rounds[rounds.length - 1] })),
  ];
  const chart = svg("svg", {
    viewBox: `0 0 ${CHART_W} ${CHART_H}`, role: "img", "aria-label": t("replay.analytics.net_worth"),
  }, ...axis, ...lines);
  $("#rp-worth").replaceChildren(chart);
  $("#rp-worth-legend").replaceChildren(...a.net_worth.map((series, seat) => h("li", {},
    h(`span.swatch.c${seat}`, { "aria-hidden": "true" }), seatName(seat), " ",
    h("span.muted", {}, t("replay.analytics.final_worth", { amount: money(series[series.length - 1]) })))));
}

function renderRent(a, mode) {
  const r = a.rent;
  $("#rp-rent").replaceChildren(
    row([t("replay.analytics.player"), t("replay.analytics.paid"), t("replay.analytics.received")], true),
    ...r.paid.map((paid, seat) => row([seatName(seat), money(paid), money(r.received[seat])])));
  const bySquare = Object.entries(r.by_square).map(([sq, amount]) => [Number(sq), amount])
    .sort((p, q) => q[1] - p[1]);
  $("#rp-rent-squares").replaceChildren(
    row([t("replay.analytics.property"), t("replay.analytics.collected")], true),
    ...(bySquare.length ? bySquare.map(([sq, amount]) => row([squareName(sq, mode), money(amount)]))
      : [row([t("replay.analytics.none"), ""])]));
}

function renderTrades(a, mode) {
  const table = $("#rp-trades");
  if (!a.trades.length) {
    table.replaceChildren(row([t("replay.analytics.no_trades")]));
    return;
  }
  table.replaceChildren(
    row([t("replay.analytics.round"), t("replay.analytics.from"), t("replay.analytics.gave"),
      t("replay.analytics.to"), t("replay.analytics.got"), t("replay.analytics.values")], true),
    ...a.trades.map((tr) => row([
      String(tr.round), seatName(tr.frm), side(tr.give_cash, tr.give_squares, mode), seatName(tr.to),
      side(tr.take_cash, tr.take_squares, mode),
      t("replay.analytics.value_pair", { give: money(tr.give_value), take: money(tr.take_value) }),
    ])));
}

function renderAuctions(a, mode) {
  const table = $("#rp-auctions");
  if (!a.auctions.length) {
    table.replaceChildren(row([t("replay.analytics.no_auctions")]));
    return;
  }
  table.replaceChildren(
    row([t("replay.analytics.round"), t("replay.analytics.property"), t("replay.analytics.winner"),
      t("replay.analytics.price"), t("replay.analytics.list_price")], true),
    ...a.auctions.map((au) => row([
      String(au.round), squareName(au.square, mode), seatName(au.winner), money(au.price), money(au.list_price),
    ])));
}

function renderHighlights(a, mode) {
  const hl = a.highlights;
  const items = [];
  items.push(hl.largest_rent
    ? t("replay.analytics.largest_rent", {
      payer: seatName(hl.largest_rent.payer), owner: seatName(hl.largest_rent.owner),
      amount: money(hl.largest_rent.amount), square: squareName(hl.largest_rent.square, mode), round: hl.largest_rent.round,
    })
    : t("replay.analytics.no_rent"));
  items.push(hl.longest_jail
    ? t("replay.analytics.longest_jail", { name: seatName(hl.longest_jail.seat), turns: hl.longest_jail.turns, round: hl.longest_jail.round })
    : t("replay.analytics.no_jail"));
  items.push(hl.luckiest_jackpot
    ? t("replay.analytics.luckiest_jackpot", { name: seatName(hl.luckiest_jackpot.seat), amount: money(hl.luckiest_jackpot.amount), round: hl.luckiest_jackpot.round })
    : t("replay.analytics.no_jackpot"));
  $("#rp-highlights").replaceChildren(...items.map((text) => h("li", {}, text)));
}

export function renderAnalytics(page) {
  if (!page.summary || !page.timeline) return;
  const a = page.summary.analytics;
  const mode = page.summary.mode;
  const final = page.timeline.lastState();
  if (final.seats) renderHeatmap(a, mode, final);
  renderWorth(a);
  renderRent(a, mode);
  renderTrades(a, mode);
  renderAuctions(a, mode);
  renderHighlights(a, mode);
}
