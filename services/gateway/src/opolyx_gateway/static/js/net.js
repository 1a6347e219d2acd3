// The gateway connection: REST sign-in and one websocket with replies, pushes and reconnects.

import {
  AUTH_ERRORS, BATCH_QUERY, CLOSE_CODES, ONCE_PER_ID_TYPES, REPLY_TYPE, RESEND_WINDOW_SECONDS,
} from "./constants.js";

// This page's own code for a request cut short by a lost connection (never sent by a server).
export const DISCONNECTED = "net/disconnected";
const AUTH_CODES = new Set(Object.values(AUTH_ERRORS));
// Requests the gateway runs once per message id (the contract's list: table commands, lobby
// actions, chat posts, mutes, reports, room chat settings, the autopilot switch), so one cut
// short by a lost connection is sent again with the same id after the reconnect and runs
// once. The other requests fail with DISCONNECTED: they only read or follow (a watch), and
// the page asks again when the socket is back (onReady), where a resent watch would follow
// twice. A read of a resent type (a lobby "list") is answered afresh, which does no harm.
const RETRIED_TYPES = new Set(Object.values(ONCE_PER_ID_TYPES));
// No later than the gateway is sure to remember the reply: a later resend could run twice.
const RETRY_WINDOW_MS = RESEND_WINDOW_SECONDS * 1000;
// setTimeout's longest delay; a later renewal is rescheduled when this one fires.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

// Message ids unique to this page (a reload starts a new prefix): an id is the key of a
// command's retries, so two pages of one player never share one.
function idPrefix() {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("") + "-";
}

export class GatewayError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export async function signIn(name) {
  const response = await fetch("/api/session", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new GatewayError(body.code || "http/" + response.status, body.message || "");
  }
  return body;
}

// A fresh session for a token that is still valid (the same player, a new expiry).
export async function renewSession(token) {
  const response = await fetch("/api/session/renew", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new GatewayError(body.code || "http/" + response.status, body.message || "");
  }
  return body;
}

// One websocket: `request(type, fields)` resolves with the reply's data or rejects with a
// GatewayError; pushes go to `onPush`; the socket reconnects by itself and calls `onReady`
// after every successful hello so the caller can resubscribe. Before the token expires it
// is renewed and the socket adopts the new one (`onSession(session)` to keep it), so the
// player never sees the expiry; a change cut short by a reconnect is sent again (RETRIED_TYPES).
export class Connection {
  constructor(token, { onPush, onReady, onStatus, onAuthFailed, onSession }) {
    this.token = token;
    this.onPush = onPush;
    this.onReady = onReady;
    this.onStatus = onStatus;
    this.onAuthFailed = onAuthFailed;
    this.onSession = onSession || (() => {});
    this.prefix = idPrefix();
    this.nextId = 1;
    this.pending = new Map();
    this.retry = [];
    this.renewal = null;
    this.socket = null;
    this.ready = false;
    this.closedByUs = false;
    this.backoff = 250;
    this.queue = [];
    window.addEventListener("pagehide", () => this.close());
  }

  open() {
    if (!navigator.onLine) {
      // no network: try again the moment the browser has one (no doomed attempts meanwhile)
      this.onStatus("offline");
      window.addEventListener("online", () => { if (!this.closedByUs) this.open(); }, { once: true });
      return;
    }
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    // batched: a frame may hold several messages (a command's update and its reply)
    const socket = new WebSocket(`${scheme}//${location.host}/ws?${BATCH_QUERY}`);
    this.socket = socket;
    this.onStatus("connecting");
    socket.addEventListener("open", () => this.hello(socket));
    socket.addEventListener("message", (ev) => this.receive(ev.data));
    socket.addEventListener("close", (ev) => this.closed(socket, ev));
    socket.addEventListener("error", () => {});
  }

  async hello(socket) {
    try {
      const data = await this.send(socket, "hello", { token: this.token });
      this.ready = true;
      this.backoff = 250;
      this.onStatus("online");
      this.scheduleRenewal(data.expires_at);
      for (const item of this.retry.splice(0)) this.resend(item);
      const queued = this.queue.splice(0);
      for (const item of queued) this.dispatch(item);
      this.onReady(data);
    } catch (err) {
      if (AUTH_CODES.has(err.code)) {
        this.closedByUs = true;
        this.onAuthFailed(err);
      }
    }
  }

