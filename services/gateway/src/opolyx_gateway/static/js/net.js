// The gateway connection: REST sign-in and one websocket with replies, pushes and reconnects.

import { AUTH_ERRORS, CLOSE_CODES } from "./constants.js";

// This page's own code for a request cut short by a lost connection (never sent by a server).
export const DISCONNECTED = "net/disconnected";
const AUTH_CODES = new Set(Object.values(AUTH_ERRORS));

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
    throw new GatewayError(body.code || "http/" + response.status, body.message || "Sign-in failed");
  }
  return body;
}

// One websocket: `request(type, fields)` resolves with the reply's data or rejects with a
// GatewayError; pushes go to `onPush`; the socket reconnects by itself and calls `onReady`
// after every successful hello so the caller can resubscribe.
export class Connection {
  constructor(token, { onPush, onReady, onStatus, onAuthFailed }) {
    this.token = token;
    this.onPush = onPush;
    this.onReady = onReady;
    this.onStatus = onStatus;
    this.onAuthFailed = onAuthFailed;
    this.nextId = 1;
    this.pending = new Map();
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
    const socket = new WebSocket(`${scheme}//${location.host}/ws`);
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

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.type === "reply") {
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
    for (const [, waiter] of this.pending) {
      waiter.reject(new GatewayError(DISCONNECTED, "connection lost; retrying"));
    }
    this.pending.clear();
    if (ev.code === CLOSE_CODES.UNAUTHORIZED) {
      this.closedByUs = true;
      this.onAuthFailed(new GatewayError(AUTH_ERRORS.INVALID_TOKEN, ev.reason || "signed out"));
      return;
    }
    if (this.closedByUs) return;
    this.onStatus("offline");
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, 5000);
    setTimeout(() => this.open(), wait);
  }

  send(socket, type, fields) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, type, ...fields }));
    });
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
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.close(1000, "bye");
  }
}
