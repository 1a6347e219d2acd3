// Condensed action log: table events -> short lines. A plain roll is one line.

const money = (n) => Number(n).toLocaleString("en-US");

const REASONS = {
  rent: "rent",
  tax: "tax",
  income_tax: "income tax",
  luxury_tax: "luxury tax",
  card: "an event card",
  bail: "bail",
  salary: "salary",
  start: "landing on Start",
  jackpot: "the Jackpot",
};

// Silent bookkeeping events: the state shows their effect, the log stays short.
const QUIET = new Set([
  "turn_started", "roll_offered", "buy_offered", "turn_ended", "seat_acted", "payment_made",
  "jackpot_offered", "bus_offered", "teleport_offered", "auction_passed", "mortgage_reminder",
]);

// Transfers another log line already tells about.
const QUIET_TRANSFERS = new Set(["purchase", "auction", "building", "unmortgage", "mortgage", "sale", "trade"]);

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
    if (e.type === "transfer" && QUIET_TRANSFERS.has(e.reason)) continue;
    if (e.type === "dice_rolled") {
      flushRoll();
      const [a, b] = e.white;
      let dice = `${a}+${b}`;
      if (e.third) dice += ` (${e.third})`;
      if (a === b) dice += ", doubles";
      roll = { seat: e.seat, dice };
      continue;
    }
    if (e.type === "moved" && roll && roll.seat === e.seat && e.how === "roll") {
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
    case "table_created": return { text: "The table is set. Good luck!" };
    case "seed_revealed": return { text: `Seed revealed: ${e.seed} (check the dice with opolyx-rules replay)` };
    case "moved": {
      const how = { card: "moved by a card to", jump: "jumped to", teleport: "teleported to", bus: "took the Bus to" }[e.how] || "moved to";
      return { text: `${who(e.seat)} ${how} ${sq(e.to)}${e.passed_start ? ", passing Start" : ""}` };
    }
    case "transfer": {
      const reason = REASONS[e.reason] || String(e.reason || "").replaceAll("_", " ");
      if (e.frm < 0 || e.frm === null) return { text: `${who(e.to)} receives ${money(e.amount)} (${reason})` };
      if (e.to < 0 || e.to === null) return { text: `${who(e.frm)} pays ${money(e.amount)} (${reason})` };
      return { text: `${who(e.frm)} pays ${who(e.to)} ${money(e.amount)} (${reason})` };
    }
    case "property_bought": return { text: `${who(e.seat)} bought ${sq(e.square)} for ${money(e.price)}`, kind: "buy" };
    case "property_declined": return { text: `${who(e.seat)} ${e.automatic ? "let the time run out on" : "declined"} ${sq(e.square)}` };
    case "auction_started": return { text: `Auction for ${sq(e.square)}, opening at ${money(e.minimum)}` };
    case "auction_bid": return { text: `${who(e.seat)} bids ${money(e.amount)}` };
    case "auction_ended":
      return e.winner === null
        ? { text: `Nobody bid: ${sq(e.square)} stays with the bank` }
        : { text: `${who(e.winner)} won ${sq(e.square)} for ${money(e.price)}`, kind: "buy" };
    case "payment_required": return { text: `${who(e.seat)} owes ${money(e.amount)} (${String(e.reason).replaceAll("_", " ")})` };
    case "payment_cancelled": return { text: `${who(e.seat)}'s payment was cancelled` };
    case "jackpot_played":
      return { text: `${who(e.seat)} bet on ${e.numbers.join(", ")} at the Jackpot: the die shows ${e.die}, ${e.won ? "a win!" : "no luck"}` };
    case "jackpot_declined": return e.automatic ? null : { text: `${who(e.seat)} skipped the Jackpot` };
    case "bus_chosen": return { text: `${who(e.seat)} took the Bus: ${e.move}` };
    case "jump_skipped": return { text: `${who(e.seat)} had nowhere to jump` };
    case "teleported": return { text: `${who(e.seat)} teleported to ${sq(e.square)}` };
    case "card_drawn": return { text: `${who(e.seat)} drew an event card: “${e.text}”`, kind: "card" };
    case "sent_to_jail": {
      const why = { square: "", card: " by a card", three_doubles: " after three doubles" }[e.why] || "";
      return { text: `${who(e.seat)} went to jail${why}` };
    }
    case "left_jail": return { text: `${who(e.seat)} left jail (${e.how === "bail" ? "paid bail" : "rolled doubles"})` };
    case "jail_roll_failed": return { text: `${who(e.seat)} stays in jail (try ${e.attempts})` };
    case "building_built": return { text: `${who(e.seat)} built on ${sq(e.square)} (${e.buildings})` };
    case "building_sold": return { text: `${who(e.seat)} sold a building on ${sq(e.square)} (${e.buildings} left)` };
    case "property_mortgaged": return { text: `${who(e.seat)} mortgaged ${sq(e.square)}` };
    case "mortgage_lifted": return { text: `${who(e.seat)} lifted the mortgage on ${sq(e.square)}` };
    case "mortgage_expired": return { text: `The mortgage on ${sq(e.square)} expired; it returns to the bank` };
    case "offer_made": return { text: `${who(e.frm)} offers ${who(e.to)} a trade` };
    case "offer_closed": {
      const how = { accepted: "accepted", rejected: "rejected", cancelled: "withdrawn", expired: "expired" }[e.how];
      return { text: how ? `Trade offer ${how}` : "Trade offer closed (turn ended)" };
    }
    case "property_transferred": return { text: `${sq(e.square)} passes from ${who(e.frm)} to ${who(e.to)}` };
    case "turn_skipped": return { text: `${who(e.seat)} missed a turn (${e.missed_turns} in a row)` };
    case "seat_went_out": return { text: `${who(e.seat)} is out (${e.how})`, kind: "out" };
    case "game_finished":
      return { text: e.winner === null ? "The game is over" : `${who(e.winner)} wins the game!`, kind: "win" };
    default:
      return { text: String(e.type || "event").replaceAll("_", " ") };
  }
}
