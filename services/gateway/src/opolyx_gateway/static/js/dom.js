// Tiny DOM helpers: h("button.primary", {onclick}, "text") builds an element.

export { money } from "./i18n.js";

export function h(tag, props = {}, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "text") el.textContent = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (selector) => document.querySelector(selector);

// A click handler for a button that asks the server for something: the second click of a
// double click (a click event's `detail` counts them; 0 from the keyboard) sends nothing.
// A server nearby answers in a few milliseconds, so by then the first click's reply may be
// back (the guard on unanswered requests, `once` in actions.js, no longer holds it) and its
// state on screen, with the same button re-rendered under the pointer (a second house
// built, a second bot added) or another one (another decision, Roll again after doubles).
export function singleClick(run) {
  return (ev) => { if (ev.detail < 2) run(ev); };
}

// Enter held down on a button acts once. The key's auto-repeat (keydown events with `repeat`
// set, about 30 a second) clicks whatever button has the focus by then: the next decision's,
// which takes the focus when it appears: Enter held 3 s on Roll rolled, then bought the
// square the player landed on before they saw it. (Space clicks on its release: it does not
// repeat.) Installed once, on the document, before any button sees the key (capture).
export function ignoreHeldKeys(doc = document) {
  doc.addEventListener("keydown", (ev) => {
    if (ev.repeat && ev.key === "Enter" && ev.target.closest?.("button")) ev.preventDefault();
  }, { capture: true });
}

let toastTimer = null;
export function toast(text) {
  const el = $("#toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}
