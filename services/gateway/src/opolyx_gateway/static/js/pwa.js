// The installable app: the service worker (/sw.js) that keeps the shell for offline use,
// the "you are offline, reconnecting" screen, and the prompt to reload when a new version
// has been deployed.
//
// Offline is what the browser says (navigator.onLine and its online/offline events): the
// screen covers the page until the network is back; the connection (net.js) reconnects by
// itself, and the screen stays until it has (the page then carries on where it was).

import { h } from "./dom.js";
import { onLanguage, t } from "./i18n.js";
import { on, store } from "./store.js";

let offlineScreen = null;
let updateBar = null;
let waitingWorker = null;
let reloading = false;

let wasOffline = false;

// Shown while the browser is offline, and after it is back until the socket is too.
function renderOffline() {
  if (!navigator.onLine) wasOffline = true;
  const reconnecting = wasOffline && Boolean(store.session) && store.status !== "online";
  if (navigator.onLine && !reconnecting) wasOffline = false;
  offlineScreen.hidden = navigator.onLine && !reconnecting;
  offlineScreen.querySelector("h2").textContent = t("app.offline.title");
  offlineScreen.querySelector("p").textContent = t(navigator.onLine ? "app.offline.reconnecting" : "app.offline.body");
  document.body.classList.toggle("is-offline", !offlineScreen.hidden);
}

function buildOffline() {
  offlineScreen = h("div.offline-screen", { id: "offline", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "offline-title", hidden: true },
    h("div.offline-card", {},
      h("span.offline-spinner", { "aria-hidden": "true" }),
      h("h2", { id: "offline-title" }),
      h("p", { id: "offline-text", role: "status", "aria-live": "polite" })));
  document.body.append(offlineScreen);
  window.addEventListener("offline", renderOffline);
  window.addEventListener("online", renderOffline);
  on("status", renderOffline);
  onLanguage(renderOffline);
  renderOffline();
}

function showUpdate(worker) {
  waitingWorker = worker;
  if (!updateBar) {
    updateBar = h("div.update-bar", { id: "update-bar", role: "status" },
      h("span", { id: "update-text" }),
      h("button.primary", { id: "update-reload", type: "button", onclick: applyUpdate }),
      h("button.link", { id: "update-later", type: "button", onclick: () => { updateBar.hidden = true; } }));
    document.body.append(updateBar);
    onLanguage(labelUpdate);
  }
  labelUpdate();
  updateBar.hidden = false;
}

function labelUpdate() {
  if (!updateBar) return;
  updateBar.querySelector("#update-text").textContent = t("app.update.ready");
  updateBar.querySelector("#update-reload").textContent = t("app.update.reload");
  updateBar.querySelector("#update-later").textContent = t("app.update.later");
}

function applyUpdate() {
  if (waitingWorker) waitingWorker.postMessage({ type: "skip-waiting" });
  else location.reload();
}

// A worker that finished installing while another controls the page is a new version.
function watchForUpdates(registration) {
  if (registration.waiting && navigator.serviceWorker.controller) showUpdate(registration.waiting);
  registration.addEventListener("updatefound", () => {
    const worker = registration.installing;
    if (!worker) return;
    worker.addEventListener("statechange", () => {
      if (worker.state === "installed" && navigator.serviceWorker.controller) showUpdate(worker);
    });
  });
  // once the page has a worker, a change of controller is the update taking over
  let hadController = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener("controllerchange", () => {
    if (!hadController) {
      hadController = true;
      return;
    }
    if (reloading) return;
    reloading = true;
    location.reload();
  });
  // a long session asks now and then whether a new version is out
  setInterval(() => registration.update().catch(() => {}), 30 * 60 * 1000);
}

async function register() {
  if (!("serviceWorker" in navigator)) return;
  try {
    const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
    watchForUpdates(registration);
  } catch (err) {
    console.warn("service worker not registered:", err);
  }
}

export function mount() {
  buildOffline();
  register();
  window.opolyx = Object.assign(window.opolyx || {}, {
    pwa: { checkForUpdate: () => navigator.serviceWorker?.getRegistration().then((r) => r && r.update()) },
  });
}
