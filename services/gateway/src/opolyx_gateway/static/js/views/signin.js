// Sign-in: a display name, then the guest session.

import { $ } from "../dom.js";
import { errorText, signInAs } from "../actions.js";
import { on } from "../store.js";

async function onSubmit(ev) {
  ev.preventDefault();
  $("#signin-error").textContent = "";
  try {
    await signInAs($("#signin-name").value);
  } catch (err) {
    $("#signin-error").textContent = errorText(err);
  }
}

export function mount() {
  $("#signin-form").addEventListener("submit", onSubmit);
  on("signin-error", (message) => { $("#signin-error").textContent = message; });
  on("screen", (screen) => { if (screen === "signin") $("#signin-name").focus(); });
}
