// Condensed action log: table events -> short lines in the page's language. A plain roll is
// one line; a payment is one line with its creditor once paid; an auction is one line that
// follows the bids and reads as its result when it ends.
// Event types, transfer reasons and what the events say of how or why come from the served
// constants (the rules' own names).

import {
  EVENT_TYPES as E, JAIL_EXITS, JAIL_REASONS, MOVE_HOWS as HOW, OFFER_ENDS, OUT_HOWS, TRANSFER_REASONS as R,
} from "./constants.js";
import { money } from "./dom.js";
import { has, t } from "./i18n.js";
import { autopilotLine, markAutopilot } from "./views/autopilot.js";

// Silent bookkeeping events: the state shows their effect, the log stays short.
const QUIET = new Set([
  E.TURN_STARTED, E.ROLL_OFFERED, E.TURN_ENDED, E.SEAT_ACTED, E.PAYMENT_MADE,
  E.JACKPOT_OFFERED, E.BUS_OFFERED, E.TELEPORT_OFFERED, E.AUCTION_PASSED, E.MORTGAGE_REMINDER,
]);

// Transfers another log line already tells about (a purchase, a building sold, ...).
const QUIET_TRANSFERS = new Set([
  R.PURCHASE, R.AUCTION, R.BUILDING, R.UNMORTGAGE, R.MORTGAGE, R.BUILDING_SALE, R.TRADE,
]);

const BANK = -1;
const POT = -2;

export function reasonText(reason) {
  const key = `log.reasons.${reason}`;
  return has(key) ? t(key) : String(reason || "").replaceAll("_", " ");
}

// The events of whole turns: a log that starts partway through the game (replayed from a
// late point, or trimmed in a long one) drops what comes before its first turn, so its
// oldest line is not half a story (a payment whose card was drawn before the window).
function wholeTurns(events) {
  const first = events.findIndex((e) => e.type === E.TURN_STARTED);
  return first > 0 ? events.slice(first) : events;
}

// The oldest line of a log that starts partway through the game: earlier moves happened.
export function earlierLine() {
  return { text: t("log.earlier"), kind: "earlier" };
}

// The newest `limit` lines of a log; one cut here says so on its oldest line, as a log that
// began partway does (a plain slice would drop that line first).
export function newestLines(lines, limit) {
  if (lines.length <= limit) return lines;
  return [earlierLine(), ...lines.slice(lines.length - limit + 1)];
}

