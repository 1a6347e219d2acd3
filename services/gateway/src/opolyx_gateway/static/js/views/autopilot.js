// The autopilot at the table: a badge on every seat a bot plays for its away (or willing)
// player, the "autopilot for me" switch, and the log's words for it. The table decides who
// plays a seat (its `autopilot` list in every state); this only shows it and sends the switch.

import { AUTOPILOT_REASONS as REASONS } from "../constants.js";
import { $, h, singleClick, toast } from "../dom.js";
import { once } from "../actions.js";
import { onLanguage, t } from "../i18n.js";
import { on, store } from "../store.js";

// Seats on autopilot in the watched table's last state.
export function autopilotSeats(tb = store.table) {
  return new Set(tb?.view?.autopilot || []);
}

// The log line of a table `autopilot` event ({seat, on, reason}).
export function autopilotLine(e, who) {
  const name = who(e.seat);
  if (e.on) {
    const key = e.reason === REASONS.CHOSEN ? "autopilot.log.on_chosen" : "autopilot.log.on_away";
    return { text: t(key, { name }), kind: "seat-handover" };
  }
  const key = e.reason === REASONS.RELEASED ? "autopilot.log.off_released" : "autopilot.log.off_back";
  return { text: t(key, { name }), kind: "seat-handover" };
}

// A log line of what the autopilot did for a seat: said so, and styled as such.
export function markAutopilot(line) {
  return { ...line, text: t("autopilot.log.mark", { text: line.text }), kind: `${line.kind || "played"}.by-autopilot` };
}

function render() {
  const tb = store.table;
  if (!tb?.view) return;
  const seats = autopilotSeats(tb);
  for (const row of document.querySelectorAll("#players li[data-seat]")) {
    row.querySelector(".autopilot-badge")?.remove();
    if (!seats.has(Number(row.dataset.seat))) continue;
    row.classList.add("on-autopilot");
    const label = row.querySelector(".meta")?.parentElement || row;
    label.append(h("span.autopilot-badge", { title: t("autopilot.badge_title") }, t("autopilot.badge")));
  }
  const button = $("#autopilot-toggle");
  const me = tb.seat;
  const state = tb.view.state;
  const playing = me !== null && me !== undefined && state.seats[me] && !state.seats[me].out && !state.finished;
  button.hidden = !playing;
  const onNow = playing && seats.has(me);
  button.setAttribute("aria-pressed", onNow ? "true" : "false");
  button.textContent = t(onNow ? "autopilot.switch_off" : "autopilot.switch_on");
  button.title = t("autopilot.switch_hint");
}

// The switch goes through `once`: two clicks in one go sent it twice (two toasts). The
// second click of a double click, once the first one's update was in, switched the
// autopilot off again (singleClick in mount).
async function toggle() {
  const tb = store.table;
  if (!tb?.view || tb.seat === null || tb.seat === undefined) return;
  await once(`table.autopilot ${tb.id}`, async () => {
    const wanted = !autopilotSeats(tb).has(tb.seat);
    const result = await store.conn.request("table.autopilot", { table: tb.id, on: wanted });
    toast(t(result.autopilot ? "autopilot.now_on" : "autopilot.now_off"));
  });
}

export function mount() {
  $("#autopilot-toggle").addEventListener("click", singleClick(toggle));
  // Registered after the table view (main.js): the players list is drawn, then badged.
  on("table", (tb) => { if (tb === store.table) render(); });
  onLanguage(render);
}
