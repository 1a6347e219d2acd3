// Condensed action log: table events -> short lines. A plain roll is one line.
// Event types and transfer reasons come from the served constants (the rules' own names).

import { EVENT_TYPES as E, TRANSFER_REASONS as R } from "./constants.js";

const money = (n) => Number(n).toLocaleString("en-US");

// How a reason reads in a line; any other reason reads as its name.
const REASONS = {
  [R.CARD]: "an event card",
  [R.START_LANDING]: "landing on Start",
  [R.JACKPOT_STAKE]: "the Jackpot stake",
  [R.JACKPOT_WIN]: "the Jackpot",
  [R.FORTUNE_POT]: "the fortune pot",
};

// Silent bookkeeping events: the state shows their effect, the log stays short.
const QUIET = new Set([
  E.TURN_STARTED, E.ROLL_OFFERED, E.BUY_OFFERED, E.TURN_ENDED, E.SEAT_ACTED, E.PAYMENT_MADE,
  E.JACKPOT_OFFERED, E.BUS_OFFERED, E.TELEPORT_OFFERED, E.AUCTION_PASSED, E.MORTGAGE_REMINDER,
]);

// Transfers another log line already tells about (a purchase, a building sold, ...).
const QUIET_TRANSFERS = new Set([
  R.PURCHASE, R.AUCTION, R.BUILDING, R.UNMORTGAGE, R.MORTGAGE, R.BUILDING_SALE, R.TRADE,
]);

// Turns a list of events into log entries {text, kind}. `ctx` names seats and squares.
export function describe(events, ctx) {
  const lines = [];
  const who = (seat) => (seat === null || seat === undefined || seat < 0 ? "the bank" : ctx.seatName(seat));
  const sq = (square) => ctx.squareName(square);
  let roll = null;
  const flushRoll = () => {
    if (roll) {
      lines.push({ text: `${who(roll.seat)} rolled ${roll.dice}`, kind: "roll" });
      roll = null;
    }
  };
  for (const e of events) {
    if (QUIET.has(e.type)) continue;
    if (e.type === E.TRANSFER && QUIET_TRANSFERS.has(e.reason)) continue;
    if (e.type === E.DICE_ROLLED) {
      flushRoll();
      const [a, b] = e.white;
      let dice = `${a}+${b}`;
      if (e.third) dice += ` (${e.third})`;
      if (a === b) dice += ", doubles";
      roll = { seat: e.seat, dice };
      continue;
    }
    if (e.type === E.MOVED && roll && roll.seat === e.seat && e.how === "roll") {
      const start = e.passed_start ? ", passing Start" : "";
      lines.push({ text: `${who(e.seat)} rolled ${roll.dice} → ${sq(e.to)}${start}`, kind: "roll" });
      roll = null;
      continue;
    }
    flushRoll();
    const line = one(e, who, sq);
    if (line) lines.push(line);
  }
  flushRoll();
  return lines;
}

