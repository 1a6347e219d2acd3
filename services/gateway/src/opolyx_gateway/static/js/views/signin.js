// Sign-in: a display name, then the guest session.

import { $ } from "../dom.js";
import { errorText, once, signInAs } from "../actions.js";
import { on, store } from "../store.js";

// Once: Play as guest clicked twice, or Enter pressed twice, made two guest players and
// opened a socket for each (the page kept the second player; the first one's socket stayed
// open). `once` holds the second submit while the first is unanswered; a session already
// made holds it after (the form stays on screen until the socket is ready: a second Enter
// in that moment signed in again).
async function onSubmit(ev) {
  ev.preventDefault();
  await once("signin", async () => {
    if (store.session) return;
    $("#signin-error").textContent = "";
    await signInAs($("#signin-name").value);
  }, (err) => { $("#signin-error").textContent = errorText(err); });
}

export function mount() {
  $("#signin-form").addEventListener("submit", onSubmit);
  on("signin-error", (message) => { $("#signin-error").textContent = message; });
  on("screen", (screen) => { if (screen === "signin") $("#signin-name").focus(); });
}
