// The replay page (/replay.html?table=<id>): a finished game's timeline to scrub, step
// and play, its analytics (#analytics) and the fairness check (#verify).
//
// The gateway rebuilds every turn's position with the rules library; this page only shows
// them: it fetches the summary once, then pages of steps (timeline.js) around the one on
// screen, so stepping is a lookup. The board is the game client's own (board.js).

import { Board } from "../board.js";
import { errorText, loadSession } from "../actions.js";
import { GATEWAY_ERRORS } from "../constants.js";
import { describe, earlierLine } from "../log.js";
import { $, h, money } from "../dom.js";
import { initI18n, language, languages, onLanguage, setLanguage, t } from "../i18n.js";
import { cardText, modeName, seatName, squareLabel, squareName, winnerText } from "../names.js";
import { store } from "../store.js";
import { renderAnalytics } from "./analytics.js";
import { replayJson } from "./api.js";
import { Timeline } from "./timeline.js";
import { renderVerify } from "./verify.js";

const LOG_STEPS = 6; // turns of log shown before the position on screen
const BASE_INTERVAL_MS = 1000; // one step a second at 1x

const page = {
  tableId: new URLSearchParams(location.search).get("table"),
  summary: null,
  timeline: null,
  step: 0,
  playing: null, // interval id while playing
  board: null,
  rendered: null, // the step last drawn (a late page redraws only if still current)
};

function status(text, isError = false) {
  const el = $("#rp-status");
  el.textContent = text;
  el.classList.toggle("error", isError);
  el.hidden = !text;
}

// The names module reads seats from the watched table: the replay's game is that table.
function watch(summary, state) {
  store.tables.set(summary.table_id, { id: summary.table_id, view: { seats: summary.seats, state } });
  store.watching = summary.table_id;
  store.session = loadSession();
}

function positionText(step, state) {
  const mark = page.summary.timeline[step];
  if (mark.end) return `${t("replay.position.end", { rounds: state.round })} · ${winnerText(state)}`;
  const name = seatName(mark.seat);
  return step === 0 ? t("replay.position.start", { name }) : t("replay.position.turn", { round: mark.round, name });
}

function renderPlayers(entry) {
  const { state, net_worth: worth } = entry;
  $("#rp-players").replaceChildren(...state.seats.map((s) => {
    const owned = state.squares.filter((q) => q.owner === s.seat).length;
    const tags = [];
    if (s.out) tags.push(h("span.tag", {}, t("replay.out")));
    else if (s.in_jail) tags.push(h("span.tag", {}, t("replay.in_jail")));
    return h(`li${s.seat === state.current_seat && !state.finished ? ".current" : ""}`, { dataset: { seat: s.seat } },
      h(`span.pawn.c${s.seat}`, { "aria-hidden": "true" }),
      h("span.rp-name", {}, seatName(s.seat)), " ",
      h("span.rp-cash", {}, t("replay.cash", { amount: money(s.cash) })), " ",
      h("span.rp-worth.muted", {}, t("replay.worth", { amount: money(worth[s.seat] ?? 0) })), " ",
      h("span.rp-owned.muted", {}, t("replay.owned", { count: owned })),
      ...tags);
  }));
  const dice = state.dice ? state.dice.join(" + ") : "";
  $("#rp-dice").textContent = dice ? t("replay.dice", { dice }) : "";
}

// The log as it read at this point: the events of the last few turns before it. When it
// leaves turns out, its oldest line says so, as the game's own log does. (Not through
// describe's `partial`: it also drops the events before the first turn_started, and a
// step's events begin just after its turn_started, so the oldest whole turn would go.)
function renderLog(step) {
  const events = page.timeline.eventsBefore(step, LOG_STEPS);
  const ctx = { seatName, squareName, cardText, tableId: page.tableId, winnerText: () => winnerText(page.timeline.entry(step).state) };
  const lines = describe(events, ctx);
  if (step > LOG_STEPS) lines.unshift(earlierLine());
  $("#rp-log").replaceChildren(...lines.reverse().map((line) =>
    h(`li${line.kind ? "." + line.kind : ""}`, {}, line.text)));
}

function render() {
  const step = page.step;
  const entry = page.timeline.entry(step);
  $("#rp-slider").value = String(step);
  $("#rp-slider").setAttribute("aria-valuetext", positionText(step, entry ? entry.state : { round: 0 }));
  if (!entry) {
    $("#rp-position").textContent = t("replay.loading");
    return;
  }
  watch(page.summary, entry.state);
  page.rendered = step;
  $("#rp-position").textContent = `${positionText(step, entry.state)} · ${t("replay.step", { step, total: page.summary.steps - 1 })}`;
  page.board.render(entry.state, {
    names: (seat) => seatName(seat), targets: new Set(), squareName: (sq) => squareName(sq, entry.state.mode),
    squareLabel: (sq) => squareLabel(sq, entry.state.mode),
  });
  renderPlayers(entry);
  renderLog(step);
  const atEnd = page.summary.timeline[step].end;
  $("#rp-fork").disabled = atEnd;
  $("#rp-fork").title = atEnd ? t("replay.fork.at_end") : "";
  $("#replay").dataset.step = String(step);
}