  // Renew when most of the token's life is gone (at the latest a minute before, or half
  // way for a short one), then say hello again with the new token on the open socket.
  scheduleRenewal(expiresAt) {
    clearTimeout(this.renewal);
    const left = expiresAt * 1000 - Date.now();
    const lead = Math.min(left / 2, Math.max(60_000, left / 10));
    this.renewal = setTimeout(() => this.renew(expiresAt), Math.min(LONGEST_TIMER_MS, Math.max(0, left - lead)));
  }

  async renew(expiresAt) {
    if (this.closedByUs) return;
    if (expiresAt * 1000 - Date.now() > LONGEST_TIMER_MS) {
      this.scheduleRenewal(expiresAt);
      return;
    }
    try {
      const session = await renewSession(this.token);
      this.token = session.token;
      this.onSession(session);
      if (this.ready && this.socket && this.socket.readyState === WebSocket.OPEN) {
        const data = await this.send(this.socket, "hello", { token: this.token });
        this.scheduleRenewal(data.expires_at);
      }
    } catch (err) {
      if (AUTH_CODES.has(err.code)) return; // the gateway closes the socket and says why
      // the network or the gateway is down: try again shortly, while the token lasts
      const left = expiresAt * 1000 - Date.now();
      if (left > 0) this.renewal = setTimeout(() => this.renew(expiresAt), Math.min(15_000, left / 2));
    }
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    // A batched frame holds several messages, in the order they are to be read.
    for (const message of Array.isArray(frame) ? frame : [frame]) this.handle(message);
  }

  handle(message) {
    if (message.type === REPLY_TYPE) {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.ok) waiter.resolve(message.data);
      else waiter.reject(new GatewayError(message.error.code, message.error.message));
      return;
    }
    this.onPush(message);
  }

  closed(socket, ev) {
    if (socket !== this.socket) return;
    this.ready = false;
    const unauthorized = ev.code === CLOSE_CODES.UNAUTHORIZED;
    for (const [, waiter] of this.pending) {
      const retried = RETRIED_TYPES.has(waiter.type) && Date.now() - waiter.sentAt < RETRY_WINDOW_MS;
      if (retried && !unauthorized) this.retry.push(waiter);
      else waiter.reject(new GatewayError(DISCONNECTED, "connection lost; retrying"));
    }
    this.pending.clear();
    if (unauthorized) {
      this.closedByUs = true;
      clearTimeout(this.renewal);
      for (const waiter of this.retry.splice(0)) {
        waiter.reject(new GatewayError(DISCONNECTED, "signed out"));
      }
      const code = AUTH_CODES.has(ev.reason) ? ev.reason : AUTH_ERRORS.INVALID_TOKEN;
      this.onAuthFailed(new GatewayError(code, ev.reason || "signed out"));
      return;
    }
    if (this.closedByUs) return;
    this.onStatus("offline");
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, 5000);
    setTimeout(() => this.open(), wait);
  }

  send(socket, type, fields) {
    const id = this.prefix + this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { id, type, fields, resolve, reject, sentAt: Date.now() });
      socket.send(JSON.stringify({ id, type, ...fields }));
    });
  }

  // The same message again, under its first id: the gateway answers it once.
  resend(waiter) {
    this.pending.set(waiter.id, waiter);
    this.socket.send(JSON.stringify({ id: waiter.id, type: waiter.type, ...waiter.fields }));
  }

  dispatch(item) {
    this.send(this.socket, item.type, item.fields).then(item.resolve, item.reject);
  }

  // Sends now when connected, else as soon as the socket is back.
  request(type, fields = {}) {
    return new Promise((resolve, reject) => {
      const item = { type, fields, resolve, reject };
      if (this.ready && this.socket && this.socket.readyState === WebSocket.OPEN) this.dispatch(item);
      else this.queue.push(item);
    });
  }

  close() {
    this.closedByUs = true;
    clearTimeout(this.renewal);
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.close(1000, "bye");
  }
}
