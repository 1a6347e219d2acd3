// The table at a glance: the mode, the round (and its limit), the rent-tax share now, the
// Fortune Pot in Fortuna, and the latest log line beside the decision, so a phone shows
// what to decide and what just happened without scrolling away from the board. It also
// gives every square a short label the phone's small board shows (tap for the card).
//
// The rent-tax share comes from the rules' own schedule (RENT_TAX in constants.js: from
// which round which share applies); nothing here computes a rule.

import { POT_MODES, RENT_TAX } from "../constants.js";
import { $, h, money } from "../dom.js";
import { onLanguage, t } from "../i18n.js";
import { modeName, squareLabel } from "../names.js";
import { on, store } from "../store.js";

let labelledFor = null; // "<mode>:<language>" the square labels were made for

// The share of a rent withheld in `round` (percent), looked up in the rules' schedule.
export function rentTaxShare(mode, round) {
  let share = 0;
  for (const [from, pct] of RENT_TAX[mode] || []) if (round >= from) share = pct;
  return share;
}

// A few letters that tell a square apart on a small board: the start of its first word
// (two characters of a script without spaces between words).
export function abbreviate(label) {
  const first = String(label).trim().split(/\s+/)[0] || "";
  const chars = [...first];
  const wide = /[\u2e80-\u9fff\uac00-\ud7af]/.test(first);
  return chars.slice(0, wide ? 2 : 5).join("");
}

function labelSquares(mode) {
  const key = `${mode}:${document.documentElement.lang}`;
  if (labelledFor === key) return;
  labelledFor = key;
  for (const cell of document.querySelectorAll("#board .sq")) {
    cell.dataset.abbr = abbreviate(squareLabel(Number(cell.dataset.square), mode));
  }
}

function render() {
  const tb = store.table;
  const bar = $("#glance");
  if (!tb || !tb.view || !bar) return;
  const state = tb.view.state;
  const config = store.modes[state.mode] || {};
  const parts = [h("span.glance-mode", {}, modeName(state.mode))];
  const limit = config.round_limit;
  parts.push(h("span", { dataset: { round: state.round } }, limit
    ? t("app.glance.round_of", { round: state.round, limit })
    : t("app.glance.round", { round: state.round })));
  if (config.rent_tax_start !== null && config.rent_tax_start !== undefined) {
    const share = rentTaxShare(state.mode, state.round);
    parts.push(h("span", { dataset: { rentTax: share } },
      t("app.glance.rent_tax", { pct: share.toLocaleString(document.documentElement.lang, { maximumFractionDigits: 1 }) })));
  }
  if (POT_MODES.includes(state.mode)) {
    parts.push(h("span.glance-pot", { dataset: { pot: state.pot } }, t("app.glance.pot", { amount: money(state.pot) })));
  }
  bar.replaceChildren(...parts.flatMap((part, i) => (i ? [h("span.sep", { "aria-hidden": "true" }, "·"), part] : [part])));
  labelSquares(state.mode);
}

// The newest line of the action log (the log view writes it first), echoed by the decision.
function echoLatest() {
  const latest = $("#log") && $("#log").firstElementChild;
  const el = $("#last-log");
  el.textContent = latest ? latest.textContent : "";
  el.hidden = !latest;
}

export function mount() {
  const top = document.querySelector("#center .center-top");
  top.prepend(h("div.glance", { id: "glance" }));
  $("#decision").after(h("p.last-log", { id: "last-log", hidden: true }));
  new MutationObserver(echoLatest).observe($("#log"), { childList: true, subtree: true, characterData: true });
  on("table", (tb) => { if (tb === store.table) render(); });
  onLanguage(() => { labelledFor = null; render(); });
}
