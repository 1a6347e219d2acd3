// opolyx service worker: keeps the app shell (the page, its styles, scripts, catalogues and
// icons) in a cache named after the shell's version, so the page opens without a network
// and shows its own "offline, reconnecting" screen. The gateway serves this file at /sw.js
// with the version and the shell's file list filled in (opolyx_gateway/app_shell.py).
//
// A new version installs beside the running one and waits: the page offers to reload
// (js/pwa.js) and then tells it to take over ("skip-waiting"). The API and the websocket
// never go through the cache.

const VERSION = "__SHELL_VERSION__";
const SHELL = ["__SHELL_FILES__"];
const CACHE = `opolyx-shell-${VERSION}`;
const PREFIX = "opolyx-shell-";
const LIVE = [/^\/api\//, /^\/ws$/, /^\/schema/, /^\/livez/, /^\/readyz/, /^\/metrics/, /^\/sw\.js$/];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith(PREFIX) && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "skip-waiting") self.skipWaiting();
  if (event.data && event.data.type === "version" && event.source) {
    event.source.postMessage({ type: "version", version: VERSION });
  }
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || LIVE.some((pattern) => pattern.test(url.pathname))) return;
  event.respondWith(fromShell(request));
});

// Cache first: the shell of one version never changes (a new version is a new worker).
// Every page address is the one-page app ("/", whatever its query says to show).
async function fromShell(request) {
  const cache = await caches.open(CACHE);
  const page = request.mode === "navigate";
  // The replay page (replay.html?table=...) is a page of its own, not the app.
  const replay = page && new URL(request.url).pathname === "/replay.html";
  const key = replay ? "/replay.html" : page ? "/" : request;
  const cached = await cache.match(key, { ignoreSearch: page });
  if (cached) return cached;
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic" && (!page || replay)) cache.put(key, response.clone());
    return response;
  } catch (err) {
    return Response.error();
  }
}
