// The 40-square board: layout on an 11x11 grid, squares with owners, buildings,
// mortgages and pawns.

import { h, money } from "./dom.js";
import { t } from "./i18n.js";

// Grid cell (row, column) of each square: 0 is the bottom-right corner, play runs clockwise.
export function cellOf(square) {
  if (square <= 10) return [11, 11 - square];
  if (square <= 20) return [11 - (square - 10), 1];
  if (square <= 30) return [1, 1 + (square - 20)];
  return [1 + (square - 30), 11];
}

function sideOf(square) {
  if (square % 10 === 0) return "corner";
  if (square < 10) return "bottom";
  if (square < 20) return "left";
  if (square < 30) return "top";
  return "right";
}

export class Board {
  constructor(root, squares, onPick) {
    this.root = root;
    this.squares = squares;
    this.cells = [];
    root.replaceChildren();
    for (const sq of squares) {
      const [row, col] = cellOf(sq.square);
      const side = sideOf(sq.square);
      const cell = h(`button.sq.side-${side}${side === "corner" ? ".corner" : ""}`, {
        type: "button", dataset: { square: sq.square, kind: sq.kind },
        onclick: () => onPick(sq.square),
      });
      // placed through the CSSOM: no inline style attribute (the page's CSP forbids them)
      cell.style.gridRow = String(row);
      cell.style.gridColumn = String(col);
      if (sq.group && side !== "corner") cell.append(h(`span.band.g-${sq.group}`));
      const body = h("span.body", {}, h("span.nm"));
      if (sq.price) body.append(h("span.pr", {}, money(sq.price)));
      else if (sq.tax) body.append(h("span.pr", {}, `−${money(sq.tax)}`));
      cell.append(body, h("span.bld"), h("span.pawns"));
      root.append(cell);
      this.cells[sq.square] = cell;
    }
  }

  // The squares' labels in the current language (and mode).
  relabel(squareLabel) {
    for (const sq of this.squares) {
      const cell = this.cells[sq.square];
      cell.querySelector(".nm").textContent = squareLabel(sq.square);
      const pr = cell.querySelector(".pr");
      if (pr) pr.textContent = sq.price ? money(sq.price) : `−${money(sq.tax)}`;
    }
    this.labelled = true;
  }

  render(state, { names, targets, squareName, squareLabel }) {
    if (!this.labelled || this.mode !== state.mode) {
      this.mode = state.mode;
      this.relabel(squareLabel);
    }
    const owned = new Map(state.squares.map((p) => [p.square, p]));
    const current = state.seats[state.current_seat];
    for (const sq of this.squares) {
      const cell = this.cells[sq.square];
      const prop = owned.get(sq.square);
      cell.classList.toggle("mortgaged", Boolean(prop && prop.mortgaged));
      cell.classList.toggle("current", Boolean(current && current.position === sq.square && !state.finished));
      cell.classList.toggle("target", targets.has(sq.square));
      cell.querySelector(".owner")?.remove();
      const label = [squareName(sq.square)];
      if (prop && prop.owner !== null) {
        // the seat's number on a ringed badge: readable on any group colour
        cell.append(h(`span.owner.c${prop.owner}`, { "aria-hidden": "true" }, String(prop.owner + 1)));
        label.push(t("ui.board.owned_by", { name: names(prop.owner) }));
      } else if (sq.price) {
        label.push(t("ui.board.for_sale", { price: money(sq.price) }));
      }
      const bld = cell.querySelector(".bld");
      bld.replaceChildren();
      if (prop && prop.buildings) {
        if (prop.buildings >= 5) bld.append(h("i.hotel", { title: t("ui.board.hotel") }));
        else for (let i = 0; i < prop.buildings; i++) bld.append(h("i"));
        label.push(t("ui.property.buildings", { count: prop.buildings }));
      }
      if (prop && prop.mortgaged) label.push(t("ui.property.mortgaged"));
      const pawns = cell.querySelector(".pawns");
      pawns.replaceChildren();
      for (const seat of state.seats) {
        if (seat.out || seat.position !== sq.square) continue;
        const title = seat.in_jail ? t("ui.board.in_jail", { name: names(seat.seat) }) : names(seat.seat);
        pawns.append(h(`span.pawn.c${seat.seat}`, { title }));
        label.push(t("ui.board.is_here", { name: names(seat.seat) }));
      }
      cell.setAttribute("aria-label", label.join(", "));
    }
  }
}