// Turns a list of events into log entries {text, kind, link?}. `ctx` names seats, squares
// and cards (seatName, squareName, cardText) and gives the table's id (tableId); with
// `ctx.partial` the events start partway through the game and the oldest line says so.
export function describe(allEvents, ctx) {
  const lines = [];
  const events = ctx.partial ? wholeTurns(allEvents) : allEvents;
  if (ctx.partial) lines.push(earlierLine());
  // lines that come from what the autopilot did for a seat are marked as its
  let byAutopilot = false;
  const add = lines.push.bind(lines);
  lines.push = (...items) => add(...items.map((l) => (byAutopilot ? markAutopilot(l) : l)));
  const who = (seat) => {
    if (seat === POT) return t("log.the_pot");
    if (seat === null || seat === undefined || seat < 0) return t("log.the_bank");
    return ctx.seatName(seat);
  };
  const sq = (square) => ctx.squareName(square);
  const diceText = (e) => {
    const [a, b] = e.white;
    const parts = [t("log.dice", { a, b })];
    if (e.third) parts.push(t("log.third_die", { face: e.third }));
    if (a === b) parts.push(t("log.doubles"));
    return parts.join(" ");
  };
  const where = new Map(); // seat -> square it last moved to (where rent is due)
  const buyOffers = new Set(); // "seat:square" asked to buy (a later automatic decline is a timeout)
  const payments = new Map(); // seat -> {index, event}: a payment line waiting for the transfer
  const offers = new Map(); // offer id -> its terms, for the line when it closes
  let auction = null; // {index, square, bid, leader}
  let roll = null; // {seat, dice}: a roll waiting for its move
  const flushRoll = () => {
    if (roll) {
      lines.push({ text: t("log.rolled", { name: who(roll.seat), dice: roll.dice }), kind: "roll" });
      roll = null;
    }
  };
  const terms = (o) => t("log.trade_terms", {
    give: side(o.give_cash, o.give_squares, sq), take: side(o.take_cash, o.take_squares, sq),
  });

  for (const e of events) {
    byAutopilot = Boolean(e.by_autopilot);
    if (e.type === E.MOVED) where.set(e.seat, e.to);
    if (e.type === E.BUY_OFFERED) {
      buyOffers.add(`${e.seat}:${e.square}`);
      continue;
    }
    if (QUIET.has(e.type)) continue;
    if (e.type === E.DICE_ROLLED) {
      flushRoll();
      roll = { seat: e.seat, dice: diceText(e) };
      continue;
    }
    if (e.type === E.MOVED && roll && roll.seat === e.seat && e.how === HOW.ROLL) {
      const key = e.passed_start ? "log.rolled_to_passing_start" : "log.rolled_to";
      lines.push({ text: t(key, { name: who(e.seat), dice: roll.dice, square: sq(e.to) }), kind: "roll" });
      roll = null;
      continue;
    }
    flushRoll();
    switch (e.type) {
      case E.PAYMENT_REQUIRED: {
        const creditor = e.creditors && e.creditors.length === 1 ? e.creditors[0][0] : null;
        const params = { name: who(e.seat), amount: money(e.amount), reason: reasonText(e.reason) };
        const text = creditor !== null && creditor >= 0
          ? t("log.owes_to", { ...params, creditor: who(creditor) })
          : t("log.owes", params);
        payments.set(e.seat, { index: lines.length, event: e, creditor });
        lines.push({ text });
        continue;
      }
      case E.PAYMENT_CANCELLED: {
        const open = payments.get(e.seat);
        payments.delete(e.seat);
        const line = { text: t("log.payment_cancelled", { name: who(e.seat) }) };
        if (open) lines[open.index] = line;
        else lines.push(line);
        continue;
      }
      case E.TRANSFER: {
        if (QUIET_TRANSFERS.has(e.reason)) continue;
        const open = payments.get(e.frm);
        const line = transferLine(e, who, where.get(e.frm), sq);
        if (open && open.event.reason === e.reason) {
          // the payment line becomes the payment itself (paid in one go or in shares)
          if (open.paid) lines.push(line);
          else lines[open.index] = line;
          open.paid = true;
        } else {
          lines.push(line);
        }
        continue;
      }
      case E.PROPERTY_DECLINED: {
        const timedOut = buyOffers.has(`${e.seat}:${e.square}`);
        const key = !e.automatic ? "log.declined" : timedOut ? "log.declined_timeout" : "log.declined_cannot_afford";
        lines.push({ text: t(key, { name: who(e.seat), square: sq(e.square) }) });
        buyOffers.delete(`${e.seat}:${e.square}`);
        continue;
      }
      case E.AUCTION_STARTED:
        auction = { index: lines.length, square: e.square };
        lines.push({ text: t("log.auction_open", { square: sq(e.square), amount: money(e.minimum) }), kind: "auction" });
        continue;
      case E.AUCTION_BID:
        if (auction) {
          lines[auction.index] = {
            text: t("log.auction_bid", { square: sq(auction.square), amount: money(e.amount), name: who(e.seat) }),
            kind: "auction",
          };
        } else {
          lines.push({ text: t("log.bid", { name: who(e.seat), amount: money(e.amount) }) });
        }
        continue;
      case E.AUCTION_ENDED: {
        const line = e.winner === null
          ? { text: t("log.auction_no_bids", { square: sq(e.square) }) }
          : { text: t("log.auction_won", { square: sq(e.square), name: who(e.winner), amount: money(e.price) }), kind: "buy" };
        if (auction && auction.square === e.square) lines[auction.index] = line;
        else lines.push(line);
        auction = null;
        continue;
      }
      case E.OFFER_MADE:
        offers.set(e.offer, e);
        lines.push({ text: t("log.offer_made", { from: who(e.frm), to: who(e.to), terms: terms(e) }) });
        continue;
      case E.OFFER_CLOSED: {
        const o = offers.get(e.offer);
        const how = [OFFER_ENDS.ACCEPTED, OFFER_ENDS.REJECTED, OFFER_ENDS.CANCELLED, OFFER_ENDS.EXPIRED]
          .includes(e.how) ? e.how : "closed";
        lines.push({
          text: o
            ? t(`log.offer_${how}`, { from: who(o.frm), to: who(o.to), terms: terms(o) })
            : t(`log.offer_${how}_short`),
        });
        continue;
      }
      case E.SEED_REVEALED:
        lines.push({
          text: t("log.seed_revealed"),
          link: ctx.tableId ? { href: `/replay.html?table=${encodeURIComponent(ctx.tableId)}#verify`, text: t("log.verify_fairness") } : null,
          kind: "seed",
        });
        continue;
      default: {
        const line = one(e, who, sq, ctx);
        if (line) lines.push(line);
      }
    }
  }
  flushRoll();
  return lines;
}

function side(cash, squares, sq) {
  const items = [cash ? money(cash) : null, ...(squares || []).map(sq)].filter(Boolean);
  return items.length ? items.join(", ") : t("log.nothing");
}

