// The "verify fairness" view: the revealed seed against the commitment published at the
// start, and every die and card of the game against the seed, computed here in the
// browser (fairness.js) from the replay file the page also offers for download.

import { EVENT_TYPES } from "../constants.js";
import { errorText } from "../actions.js";
import { $, h } from "../dom.js";
import { t } from "../i18n.js";
import { seatName } from "../names.js";
import { replayJson } from "./api.js";
import { checkDice, commitmentOf } from "./fairness.js";

let running = null;

function line(ok, text) {
  return h(`li.${ok ? "ok" : "bad"}`, {}, h("span.mark", { "aria-hidden": "true" }, ok ? "✓" : "✗"), " ", text);
}

function diceText(result) {
  if (result.ok) {
    const c = result.counts;
    return t("replay.verify.dice_ok", {
      count: c.first_seat + c.dice + c.speed_die + c.jackpot_die + c.card, dice: c.dice, cards: c.card,
    });
  }
  if (result.kind === "first_seat") {
    return t("replay.verify.first_seat_bad", { expected: seatName(result.expected), found: seatName(result.found) });
  }
  return t("replay.verify.dice_bad", {
    index: result.index, what: t(`replay.verify.kinds.${result.kind}`), expected: result.expected, found: result.found,
  });
}

async function loadFile(page) {
  if (!page.file) {
    page.file = await replayJson(`/api/replays/${encodeURIComponent(page.tableId)}/file`);
  }
  return page.file;
}

async function check(page) {
  const summary = page.summary;
  const checks = $("#rp-v-checks");
  const verdict = $("#rp-v-verdict");
  checks.replaceChildren(h("li", {}, t("replay.verify.checking")));
  verdict.textContent = "";
  delete verdict.dataset.ok;
  const file = await loadFile(page);
  // The seed the game revealed (its summary) is checked, with the events of the file.
  const seed = summary.seed_text;
  const hash = await commitmentOf(seed);
  $("#rp-v-hash").textContent = hash;
  const committed = hash === String(summary.seed_commitment).toLowerCase();
  const events = file.batches.flatMap((b) => b.events);
  const dice = checkDice(seed, events, EVENT_TYPES, {
    seats: file.seats.length,
    firstSeat: file.first_seat_drawn ? file.initial.first_seat : null,
  });
  const sameFile = String(file.seed_text) === String(seed) && file.seed_commitment === summary.seed_commitment;
  const items = [
    line(committed, t(committed ? "replay.verify.committed_ok" : "replay.verify.committed_bad")),
    line(dice.ok, diceText(dice)),
  ];
  if (!sameFile) items.push(line(false, t("replay.verify.file_differs")));
  checks.replaceChildren(...items);
  const ok = committed && dice.ok && sameFile;
  verdict.textContent = t(ok ? "replay.verify.verdict_ok" : "replay.verify.verdict_bad");
  verdict.dataset.ok = String(ok);
}

export function renderVerify(page) {
  if (!page.summary) return;
  $("#rp-v-commitment").textContent = page.summary.seed_commitment;
  $("#rp-v-seed").textContent = page.summary.seed_text;
  const name = `opolyx-${page.tableId}.json`;
  const link = $("#rp-download");
  link.href = `/api/replays/${encodeURIComponent(page.tableId)}/file`;
  link.setAttribute("download", name);
  $("#rp-v-command").textContent = `opolyx-rules verify ${name}`;
  if (!$("#rp-v-run").dataset.bound) {
    $("#rp-v-run").dataset.bound = "1";
    $("#rp-v-run").addEventListener("click", () => { running = null; renderVerify(page); });
  }
  if (!running) {
    running = check(page).catch((err) => {
      $("#rp-v-checks").replaceChildren(line(false, t("replay.error", { message: errorText(err) })));
      running = null;
    });
  }
}
