// The lobby's list of public games running now, each with a Watch button (spectating:
// the board and the log, no controls). Refreshed when the lobby shows and every few
// seconds while it does.

import { LOBBY_ACTIONS as L } from "../constants.js";
import { $, h } from "../dom.js";
import { fail, lobby, startWatching } from "../actions.js";
import { onLanguage, t } from "../i18n.js";
import { modeName } from "../names.js";
import { on, store } from "../store.js";

const REFRESH_MS = 10_000;
let games = [];
let timer = null;

function render() {
  const list = $("#games");
  if (!list) return;
  $("#games-title").textContent = t("app.games.title");
  $("#refresh-games").textContent = t("ui.lobby.refresh");
  if (!games.length) {
    list.replaceChildren(h("li.empty", {}, t("app.games.none")));
    return;
  }
  list.replaceChildren(...games.map((g) => h("li", { dataset: { table: g.table_id } },
    h("div", {},
      h("strong", {}, modeName(g.mode)), " ",
      h("span.tag", {}, t("app.games.players", { count: g.members.length })), " ",
      h("span.muted", {}, g.members.map((m) => m.name).join(", "))),
    h("button", { type: "button", dataset: { watch: g.table_id }, onclick: () => startWatching(g.table_id, 0) },
      t("app.games.watch")))));
}

export async function refreshGames() {
  if (!store.conn || store.status !== "online") return;
  try {
    const data = await lobby(L.GAMES);
    games = data.games || [];
    render();
  } catch (err) {
    fail(err);
  }
}

function onScreen(screen) {
  clearInterval(timer);
  timer = null;
  if (screen !== "lobby") return;
  refreshGames();
  timer = setInterval(refreshGames, REFRESH_MS);
}

export function mount() {
  const card = h("div.card", { id: "games-card", "aria-labelledby": "games-title" },
    h("div.card-head", {}, h("h2", { id: "games-title" }),
      h("button.link", { id: "refresh-games", type: "button", onclick: refreshGames })),
    h("ul.rooms", { id: "games", "aria-live": "polite" }));
  $("#view-lobby").append(card);
  on("screen", onScreen);
  on("status", (status) => { if (status === "online" && store.screen === "lobby") refreshGames(); });
  onLanguage(render);
  render();
}
