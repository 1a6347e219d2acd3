// The 40-square board: layout on an 11x11 grid, squares with owners, buildings,
// mortgages and pawns.

import { h } from "./dom.js";

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

const SHORT = { start: "START", jail: "JAIL", jackpot: "JACKPOT", go_to_jail: "GO TO JAIL", event: "Event ✦" };

export class Board {
  constructor(root, squares, onPick) {
    this.root = root;
    this.squares = squares;
    this.cells = [];
    root.replaceChildren();
    for (const sq of squares) {
      const [row, col] = cellOf(sq.square);
      const side = sideOf(sq.square);
      const label = `${sq.name}${sq.price ? `, price ${sq.price}` : ""}`;
      const cell = h(`button.sq.side-${side}${side === "corner" ? ".corner" : ""}`, {
        type: "button", "aria-label": label, dataset: { square: sq.square },
        style: `grid-row:${row};grid-column:${col}`,
        onclick: () => onPick(sq.square),
      });
      if (sq.group && side !== "corner") cell.append(h(`span.band.g-${sq.group}`));
      const body = h("span.body", {}, h("span.nm", {}, SHORT[sq.kind] || sq.name));
      if (sq.price) body.append(h("span.pr", {}, sq.price));
      else if (sq.tax) body.append(h("span.pr", {}, `−${sq.tax}`));
      cell.append(body, h("span.bld"), h("span.pawns"));
      root.append(cell);
      this.cells[sq.square] = cell;
    }
  }

  render(state, names, targets = new Set()) {
    const owned = new Map(state.squares.map((p) => [p.square, p]));
    const current = state.seats[state.current_seat];
    for (const sq of this.squares) {
      const cell = this.cells[sq.square];
      const prop = owned.get(sq.square);
      cell.classList.toggle("mortgaged", Boolean(prop && prop.mortgaged));
      cell.classList.toggle("current", Boolean(current && current.position === sq.square && !state.finished));
      cell.classList.toggle("target", targets.has(sq.square));
      cell.querySelector(".owner")?.remove();
      let label = sq.name;
      if (prop && prop.owner !== null) {
        cell.append(h(`span.owner.c${prop.owner}`));
        label += `, owned by ${names(prop.owner)}`;
      } else if (sq.price) {
        label += `, for sale at ${sq.price}`;
      }
      const bld = cell.querySelector(".bld");
      bld.replaceChildren();
      if (prop && prop.buildings) {
        if (prop.buildings >= 5) bld.append(h("i.hotel", { title: "5 buildings" }));
        else for (let i = 0; i < prop.buildings; i++) bld.append(h("i"));
        label += `, ${prop.buildings} building${prop.buildings > 1 ? "s" : ""}`;
      }
      if (prop && prop.mortgaged) label += ", mortgaged";
      const pawns = cell.querySelector(".pawns");
      pawns.replaceChildren();
      for (const seat of state.seats) {
        if (seat.out || seat.position !== sq.square) continue;
        pawns.append(h(`span.pawn.c${seat.seat}`, { title: names(seat.seat) + (seat.in_jail ? " (in jail)" : "") }));
        label += `, ${names(seat.seat)} is here`;
      }
      cell.setAttribute("aria-label", label);
    }
  }
}
