// Names as the player reads them: seats, squares (per mode and language), modes.

import { CARD_SQUARES, FORTUNA_NAMES, MODE_NAMES, SQUARE_KINDS as K } from "./constants.js";
import { has, t } from "./i18n.js";
import { store } from "./store.js";

export function seatName(seat, tb = store.table) {
  const info = tb && tb.view && tb.view.seats[seat];
  const me = store.session && store.session.player_id;
  if (info && info.player_id === me) return t("ui.names.you", { name: info.name || t("ui.names.you_alone") });
  return (info && info.name) || t("ui.names.seat", { number: seat + 1 });
}

// Fortuna has names of its own; a catalogue may name squares per mode ("board.<mode>.<i>")
// or for every mode ("board.all.<i>"); else the server's (English) name stands.
export function squareName(square, mode = store.table?.view?.state?.mode) {
  const sq = store.board[square];
  if (sq && sq.kind === K.JACKPOT && store.modes[mode] && !store.modes[mode].jackpot_enabled) return t("board.no_jackpot");
  for (const key of [`board.${mode}.${square}`, `board.all.${square}`]) if (has(key)) return t(key);
  const fortuna = mode === MODE_NAMES.FORTUNA ? FORTUNA_NAMES[String(square)] : null;
  if (fortuna) return fortuna;
  return sq ? sq.name : t("ui.names.square", { number: square });
}

// Squares shown by their kind on the board (corners, event squares) rather than their name.
const SHORT_KINDS = new Set([K.START, K.JAIL, K.JACKPOT, K.GO_TO_JAIL, K.EVENT]);

// The short label a square shows on the board: a mode's own name for it if the catalogue
// has one, the kind's label for corners and events, else the square's name. Where a mode
// has no Jackpot (Halal) its square 20 reads as a rest area.
export function squareLabel(square, mode = store.table?.view?.state?.mode) {
  if (has(`board.${mode}.${square}`)) return t(`board.${mode}.${square}`);
  const sq = store.board[square];
  if (!sq || !SHORT_KINDS.has(sq.kind)) return squareName(square, mode);
  if (sq.kind === K.JACKPOT && store.modes[mode] && !store.modes[mode].jackpot_enabled) return t("ui.board.rest");
  return t(`ui.board.${sq.kind}`);
}

export function modeName(mode) {
  const key = `ui.modes.${mode}`;
  return has(key) ? t(key) : mode.charAt(0).toUpperCase() + mode.slice(1);
}

// The winner as the game ends: a team game names the side, else the player.
export function winnerText(state) {
  if (state.winner === null || state.winner === undefined) return t("ui.end.game_over");
  const team = state.seats[state.winner]?.team;
  if (team !== null && team !== undefined && store.modes[state.mode]?.teams) {
    const names = state.seats.filter((s) => s.team === team).map((s) => seatName(s.seat));
    return t("ui.end.team_wins", { number: team + 1, names: names.join(", ") });
  }
  return t("ui.end.wins", { name: seatName(state.winner) });
}

// An event card's text in the page's language (the deck is the same in every mode), else
// the table's own text. An "advance to" card names its square as this board and language
// name it (the square comes from the rules' deck, CARD_SQUARES).
export function cardText(card, mode = store.table?.view?.state?.mode) {
  const key = `ui.cards.${card.card}`;
  if (!has(key)) return card.text;
  const square = CARD_SQUARES[String(card.card)];
  return t(key, square === undefined ? {} : { square: squareName(square, mode) });
}
