// opolyx web client: the start. The page is a store (store.js) that one reducer fills from
// the gateway's pushes, views (views/*.js) that render from it, the connection (net.js),
// the player's actions (actions.js) and the catalogues (i18n.js).
//
// A view is a module exporting mount(): it binds its DOM once and re-renders on the store's
// topics (on("table", ...)) and on a language change (onLanguage). To add one, import it
// here and add it to VIEWS.

import { connect, loadSession, saveSession } from "./actions.js";
import { ignoreHeldKeys } from "./dom.js";
import { initI18n } from "./i18n.js";
import { on, setScreen, store } from "./store.js";
import * as motion from "./motion.js";
import * as pwa from "./pwa.js";
import * as sound from "./sound.js";
import * as games from "./views/games.js";
import * as glance from "./views/glance.js";
import * as lobby from "./views/lobby.js";
import * as signin from "./views/signin.js";
import * as table from "./views/table.js";
import * as topbar from "./views/topbar.js";
import * as chat from "./views/chat.js";
import * as postgame from "./views/postgame.js";
import * as profile from "./views/profile.js";
import * as autopilot from "./views/autopilot.js";

const VIEWS = [topbar, signin, lobby, table, games, glance, sound, motion, pwa, chat, profile, postgame, autopilot];
const SCREENS = ["signin", "lobby", "table"];

function showScreen(screen) {
  for (const id of SCREENS) document.getElementById(`view-${id}`).hidden = id !== screen;
  document.body.dataset.view = screen;
}

async function main() {
  await initI18n();
  ignoreHeldKeys();
  on("screen", showScreen);
  for (const view of VIEWS) view.mount();
  const saved = loadSession();
  if (saved) {
    saveSession(saved);
    connect();
  } else {
    setScreen("signin");
  }
}

// the store, for tests and the browser's console
window.opolyx = { app: store };
main();