function transferLine(e, who, square, sq) {
  const params = { amount: money(e.amount), reason: reasonText(e.reason) };
  if (e.reason === R.RENT && e.frm >= 0 && e.to >= 0) {
    return square === undefined
      ? { text: t("log.pays_rent", { name: who(e.frm), creditor: who(e.to), ...params }), kind: "rent" }
      : { text: t("log.pays_rent_for", { name: who(e.frm), creditor: who(e.to), square: sq(square), ...params }), kind: "rent" };
  }
  if (e.frm === BANK || e.frm === null) return { text: t("log.receives", { name: who(e.to), ...params }) };
  if (e.frm === POT) return { text: t("log.receives_pot", { name: who(e.to), ...params }) };
  if (e.to === BANK || e.to === null) return { text: t("log.pays", { name: who(e.frm), ...params }) };
  if (e.to === POT) return { text: t("log.pays_pot", { name: who(e.frm), ...params }) };
  return { text: t("log.pays_to", { name: who(e.frm), creditor: who(e.to), ...params }) };
}

function one(e, who, sq, ctx) {
  const name = e.seat !== undefined ? who(e.seat) : "";
  switch (e.type) {
    case E.TABLE_CREATED: return { text: t("log.table_created") };
    case E.AUTOPILOT: return autopilotLine(e, who);
    case E.MOVED: {
      // A roll's move is worded with its dice (above); a teleport is an event of its own.
      const how = [HOW.CARD, HOW.JUMP, HOW.BUS].includes(e.how) ? e.how : "other";
      const key = `log.moved_${how}${e.passed_start ? "_passing_start" : ""}`;
      return { text: t(key, { name, square: sq(e.to) }) };
    }
    case E.PROPERTY_BOUGHT: return { text: t("log.bought", { name, square: sq(e.square), amount: money(e.price) }), kind: "buy" };
    case E.JACKPOT_PLAYED:
      return { text: t(e.won ? "log.jackpot_won" : "log.jackpot_lost", { name, numbers: e.numbers.join(", "), die: e.die }) };
    case E.JACKPOT_DECLINED: return e.automatic ? null : { text: t("log.jackpot_skipped", { name }) };
    case E.BUS_CHOSEN: return { text: t("log.bus", { name, move: t(`log.bus_moves.${e.move}`) }) };
    case E.JUMP_SKIPPED: return { text: t("log.jump_skipped", { name }) };
    case E.TELEPORTED: return { text: t("log.teleported", { name, square: sq(e.square) }) };
    case E.CARD_DRAWN: return { text: t("log.card", { name, text: ctx.cardText ? ctx.cardText(e) : e.text }), kind: "card" };
    case E.SENT_TO_JAIL: {
      const why = [JAIL_REASONS.CARD, JAIL_REASONS.THREE_DOUBLES].includes(e.why) ? e.why : JAIL_REASONS.SQUARE;
      return { text: t(`log.jail_${why}`, { name }) };
    }
    case E.LEFT_JAIL: return { text: t(e.how === JAIL_EXITS.BAIL ? "log.left_jail_bail" : "log.left_jail_doubles", { name }) };
    case E.JAIL_ROLL_FAILED: return { text: t("log.jail_stays", { name, count: e.attempts }) };
    case E.BUILDING_BUILT: return { text: t("log.built", { name, square: sq(e.square), count: e.buildings }) };
    case E.BUILDING_SOLD: return { text: t("log.sold_building", { name, square: sq(e.square), count: e.buildings }) };
    case E.PROPERTY_MORTGAGED: return { text: t("log.mortgaged", { name, square: sq(e.square) }) };
    case E.MORTGAGE_LIFTED: return { text: t("log.unmortgaged", { name, square: sq(e.square) }) };
    case E.MORTGAGE_EXPIRED: return { text: t("log.mortgage_expired", { square: sq(e.square) }) };
    case E.PROPERTY_TRANSFERRED:
      return { text: t("log.property_passes", { square: sq(e.square), from: who(e.frm), to: who(e.to) }) };
    case E.TURN_SKIPPED: return { text: t("log.turn_skipped", { name, count: e.missed_turns }) };
    case E.SEAT_WENT_OUT:
      return { text: t(e.how === OUT_HOWS.RESIGNED ? "log.out_resigned" : "log.out_bankrupt", { name }), kind: "out" };
    case E.GAME_FINISHED:
      if (e.winner === null) return { text: t("log.game_over"), kind: "win" };
      return { text: ctx.winnerText ? ctx.winnerText(e.winner) : t("log.wins", { name: who(e.winner) }), kind: "win" };
    default:
      return { text: String(e.type || "event").replaceAll("_", " ") };
  }
}
