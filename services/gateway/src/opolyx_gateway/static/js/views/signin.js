// Sign-in: a display name, then the guest session.

import { $ } from "../dom.js";
import { errorText, once, signInAs } from "../actions.js";
import { on } from "../store.js";

// Through `once`: Play as guest clicked twice, or Enter pressed twice, made two guest
// players and opened a socket for each (the page kept the second player; the first one's
// socket stayed open).
async function onSubmit(ev) {
  ev.preventDefault();
  await once("signin", async () => {
    $("#signin-error").textContent = "";
    await signInAs($("#signin-name").value);
  }, (err) => { $("#signin-error").textContent = errorText(err); });
}

export function mount() {
  $("#signin-form").addEventListener("submit", onSubmit);
  on("signin-error", (message) => { $("#signin-error").textContent = message; });
  on("screen", (screen) => { if (screen === "signin") $("#signin-name").focus(); });
}
