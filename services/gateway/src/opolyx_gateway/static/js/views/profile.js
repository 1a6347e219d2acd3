// The player's profile, opened from the top bar: level, rank badge and the XP bar to the next
// level, the missions with their progress, the card collection (by square, with rarity),
// the weekly and following leaderboards (with follow buttons) and the players followed
// (online, the game they are in, to watch it). Everything comes from the gateway's REST
// routes (progression.js) each time the dialog opens or a follow changes.

import { $, h } from "../dom.js";
import { errorText, startWatching } from "../actions.js";
import { MISSION_PERIODS } from "../constants.js";
import { has, onLanguage, t, translateDom } from "../i18n.js";
import { squareName } from "../names.js";
import * as api from "../progression.js";
import { on, store } from "../store.js";

let scope = "weekly"; // the leaderboard shown
let dialog = null;

function refusal(err) {
  const key = `social.errors.${String(err && err.code).replaceAll("/", "_")}`;
  return has(key) ? t(key) : errorText(err);
}

function rankBadge(rank) {
  return h(`span.rank.rank-${String(rank).toLowerCase()}`, {}, t(`social.ranks.${rank}`));
}

function header(p) {
  const span = Math.max(1, p.next_level_xp - p.level_xp);
  const into = Math.min(span, Math.max(0, p.total_xp - p.level_xp));
  return h("div.profile-head", { id: "profile-head" },
    h("div.profile-title", {},
      h("strong.profile-name", {}, p.display_name || store.session?.name || ""), " ",
      h("span.profile-level", { dataset: { level: p.level } }, t("social.profile.level", { level: p.level })), " ",
      rankBadge(p.rank)),
    h("progress.xp-bar", {
      max: span, value: into,
      "aria-label": t("social.profile.xp_to_next", { xp: into, next: span, level: p.level + 1 }),
    }),
    h("p.muted", {},
      h("span.profile-xp", { dataset: { xp: p.total_xp } }, t("social.profile.total_xp", { xp: p.total_xp })), " · ",
      t("social.profile.weekly_xp", { xp: p.weekly_xp }), " · ",
      t("social.profile.followers", { followers: p.followers }), " · ",
      t("social.profile.following", { following: p.following })));
}

function missionList(reply) {
  const items = reply.missions.map((m) => h(`li${m.completed ? ".done" : ""}`, { dataset: { mission: m.mission_id, progress: m.progress } },
    h("span.mission-name", {}, t(`social.missions.${m.mission_id}`)), " ",
    h("span.tag", {}, t(m.period === MISSION_PERIODS.DAILY ? "social.missions.period_daily" : "social.missions.period_weekly")),
    h("progress", { max: m.goal, value: Math.min(m.progress, m.goal), "aria-label": t(`social.missions.${m.mission_id}`) }),
    h("span.muted", {}, m.completed ? t("social.missions.done")
      : t("social.missions.progress", { progress: m.progress, goal: m.goal })), " ",
    h("span.tag", {}, t("social.missions.reward", { xp: m.reward_xp }))));
  return section("profile-missions", "social.missions.title", items, "social.missions.empty");
}

function cardList(reply) {
  const items = reply.cards.map((c) => h(`li.card-item.rarity-${c.rarity}`, { dataset: { card: c.card_id, square: c.square } },
    h("strong", {}, squareName(c.square)), " ",
    h(`span.tag.rarity`, {}, t(`social.rarity.${c.rarity}`)), " ",
    h("span.muted", {}, t("social.cards.boost", { pct: c.boost_pct }))));
  return section("profile-cards", "social.cards.title", items, "social.cards.empty");
}

function followButton(playerId, following) {
  return h("button.link.follow", {
    type: "button", dataset: { follow: playerId, following: String(following) },
    onclick: async (ev) => {
      ev.target.disabled = true;
      try {
        await api.setFollowing(playerId, !following);
      } catch (err) {
        showError(err);
        ev.target.disabled = false;
      }
    },
  }, t(following ? "social.follows.unfollow" : "social.follows.follow"));
}

