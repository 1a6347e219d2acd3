// Translations: message catalogues per language and area, plural rules and number formats.
//
// Catalogues are JSON files static/i18n/<lang>/<area>.json. static/i18n/index.json lists the
// languages and the areas; the loader fetches every listed area of the chosen language (and of
// English, the fallback) and merges them. A key is "<area>.<key inside the file>": nested
// objects in a file are joined with dots, so {"lobby": {"join": "Join"}} in ui.json is
// t("ui.lobby.join").
//
// A value is a string with {placeholders}, or a plural object {"one": "...", "other": "..."}
// (the categories of Intl.PluralRules: zero, one, two, few, many, other) chosen by the
// `count` parameter. Number parameters are formatted for the language (Intl.NumberFormat).
// To add an area: put <area>.json into every language folder and add the name to "areas"
// in index.json; the catalogue test checks that every language has every key.

const STORAGE_KEY = "opolyx.lang";
const FALLBACK = "en";
const PLURAL_CATEGORIES = new Set(["zero", "one", "two", "few", "many", "other"]);

let index = { languages: { en: { name: "English", dir: "ltr" } }, areas: [] };
let lang = FALLBACK;
let messages = new Map(); // key -> string or plural object, chosen language over English
let numberFormat = new Intl.NumberFormat(FALLBACK);
let pluralRules = new Intl.PluralRules(FALLBACK);
const listeners = [];

function flatten(prefix, value, into) {
  if (typeof value === "string") {
    into.set(prefix, value);
    return;
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length && keys.includes("other") && keys.every((k) => PLURAL_CATEGORIES.has(k))) {
      into.set(prefix, value);
      return;
    }
    for (const key of keys) flatten(`${prefix}.${key}`, value[key], into);
  }
}

async function fetchJson(url) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

async function loadLanguage(code) {
  const found = new Map();
  const files = await Promise.all(index.areas.map((area) =>
    fetchJson(`/i18n/${code}/${area}.json`).then((data) => [area, data], () => [area, {}])));
  for (const [area, data] of files) flatten(area, data, found);
  return found;
}

// The language to start in: ?lang=xx, else the one chosen before, else the browser's.
export function preferredLanguage(known = index.languages) {
  const fromUrl = new URLSearchParams(location.search).get("lang");
  const candidates = [fromUrl, localStorage.getItem(STORAGE_KEY), ...(navigator.languages || [navigator.language])];
  for (const tag of candidates) {
    if (!tag) continue;
    const base = String(tag).toLowerCase().split(/[-_]/)[0];
    if (Object.hasOwn(known, base)) return base;
  }
  return FALLBACK;
}

// Loads the index and the catalogues; call once before the first render.
export async function initI18n() {
  try {
    index = await fetchJson("/i18n/index.json");
  } catch { /* no catalogues: keys show as themselves, the page still works */ }
  await setLanguage(preferredLanguage(), { remember: false });
}

// Switches the language, re-labels the page and tells the views (onLanguage).
export async function setLanguage(code, { remember = true } = {}) {
  if (!Object.hasOwn(index.languages, code)) code = FALLBACK;
  const [english, chosen] = await Promise.all([
    loadLanguage(FALLBACK), code === FALLBACK ? null : loadLanguage(code),
  ]);
  messages = new Map([...english, ...(chosen || [])]);
  lang = code;
  numberFormat = new Intl.NumberFormat(code);
  pluralRules = new Intl.PluralRules(code);
  if (remember) localStorage.setItem(STORAGE_KEY, code);
  document.documentElement.lang = code;
  document.documentElement.dir = direction();
  // An app installed from this page describes itself in the page's language.
  const manifest = document.querySelector('link[rel="manifest"]');
  if (manifest) manifest.href = `/manifest.webmanifest?lang=${encodeURIComponent(code)}`;
  translateDom(document);
  for (const fn of listeners) fn(code);
}

export const language = () => lang;
export const languages = () => Object.entries(index.languages).map(([code, info]) => ({ code, ...info }));
export const direction = () => (index.languages[lang] && index.languages[lang].dir) || "ltr";
export const onLanguage = (fn) => listeners.push(fn);

export const formatNumber = (n) => numberFormat.format(Number(n));
// Game money has no currency: an amount reads as a plain grouped number.
export const money = formatNumber;

export function has(key) {
  return messages.has(key);
}

// The message for `key` with {placeholders} filled; a missing key reads as itself.
export function t(key, params = {}) {
  let text = messages.get(key);
  if (text === undefined) return key;
  if (typeof text === "object") {
    const count = Number(params.count ?? 0);
    text = text[pluralRules.select(count)] ?? text.other;
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!Object.hasOwn(params, name)) return whole;
    const value = params[name];
    return typeof value === "number" ? formatNumber(value) : String(value);
  });
}

// Labels in the HTML: data-i18n="key" sets the text, data-i18n-attr="attr:key;attr:key"
// sets attributes (placeholder, aria-label, title, content).
export function translateDom(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of el.dataset.i18nAttr.split(";")) {
      const [attr, key] = pair.split(":").map((s) => s.trim());
      if (attr && key) el.setAttribute(attr, t(key));
    }
  }
}
