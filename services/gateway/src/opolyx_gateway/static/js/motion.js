// Motion: what just happened at the table, animated: the dice tumble, a pawn walks square
// by square to where it landed, and money changes float up from the players' cash.
//
// Only the table's live events are animated (not the log replayed on a return), and only
// when the player has not asked the system for less motion (`prefers-reduced-motion`):
// then nothing moves (the stylesheet also turns transitions off) and <html data-motion>
// says "off". `window.opolyx.motion` counts what was animated, for tests.

import { EVENT_TYPES as E, MOVE_HOWS as HOW } from "./constants.js";
import { $, h, money } from "./dom.js";
import { on, store } from "./store.js";

const STEP_MS = 110; // one square of a walk
const LONGEST_WALK = 20; // squares; a longer move (a card's "advance to") hops instead
const DICE_MS = 650;
const MONEY_MS = 1400;
const WALKS = new Set([HOW.ROLL, HOW.BUS]);

const counts = { dice: 0, walks: 0, money: 0, reduced: false };
const query = window.matchMedia("(prefers-reduced-motion: reduce)");

const reduced = () => query.matches;

function markMotion() {
  counts.reduced = reduced();
  document.documentElement.dataset.motion = counts.reduced ? "off" : "on";
}

function tumbleDice() {
  const dice = $("#dice");
  if (!dice) return;
  dice.classList.remove("rolling");
  void dice.offsetWidth; // restart the animation when two rolls come quickly
  dice.classList.add("rolling");
  counts.dice += 1;
  setTimeout(() => dice.classList.remove("rolling"), DICE_MS);
}

// The centre of a square's cell, relative to the board's frame.
function cellCentre(square) {
  const cell = document.querySelector(`#board [data-square="${square}"]`);
  if (!cell) return null;
  return { x: cell.offsetLeft + cell.offsetWidth / 2, y: cell.offsetTop + cell.offsetHeight / 2 };
}

function walk(seat, from, to) {
  const steps = (to - from + 40) % 40;
  if (steps === 0 || steps > LONGEST_WALK) return;
  const board = $("#board");
  const frame = board && board.parentElement;
  if (!frame) return;
  const walker = h(`span.walker.pawn.c${seat}`, { "aria-hidden": "true" });
  const hideClass = `walking-c${seat}`;
  frame.append(walker);
  board.classList.add(hideClass);
  counts.walks += 1;
  let step = 0;
  const place = (square) => {
    const at = cellCentre(square);
    if (!at) return;
    walker.style.left = `${at.x}px`;
    walker.style.top = `${at.y}px`;
  };
  place(from);
  const timer = setInterval(() => {
    step += 1;
    place((from + step) % 40);
    if (step >= steps) {
      clearInterval(timer);
      setTimeout(() => {
        walker.remove();
        board.classList.remove(hideClass);
      }, STEP_MS);
    }
  }, STEP_MS);
}

// One floating "+200" / "−200" per seat whose cash changed in the batch.
function floatMoney(events) {
  const change = new Map();
  for (const e of events) {
    if (e.type !== E.TRANSFER || !e.amount) continue;
    if (e.frm >= 0) change.set(e.frm, (change.get(e.frm) || 0) - e.amount);
    if (e.to >= 0) change.set(e.to, (change.get(e.to) || 0) + e.amount);
  }
  for (const [seat, amount] of change) {
    if (!amount) continue;
    const cash = document.querySelector(`#players li[data-seat="${seat}"] .cash`);
    if (!cash) continue;
    const rect = cash.getBoundingClientRect();
    const label = `${amount > 0 ? "+" : "−"}${money(Math.abs(amount))}`;
    const float = h(`span.money-delta${amount > 0 ? ".gain" : ".loss"}`, { "aria-hidden": "true" }, label);
    float.style.left = `${rect.left + rect.width / 2}px`;
    float.style.top = `${rect.top}px`;
    document.body.append(float);
    counts.money += 1;
    setTimeout(() => float.remove(), MONEY_MS);
  }
}

export function animate(events) {
  if (reduced() || store.screen !== "table") return;
  for (const e of events) {
    if (e.type === E.DICE_ROLLED) tumbleDice();
    else if (e.type === E.MOVED && WALKS.has(e.how)) walk(e.seat, e.frm, e.to);
  }
  floatMoney(events);
}

export function mount() {
  markMotion();
  query.addEventListener("change", markMotion);
  on("live-events", ({ table, events }) => {
    if (table === store.table) animate(events);
  });
  window.opolyx = Object.assign(window.opolyx || {}, { motion: counts });
}