function boardList(reply, followed) {
  const me = store.session.player_id;
  const row = (e) => h(`li${e.player_id === me ? ".me" : ""}`, { dataset: { player: e.player_id } },
    h("span.position", {}, t("social.board.position", { position: e.position })), " ",
    h("strong", {}, e.display_name || e.player_id), " ",
    h("span.muted", {}, t("social.profile.level", { level: e.level })), " ",
    rankBadge(e.rank), " ",
    h("span.board-xp", {}, t("social.profile.total_xp", { xp: e.xp })), " ",
    e.player_id === me ? null : followButton(e.player_id, followed.has(e.player_id)));
  const rows = reply.entries.map(row);
  if (reply.own && !reply.entries.some((e) => e.player_id === me)) rows.push(h("li.gap", {}, "…"), row(reply.own));
  const tabs = h("div.tabs", { role: "tablist" }, ["weekly", "following"].map((name) =>
    h("button", {
      type: "button", role: "tab", dataset: { scope: name }, "aria-selected": String(scope === name),
      onclick: () => { scope = name; refresh(); },
    }, t(`social.board.${name}`))));
  const part = section("profile-board", "social.board.title", rows, "social.board.empty");
  part.insertBefore(tabs, part.querySelector("ul"));
  return part;
}

function followList(reply) {
  const items = reply.players.map((p) => h(`li${p.online ? ".online" : ""}`, { dataset: { player: p.player_id } },
    h(`span.presence${p.online ? ".on" : ""}`, { "aria-label": t(p.online ? "social.follows.online" : "social.follows.offline") }),
    h("strong", {}, p.display_name || p.player_id), " ",
    h("span.muted.presence-text", {}, t(p.online ? "social.follows.online" : "social.follows.offline")),
    p.table_id ? h("button.link", {
      type: "button", dataset: { watch: p.table_id },
      onclick: () => { dialog.close(); startWatching(p.table_id, 0); },
    }, t("social.follows.watch")) : null,
    followButton(p.player_id, true)));
  return section("profile-follows", "social.follows.title", items, "social.follows.empty");
}

function section(id, titleKey, items, emptyKey) {
  return h("section.profile-part", { id },
    h("h3", {}, t(titleKey)),
    h("ul", {}, items.length ? items : [h("li.muted.empty", {}, t(emptyKey))]));
}

function showError(err) {
  const el = $("#profile-error");
  el.dataset.code = err.code || "";
  el.textContent = refusal(err);
}

async function refresh() {
  if (!dialog || !dialog.open || !store.session) return;
  const body = $("#profile-body");
  $("#profile-error").textContent = "";
  try {
    const [p, missions, cardsReply, board, follows] = await Promise.all([
      api.profile(), api.missions(), api.cards(), api.leaderboard(scope), api.following(),
    ]);
    const followed = new Set(follows.players.map((f) => f.player_id));
    body.replaceChildren(header(p), missionList(missions), cardList(cardsReply),
      boardList(board, followed), followList(follows));
  } catch (err) {
    body.replaceChildren();
    showError(err);
  }
}

export function openProfile() {
  dialog.showModal();
  $("#profile-body").replaceChildren(h("p.muted", {}, t("social.profile.loading")));
  refresh();
}

export function mount() {
  dialog = h("dialog", { id: "profile-dialog", "aria-labelledby": "profile-title" },
    h("form.dialog-body", { method: "dialog" },
      h("h2", { id: "profile-title", "data-i18n": "social.profile.title" }),
      h("p.error", { id: "profile-error", role: "alert" }),
      h("div", { id: "profile-body" }),
      h("div.dialog-actions", {}, h("button", { value: "close", "data-i18n": "social.profile.close" }))));
  document.body.append(dialog);
  const open = h("button.link", { id: "open-profile", type: "button", hidden: true, "data-i18n": "social.profile.open", onclick: openProfile });
  $("#sign-out").before(open);
  translateDom(dialog);
  translateDom(open.parentElement);
  on("session", (session) => { open.hidden = !session; if (!session && dialog.open) dialog.close(); });
  on("follows", refresh);
  onLanguage(() => { translateDom(dialog); refresh(); });
  open.hidden = !store.session;
}
