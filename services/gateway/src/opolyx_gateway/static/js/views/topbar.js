// The top bar: who is signed in, the connection, the language switch, sign-out.

import { $, h } from "../dom.js";
import { signOut } from "../actions.js";
import { language, languages, onLanguage, setLanguage, t } from "../i18n.js";
import { on, store } from "../store.js";

function renderWho() {
  $("#me-name").textContent = store.session ? store.session.name : "";
  $("#sign-out").hidden = !store.session;
}

function renderStatus() {
  const el = $("#conn");
  el.textContent = t(`ui.status.${store.status}`);
  el.className = `conn ${store.status}`;
  el.hidden = store.screen === "signin";
}

function renderLanguages() {
  const select = $("#lang");
  select.replaceChildren(...languages().map((l) =>
    h("option", { value: l.code, lang: l.code, selected: l.code === language() }, l.name)));
}

export function mount() {
  $("#sign-out").addEventListener("click", signOut);
  $("#lang").addEventListener("change", (ev) => setLanguage(ev.target.value));
  on("session", renderWho);
  on("status", renderStatus);
  on("screen", renderStatus);
  onLanguage(() => { renderLanguages(); renderStatus(); });
  renderLanguages();
  renderWho();
  renderStatus();
}
