// Sign-in: a display name, then the guest session.

import { $ } from "../dom.js";
import { errorText, signInAs } from "../actions.js";
import { on } from "../store.js";

// True while a sign-in is sent and not answered: Play as guest clicked twice, or Enter
// pressed twice, made two guest players and opened a socket for each (the page kept the
// second player; the first one's socket stayed open).
let signingIn = false;

async function onSubmit(ev) {
  ev.preventDefault();
  if (signingIn) return;
  signingIn = true;
  $("#signin-error").textContent = "";
  try {
    await signInAs($("#signin-name").value);
  } catch (err) {
    $("#signin-error").textContent = errorText(err);
  } finally {
    signingIn = false;
  }
}

export function mount() {
  $("#signin-form").addEventListener("submit", onSubmit);
  on("signin-error", (message) => { $("#signin-error").textContent = message; });
  on("screen", (screen) => { if (screen === "signin") $("#signin-name").focus(); });
}