async function goTo(step) {
  page.step = Math.max(0, Math.min(page.summary.steps - 1, step));
  if (page.timeline.entry(page.step)) render();
  else {
    render(); // shows "loading" at once; the page below redraws it
    try {
      await page.timeline.ensure(page.step);
    } catch (err) {
      status(t("replay.error", { message: errorText(err) }), true);
      return;
    }
    if (page.step === step || page.rendered !== page.step) render();
  }
  page.timeline.prefetch(page.step);
}

function stop() {
  if (page.playing !== null) clearInterval(page.playing);
  page.playing = null;
  $("#rp-play").textContent = "▶";
  $("#rp-play").setAttribute("aria-label", t("replay.controls.play"));
}

function play() {
  if (page.playing !== null) return stop();
  if (page.step >= page.summary.steps - 1) goTo(0);
  const speed = Number($("#rp-speed").value) || 1;
  page.playing = setInterval(() => {
    if (page.step >= page.summary.steps - 1) return stop();
    // Waits for a page still on its way instead of skipping over it.
    if (page.timeline.entry(page.step + 1)) goTo(page.step + 1);
  }, BASE_INTERVAL_MS / speed);
  $("#rp-play").textContent = "⏸";
  $("#rp-play").setAttribute("aria-label", t("replay.controls.pause"));
}

async function fork() {
  const out = $("#rp-fork-status");
  const session = loadSession();
  if (!session) {
    out.replaceChildren(t("replay.fork.sign_in"), " ", h("a", { href: "/" }, t("replay.fork.main_page")));
    return;
  }
  out.textContent = t("replay.fork.starting");
  $("#rp-fork").disabled = true;
  try {
    await replayJson(`/api/replays/${encodeURIComponent(page.tableId)}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${session.token}` },
      body: JSON.stringify({ step: page.step }),
    });
    out.textContent = t("replay.fork.started");
    // The game client seats the player at the new table when it connects.
    location.href = "/";
  } catch (err) {
    out.textContent = t("replay.fork.failed", { message: errorText(err) });
    $("#rp-fork").disabled = false;
  }
}

function showTab() {
  const tab = (location.hash || "#replay").slice(1);
  const known = ["replay", "analytics", "verify"].includes(tab) ? tab : "replay";
  for (const name of ["replay", "analytics", "verify"]) {
    $(`#view-${name}`).hidden = name !== known;
    const link = $(`#tab-${name}`);
    if (name === known) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (known === "verify") renderVerify(page);
  if (known === "analytics") renderAnalytics(page);
  if (known !== "replay") stop();
}

function renderLanguages() {
  $("#lang").replaceChildren(...languages().map((l) =>
    h("option", { value: l.code, lang: l.code, selected: l.code === language() }, l.name)));
}

function renderHead() {
  const s = page.summary;
  const final = { ...page.timeline.lastState(), mode: s.mode };
  const parts = [modeName(s.mode), t("replay.rounds", { rounds: s.rounds })];
  if (final.seats) parts.push(winnerText(final));
  if (s.practice) parts.push(t("replay.practice"));
  $("#rp-meta").textContent = parts.join(" · ");
  $("#rp-commitment").textContent = s.seed_commitment;
  document.title = `${t("replay.title")} · opolyx`;
}

async function main() {
  await initI18n();
  renderLanguages();
  $("#lang").addEventListener("change", (ev) => setLanguage(ev.target.value));
  if (!page.tableId) {
    status(t("replay.no_table"), true);
    return;
  }
  try {
    page.summary = await replayJson(`/api/replays/${encodeURIComponent(page.tableId)}`);
  } catch (err) {
    const key = { [GATEWAY_ERRORS.REPLAY_NOT_FOUND]: "replay.not_found", [GATEWAY_ERRORS.REPLAY_NOT_FINISHED]: "replay.not_finished" }[err.code];
    status(key ? t(key, { table: page.tableId }) : t("replay.error", { message: errorText(err) }), true);
    return;
  }
  page.timeline = new Timeline(page.tableId, page.summary);
  page.board = new Board($("#rp-board"), Object.values(store.board), () => {});
  await page.timeline.ensure(0);
  await page.timeline.ensure(page.summary.steps - 1);
  watch(page.summary, page.timeline.entry(0).state);
  const slider = $("#rp-slider");
  slider.max = String(page.summary.steps - 1);
  slider.addEventListener("input", () => { stop(); goTo(Number(slider.value)); });
  $("#rp-first").addEventListener("click", () => { stop(); goTo(0); });
  $("#rp-prev").addEventListener("click", () => { stop(); goTo(page.step - 1); });
  $("#rp-next").addEventListener("click", () => { stop(); goTo(page.step + 1); });
  $("#rp-last").addEventListener("click", () => { stop(); goTo(page.summary.steps - 1); });
  $("#rp-play").addEventListener("click", play);
  $("#rp-speed").addEventListener("change", () => { if (page.playing !== null) { stop(); play(); } });
  $("#rp-fork").addEventListener("click", fork);
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
    if (ev.key === "ArrowRight") goTo(page.step + 1);
    else if (ev.key === "ArrowLeft") goTo(page.step - 1);
  });
  window.addEventListener("hashchange", showTab);
  onLanguage(() => { renderLanguages(); renderHead(); render(); showTab(); });
  status("");
  renderHead();
  const start = Number(new URLSearchParams(location.search).get("step"));
  await goTo(Number.isInteger(start) && start > 0 ? start : 0);
  showTab();
  $("#replay").setAttribute("aria-busy", "false");
}

// the page's state, for tests and the browser's console
window.opolyx = { replay: page };
main();
