// Checking a finished game's dice in the browser: the seed against its commitment
// (SHA-256 with crypto.subtle) and every chance outcome against the seed, with the same
// SplitMix64 generator as the rules library (docs/DICE.md). No DOM here: a test runs this
// module under Node against games the rules library played. Seeds are BigInt or decimal
// strings (`seed_text`): a seed up to 2^63 does not fit a JavaScript number.

const MASK = (1n << 64n) - 1n;
const GAMMA = 0x9E3779B97F4A7C15n;
const SPEED_FACES = ["1", "2", "3", "bus", "x", "x"];
const DECK_SIZE = 16;

function mix(z) {
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK;
  return z ^ (z >> 31n);
}

// The generator: one 64-bit state, started from mix(seed).
export class SplitMix64 {
  constructor(seed) {
    this.state = mix(BigInt(seed) & MASK);
  }

  next() {
    this.state = (this.state + GAMMA) & MASK;
    return mix(this.state);
  }

  // A uniform integer in [0, n): draws below the largest multiple of n are kept.
  below(n) {
    const big = BigInt(n);
    const limit = (1n << 64n) - ((1n << 64n) % big);
    for (;;) {
      const value = this.next();
      if (value < limit) return Number(value % big);
    }
  }
}

// SHA-256 hex of the seed's decimal string: the commitment a game publishes at its start.
export async function commitmentOf(seed) {
  const bytes = new TextEncoder().encode(BigInt(seed).toString());
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// Walks the events (rules events as JSON, in order) drawing what the seed gives for each
// chance event. `types` names the event types (EVENT_TYPES of /js/constants.js, generated
// from the contract: DICE_ROLLED, JACKPOT_PLAYED, CARD_DRAWN), so this module spells none. Returns {ok, counts, index, kind, expected, found}: index is the first event
// the seed contradicts (null when all agree), or -1 when the first seat does.
export function checkDice(seed, events, types, { seats = null, firstSeat = null } = {}) {
  const rng = new SplitMix64(seed);
  const counts = { first_seat: 0, dice: 0, speed_die: 0, jackpot_die: 0, card: 0 };
  const differs = (index, kind, expected, found) => ({ ok: false, counts, index, kind, expected, found });
  if (firstSeat !== null && firstSeat !== undefined) {
    const drawn = rng.below(seats);
    if (drawn !== firstSeat) return differs(-1, "first_seat", drawn, firstSeat);
    counts.first_seat = 1;
  }
  let drawn = 0; // bit c set: card c drawn since the last shuffle
  const full = ((1 << (DECK_SIZE + 1)) - 1) & ~1;
  for (let index = 0; index < events.length; index++) {
    const e = events[index];
    if (e.type === types.DICE_ROLLED) {
      const expected = [rng.below(6) + 1, rng.below(6) + 1];
      if (!e.white || e.white[0] !== expected[0] || e.white[1] !== expected[1]) {
        return differs(index, "dice", expected.join("+"), (e.white || []).join("+"));
      }
      counts.dice++;
      if (e.third !== null && e.third !== undefined) {
        const face = SPEED_FACES[rng.below(6)];
        if (face !== e.third) return differs(index, "speed_die", face, e.third);
        counts.speed_die++;
      }
    } else if (e.type === types.JACKPOT_PLAYED) {
      const die = rng.below(6) + 1;
      if (die !== e.die) return differs(index, "jackpot_die", die, e.die);
      counts.jackpot_die++;
    } else if (e.type === types.CARD_DRAWN) {
      const reshuffled = (drawn & full) === full;
      if (reshuffled) drawn = 0;
      const remaining = [];
      for (let c = 1; c <= DECK_SIZE; c++) if (!(drawn & (1 << c))) remaining.push(c);
      const card = remaining[rng.below(remaining.length)];
      if (card !== e.card || Boolean(e.reshuffled) !== reshuffled) return differs(index, "card", card, e.card);
      drawn |= 1 << card;
      counts.card++;
    }
  }
  return { ok: true, counts, index: null };
}

// The whole browser check of a replay file: commitment, then dice.
export async function verifyFile(file, types) {
  const commitment = await commitmentOf(file.seed_text);
  const committed = commitment === String(file.seed_commitment).toLowerCase();
  const events = file.batches.flatMap((b) => b.events);
  const dice = checkDice(file.seed_text, events, types, {
    seats: file.seats.length,
    firstSeat: file.first_seat_drawn ? file.initial.first_seat : null,
  });
  return { committed, commitment, dice, events: events.length };
}
