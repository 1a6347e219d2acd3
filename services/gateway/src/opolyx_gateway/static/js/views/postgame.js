// The post-game panel, inside the results dialog: what the finished game paid this player
// (XP, any level-up, cards won, missions completed), or why it paid nothing, and where the
// player's missions stand after it (progress bars). Progression credits a game moments after
// it ends, so the panel asks again until it is credited, then reads the missions once.

import { CREDIT_STATUSES } from "../constants.js";
import { $, h } from "../dom.js";
import { onLanguage, t } from "../i18n.js";
import { squareName } from "../names.js";
import { gameCredit, missions } from "../progression.js";
import { on, store } from "../store.js";

const ASK_EVERY_MS = 1500;
const ASKS = 20; // about half a minute, then the panel says it is still counting

let panel = null;
const credits = new Map(); // table id -> the credit once known (null while pending)
const standings = new Map(); // table id -> the player's missions read after its credit
const NO_XP = { flagged: "social.postgame.flagged", practice: "social.postgame.practice" };
const asking = new Set();

function render(tableId) {
  const credit = credits.get(tableId);
  if (!credit) {
    panel.replaceChildren(h("p.muted", {}, t("social.postgame.pending")));
    return;
  }
  const parts = [h("h3", {}, t("social.postgame.title"))];
  if (!credit.paid) {
    parts.push(h("p.postgame-none", { dataset: { reason: credit.reason } },
      t(NO_XP[credit.reason] || "social.postgame.too_short")));
  } else {
    parts.push(h("p.postgame-xp", { dataset: { xp: credit.xp + credit.mission_xp } },
      h("strong", {}, t("social.postgame.xp", { xp: credit.xp })),
      credit.mission_xp ? ` · ${t("social.postgame.mission_xp", { xp: credit.mission_xp })}` : ""));
  }
  if (credit.level_after > credit.level_before) {
    parts.push(h("p.postgame-level", {}, t("social.postgame.level_up", { level: credit.level_after })));
  }
  if (credit.cards.length) {
    parts.push(h("p", {}, t("social.postgame.cards")), h("ul.postgame-cards", {}, credit.cards.map((c) =>
      h(`li.rarity-${c.rarity}`, {}, squareName(c.square), " · ", t(`social.rarity.${c.rarity}`)))));
  }
  if (credit.missions_completed.length) {
    parts.push(h("p", {}, t("social.postgame.missions")), h("ul.postgame-missions", {},
      credit.missions_completed.map((m) => h("li", {}, t(`social.missions.${m}`)))));
  }
  const standing = standings.get(tableId);
  if (credit.paid && standing && standing.missions.length) {
    parts.push(h("p", {}, t("social.postgame.mission_progress")), h("ul.postgame-progress", {},
      standing.missions.map((m) => h(`li${m.completed ? ".done" : ""}`, { dataset: { mission: m.mission_id, progress: m.progress } },
        h("span.mission-name", {}, t(`social.missions.${m.mission_id}`)), " ",
        h("progress", { max: m.goal, value: Math.min(m.progress, m.goal), "aria-label": t(`social.missions.${m.mission_id}`) }), " ",
        h("span.muted", {}, m.completed ? t("social.missions.done")
          : t("social.missions.progress", { progress: m.progress, goal: m.goal }))))));
  }
  panel.replaceChildren(...parts);
}

async function ask(tableId) {
  if (asking.has(tableId) || credits.get(tableId)) return;
  asking.add(tableId);
  try {
    for (let n = 0; n < ASKS && store.session; n += 1) {
      try {
        const reply = await gameCredit(tableId);
        if (reply.status === CREDIT_STATUSES.CREDITED) {
          credits.set(tableId, reply.credit);
          if (reply.credit.paid) standings.set(tableId, await missions().catch(() => null));
          break;
        }
      } catch {
        break; // no progression service: the results stand without the panel
      }
      await new Promise((resolve) => setTimeout(resolve, ASK_EVERY_MS));
    }
  } finally {
    asking.delete(tableId);
  }
  if (store.table && store.table.id === tableId) render(tableId);
}

function onTable(tb) {
  const finished = tb.view && tb.view.state.finished;
  const seated = tb.seat !== null && tb.seat !== undefined;
  panel.hidden = !(finished && seated);
  if (panel.hidden) return;
  render(tb.id);
  ask(tb.id);
}

export function mount() {
  panel = h("div.postgame", { id: "postgame", hidden: true, "aria-live": "polite" });
  $("#end-dialog .dialog-actions").before(panel);
  on("table", onTable);
  onLanguage(() => { if (store.table && !panel.hidden) render(store.table.id); });
}