function one(e, who, sq) {
  switch (e.type) {
    case E.TABLE_CREATED: return { text: "The table is set. Good luck!" };
    case E.SEED_REVEALED: return { text: `Seed revealed: ${e.seed} (check the dice with opolyx-rules replay)` };
    case E.MOVED: {
      const how = { card: "moved by a card to", jump: "jumped to", teleport: "teleported to", bus: "took the Bus to" }[e.how] || "moved to";
      return { text: `${who(e.seat)} ${how} ${sq(e.to)}${e.passed_start ? ", passing Start" : ""}` };
    }
    case E.TRANSFER: {
      const reason = REASONS[e.reason] || String(e.reason || "").replaceAll("_", " ");
      if (e.frm < 0 || e.frm === null) return { text: `${who(e.to)} receives ${money(e.amount)} (${reason})` };
      if (e.to < 0 || e.to === null) return { text: `${who(e.frm)} pays ${money(e.amount)} (${reason})` };
      return { text: `${who(e.frm)} pays ${who(e.to)} ${money(e.amount)} (${reason})` };
    }
    case E.PROPERTY_BOUGHT: return { text: `${who(e.seat)} bought ${sq(e.square)} for ${money(e.price)}`, kind: "buy" };
    case E.PROPERTY_DECLINED: return { text: `${who(e.seat)} ${e.automatic ? "let the time run out on" : "declined"} ${sq(e.square)}` };
    case E.AUCTION_STARTED: return { text: `Auction for ${sq(e.square)}, opening at ${money(e.minimum)}` };
    case E.AUCTION_BID: return { text: `${who(e.seat)} bids ${money(e.amount)}` };
    case E.AUCTION_ENDED:
      return e.winner === null
        ? { text: `Nobody bid: ${sq(e.square)} stays with the bank` }
        : { text: `${who(e.winner)} won ${sq(e.square)} for ${money(e.price)}`, kind: "buy" };
    case E.PAYMENT_REQUIRED: return { text: `${who(e.seat)} owes ${money(e.amount)} (${String(e.reason).replaceAll("_", " ")})` };
    case E.PAYMENT_CANCELLED: return { text: `${who(e.seat)}'s payment was cancelled` };
    case E.JACKPOT_PLAYED:
      return { text: `${who(e.seat)} bet on ${e.numbers.join(", ")} at the Jackpot: the die shows ${e.die}, ${e.won ? "a win!" : "no luck"}` };
    case E.JACKPOT_DECLINED: return e.automatic ? null : { text: `${who(e.seat)} skipped the Jackpot` };
    case E.BUS_CHOSEN: return { text: `${who(e.seat)} took the Bus: ${e.move}` };
    case E.JUMP_SKIPPED: return { text: `${who(e.seat)} had nowhere to jump` };
    case E.TELEPORTED: return { text: `${who(e.seat)} teleported to ${sq(e.square)}` };
    case E.CARD_DRAWN: return { text: `${who(e.seat)} drew an event card: “${e.text}”`, kind: "card" };
    case E.SENT_TO_JAIL: {
      const why = { square: "", card: " by a card", three_doubles: " after three doubles" }[e.why] || "";
      return { text: `${who(e.seat)} went to jail${why}` };
    }
    case E.LEFT_JAIL: return { text: `${who(e.seat)} left jail (${e.how === "bail" ? "paid bail" : "rolled doubles"})` };
    case E.JAIL_ROLL_FAILED: return { text: `${who(e.seat)} stays in jail (try ${e.attempts})` };
    case E.BUILDING_BUILT: return { text: `${who(e.seat)} built on ${sq(e.square)} (${e.buildings})` };
    case E.BUILDING_SOLD: return { text: `${who(e.seat)} sold a building on ${sq(e.square)} (${e.buildings} left)` };
    case E.PROPERTY_MORTGAGED: return { text: `${who(e.seat)} mortgaged ${sq(e.square)}` };
    case E.MORTGAGE_LIFTED: return { text: `${who(e.seat)} lifted the mortgage on ${sq(e.square)}` };
    case E.MORTGAGE_EXPIRED: return { text: `The mortgage on ${sq(e.square)} expired; it returns to the bank` };
    case E.OFFER_MADE: return { text: `${who(e.frm)} offers ${who(e.to)} a trade` };
    case E.OFFER_CLOSED: {
      const how = { accepted: "accepted", rejected: "rejected", cancelled: "withdrawn", expired: "expired" }[e.how];
      return { text: how ? `Trade offer ${how}` : "Trade offer closed (turn ended)" };
    }
    case E.PROPERTY_TRANSFERRED: return { text: `${sq(e.square)} passes from ${who(e.frm)} to ${who(e.to)}` };
    case E.TURN_SKIPPED: return { text: `${who(e.seat)} missed a turn (${e.missed_turns} in a row)` };
    case E.SEAT_WENT_OUT: return { text: `${who(e.seat)} is out (${e.how})`, kind: "out" };
    case E.GAME_FINISHED:
      return { text: e.winner === null ? "The game is over" : `${who(e.winner)} wins the game!`, kind: "win" };
    default:
      return { text: String(e.type || "event").replaceAll("_", " ") };
  }
}
