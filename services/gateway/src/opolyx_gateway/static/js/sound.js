// Sounds: short cues synthesised with Web Audio (no files, nothing fetched) for what
// happens at the watched table, and the mute switch in the top bar, remembered on this
// device.
//
// Cues follow the table's live events only (not the log replayed when a page comes back
// to a game): dice, a purchase, an auction bid, rent paid, jail, the player's own turn and
// the end of the game. `window.opolyx.sound.played` counts the cues played per name (and
// `muted` those a muted page left silent), so tests see what a player would have heard.

import { EVENT_TYPES as E, TRANSFER_REASONS as R } from "./constants.js";
import { $, h } from "./dom.js";
import { onLanguage, t } from "./i18n.js";
import { on, store } from "./store.js";

const MUTE_KEY = "opolyx.muted";

// Each cue: notes as [frequency Hz, start s, length s, wave type, volume 0..1].
const CUES = {
  roll: [[520, 0, 0.05, "square", 0.12], [660, 0.07, 0.05, "square", 0.12], [590, 0.14, 0.06, "square", 0.1]],
  buy: [[660, 0, 0.1, "triangle", 0.25], [880, 0.1, 0.18, "triangle", 0.25]],
  bid: [[740, 0, 0.08, "sine", 0.22]],
  rent: [[440, 0, 0.12, "sawtooth", 0.1], [330, 0.12, 0.18, "sawtooth", 0.1]],
  jail: [[220, 0, 0.18, "square", 0.12], [165, 0.2, 0.3, "square", 0.12]],
  turn: [[587, 0, 0.1, "sine", 0.25], [784, 0.12, 0.16, "sine", 0.25]],
  end: [[523, 0, 0.14, "triangle", 0.25], [659, 0.15, 0.14, "triangle", 0.25], [784, 0.3, 0.14, "triangle", 0.25], [1047, 0.45, 0.4, "triangle", 0.25]],
};

const counts = { played: {}, muted: {} };
let context = null;
let muted = localStorage.getItem(MUTE_KEY) === "1";

export const isMuted = () => muted;

export function setMuted(value) {
  muted = Boolean(value);
  localStorage.setItem(MUTE_KEY, muted ? "1" : "0");
  renderSwitch();
}

// Browsers start audio only after the user touched the page: the context is made (or
// resumed) on the first gesture, and cues before it stay silent but are still counted.
function audio() {
  if (!context) {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return null;
    context = new Context();
  }
  if (context.state === "suspended") context.resume().catch(() => {});
  return context;
}

export function play(name) {
  const notes = CUES[name];
  if (!notes) return;
  const tally = muted ? counts.muted : counts.played;
  tally[name] = (tally[name] || 0) + 1;
  if (muted || !context || context.state !== "running") return;
  const start = context.currentTime + 0.01;
  for (const [freq, at, length, type, volume] of notes) {
    const osc = context.createOscillator();
    const gain = context.createGain();
    osc.type = type;
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0, start + at);
    gain.gain.linearRampToValueAtTime(volume, start + at + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + at + length);
    osc.connect(gain).connect(context.destination);
    osc.start(start + at);
    osc.stop(start + at + length + 0.02);
  }
}

// The cues one batch of live events calls for (at most one of each per batch).
export function cuesFor(events, mySeat) {
  const cues = new Set();
  for (const e of events) {
    if (e.type === E.DICE_ROLLED) cues.add("roll");
    else if (e.type === E.PROPERTY_BOUGHT) cues.add("buy");
    else if (e.type === E.AUCTION_BID) cues.add("bid");
    else if (e.type === E.TRANSFER && e.reason === R.RENT) cues.add("rent");
    else if (e.type === E.SENT_TO_JAIL) cues.add("jail");
    else if (e.type === E.GAME_FINISHED) cues.add("end");
    else if (e.type === E.TURN_STARTED && mySeat !== null && mySeat !== undefined && e.seat === mySeat) cues.add("turn");
  }
  return [...cues];
}

function renderSwitch() {
  const button = $("#mute");
  if (!button) return;
  button.setAttribute("aria-pressed", muted ? "true" : "false");
  const label = t(muted ? "app.sound.unmute" : "app.sound.mute");
  button.setAttribute("aria-label", label);
  button.title = label;
  button.replaceChildren(speaker(muted));
}

// A speaker drawn as SVG (an emoji needs a font the device may not have): with sound
// waves when on, crossed out when muted.
function speaker(off) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "18");
  svg.setAttribute("height", "18");
  svg.setAttribute("aria-hidden", "true");
  const paths = ["M3 9h4l5-4v14l-5-4H3z"];
  paths.push(off ? "M16 9l5 6M21 9l-5 6" : "M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12");
  for (const d of paths) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    path.setAttribute("fill", d.startsWith("M3") ? "currentColor" : "none");
    path.setAttribute("stroke", "currentColor");
    path.setAttribute("stroke-width", "2");
    path.setAttribute("stroke-linecap", "round");
    path.setAttribute("stroke-linejoin", "round");
    svg.append(path);
  }
  return svg;
}

export function mount() {
  const button = h("button.icon-button", { id: "mute", type: "button" });
  button.addEventListener("click", () => {
    setMuted(!muted);
    if (!muted) audio();
  });
  const who = document.querySelector(".topbar .who");
  who.insertBefore(button, $("#sign-out"));
  renderSwitch();
  onLanguage(renderSwitch);
  for (const kind of ["pointerdown", "keydown"]) {
    window.addEventListener(kind, () => { if (!muted) audio(); }, { passive: true });
  }
  on("live-events", ({ table, events }) => {
    if (table !== store.table) return;
    for (const cue of cuesFor(events, table.seat)) play(cue);
  });
  window.opolyx = Object.assign(window.opolyx || {}, { sound: { ...counts, isMuted, play } });
}
