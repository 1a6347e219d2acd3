// Chat panels: at the table (the players' channel; spectators their own channel when the
// room allows it, else the players' channel to read), in the waiting room, and in the lobby
// (the lobby-wide channel) while the player is in no room. A panel joins
// its channel with chat.watch (the reply is the recent history), then adds the live
// chat.message pushes; texts are shown with textContent, never as markup. Stickers are
// drawn here from the contract's fixed set. A player's name opens mute, follow and report
// actions (report: chat.report, stored with what was said before it for the operators).
// On a narrow screen a panel folds away and counts what arrived meanwhile.

import { CHAT_LOBBY_CHANNEL as LOBBY, CHAT_TEXT_LIMIT, PUSH_TYPES as P, STICKERS } from "../constants.js";
import { $, h } from "../dom.js";
import { errorText, once } from "../actions.js";
import { has, onLanguage, t, translateDom } from "../i18n.js";
import { DISCONNECTED } from "../net.js";
import { setFollowing } from "../progression.js";
import { on, store } from "../store.js";

// How each sticker is drawn (the contract names them; no images come from players).
const GLYPHS = {
  thumbs_up: "👍", laugh: "😂", wow: "😮", cry: "😢", angry: "😠", cool: "😎", money: "💰",
  house: "🏠", hotel: "🏨", handshake: "🤝", bankrupt: "💸", trophy: "🏆", dice: "🎲", gg: "🎉",
};
const KEPT = 200; // messages a panel keeps on screen
const NARROW = "(max-width: 720px)";

const muted = new Set(); // players this player muted (the gateway's list after each change)

// The text for a refused request: this area's catalogue for chat codes, else the page's.
function refusalText(err) {
  const key = `social.errors.${String(err && err.code).replaceAll("/", "_")}`;
  return has(key) ? t(key) : errorText(err);
}

class ChatPanel {
  constructor(id) {
    this.channel = null;
    this.wanted = null; // [channel, fallback] the view asks for
    this.joined = null; // what the current channel was joined for
    this.joining = Promise.resolve();
    this.messages = [];
    this.mayPost = false;
    this.unread = 0;
    this.list = h("ol.chat-messages", { "aria-live": "polite" });
    this.error = h("p.chat-error.error", { role: "alert" });
    this.note = h("p.chat-note.muted", { hidden: true });
    this.status = h("p.chat-status.muted", { role: "status" });
    this.input = h("input.chat-input", {
      maxlength: CHAT_TEXT_LIMIT, autocomplete: "off",
      "data-i18n-attr": "placeholder:social.chat.placeholder;aria-label:social.chat.placeholder",
    });
    this.picker = h("div.sticker-picker", { hidden: true, role: "group", "data-i18n-attr": "aria-label:social.chat.stickers" },
      Object.values(STICKERS).map((sticker) => h("button.sticker", {
        type: "button", dataset: { sticker },
        "data-i18n-attr": `aria-label:social.stickers.${sticker};title:social.stickers.${sticker}`,
        onclick: () => { this.picker.hidden = true; this.post({ sticker }); },
      }, GLYPHS[sticker] || sticker)));
    this.form = h("form.chat-form", {
      onsubmit: (ev) => {
        ev.preventDefault();
        const text = this.input.value.trim();
        if (text) this.post({ text });
      },
    }, this.input,
    h("button.sticker-open", {
      type: "button", "data-i18n-attr": "aria-label:social.chat.stickers;title:social.chat.stickers",
      onclick: () => { this.picker.hidden = !this.picker.hidden; },
    }, "🙂"),
    h("button.primary", { type: "submit", "data-i18n": "social.chat.send" }));
    this.badge = h("span.chat-unread", { hidden: true, "data-i18n-attr": "aria-label:social.chat.unread" });
    this.toggle = h("button.chat-toggle", {
      type: "button", "aria-expanded": "true",
      onclick: () => this.setOpen(this.root.classList.contains("folded")),
    }, h("span", { "data-i18n": "social.chat.title" }), this.badge);
    this.body = h("div.chat-body", {}, this.list, this.note, this.status, this.error, this.form, this.picker);
    this.root = h("section.card.compact.chat", { id }, this.toggle, this.body);
    translateDom(this.root);
    this.setOpen(!window.matchMedia(NARROW).matches);
    this.render(); // no channel yet: nothing to write in
  }

  setOpen(open) {
    this.root.classList.toggle("folded", !open);
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) {
      this.unread = 0;
      this.renderBadge();
    }
  }

  renderBadge() {
    this.badge.hidden = this.unread === 0;
    this.badge.textContent = String(this.unread);
  }

  // Show `channel` (or, if chat refuses it or lets this player only read it, `fallback`);
  // null leaves the channel. Joins run one after another, so a slow join never undoes a
  // newer one.
  show(channel, fallback = null) {
    const wanted = channel ? [channel, fallback] : null;
    if (JSON.stringify(wanted) === JSON.stringify(this.wanted)) return;
    this.wanted = wanted;
    this.joining = this.joining.then(() => this.join(), () => this.join());
  }

  // After a reconnect the new socket watches nothing: join again what is shown.
  rejoin() {
    this.joined = null;
    this.joining = this.joining.then(() => this.join(), () => this.join());
  }

  async join() {
    const wanted = this.wanted;
    if (JSON.stringify(wanted) === JSON.stringify(this.joined)) return;
    const conn = store.conn;
    if (this.channel && conn) conn.request("chat.unwatch", { channel: this.channel }).catch(() => {});
    this.channel = null;
    this.joined = wanted;
    this.messages = [];
    this.error.textContent = "";
    this.status.textContent = "";
    this.render();
    if (!wanted || !conn) return;
    const candidates = wanted.filter(Boolean);
    for (const channel of candidates) {
      try {
        const joined = await conn.request("chat.watch", { channel });
        if (!joined.may_post && channel !== candidates[candidates.length - 1]) {
          // e.g. the spectators' channel of a room without spectator chat: read the next one
          conn.request("chat.unwatch", { channel }).catch(() => {});
          continue;
        }
        this.channel = channel;
        this.mayPost = joined.may_post;
        this.messages = joined.messages.filter((m) => !muted.has(m.sender_id));
        this.render();
        return;
      } catch (err) {
        if (err.code === DISCONNECTED) return; // joined again when the socket is back
        if (channel === candidates[candidates.length - 1]) this.showError(err);
      }
    }
  }

  receive(push) {
    if (push.channel !== this.channel || muted.has(push.message.sender_id)) return;
    this.add(push.message);
    if (this.root.classList.contains("folded") && push.message.sender_id !== store.session?.player_id) {
      this.unread += 1;
      this.renderBadge();
    }
  }

  add(message) {
    if (this.messages.some((m) => m.message_id === message.message_id)) return;
    this.messages.push(message);
    if (this.messages.length > KEPT) this.messages.splice(0, this.messages.length - KEPT);
    this.render();
  }

  // Through `once`: Send double clicked, or Enter pressed twice, posted the text twice, and
  // the chat service refused the second ("You just sent that.", shown as an error). The text
  // stays in the input until its post is answered.
  async post(fields) {
    await once(`chat.post ${this.root.id} ${JSON.stringify(fields)}`, async () => {
      await this.joining; // a message written while the panel (re)joins goes to the new channel
      if (!this.channel) return;
      this.error.textContent = "";
      delete this.error.dataset.code;
      const posted = await store.conn.request("chat.post", { channel: this.channel, ...fields });
      if (fields.text && this.input.value.trim() === fields.text) this.input.value = "";
      this.add(posted.message);
    }, (err) => this.showError(err));
  }

  showError(err) {
    this.error.dataset.code = err.code || "";
    this.error.textContent = refusalText(err);
  }

  dropSender(playerId) {
    this.messages = this.messages.filter((m) => m.sender_id !== playerId);
    this.render();
  }

  render() {
    const me = store.session && store.session.player_id;
    this.form.hidden = !this.channel || !this.mayPost;
    this.picker.hidden = this.picker.hidden || this.form.hidden;
    this.note.hidden = !this.channel || this.mayPost;
    this.note.textContent = t("social.chat.read_only");
    if (!this.messages.length) {
      this.list.replaceChildren(h("li.chat-empty.muted", {}, t("social.chat.empty")));
      return;
    }
    this.list.replaceChildren(...this.messages.map((m) => {
      const mine = m.sender_id === me;
      const name = mine || m.bot
        ? h("span.chat-name", {}, m.sender_name)
        : h("button.link.chat-name", { type: "button", onclick: (ev) => this.actions(ev.target, m) }, m.sender_name);
      const body = m.sticker
        ? h("span.chat-sticker", { role: "img", "aria-label": t(`social.stickers.${m.sticker}`), title: t(`social.stickers.${m.sticker}`) },
          GLYPHS[m.sticker] || m.sticker)
        : h("span.chat-text", { text: m.text });
      return h(`li${mine ? ".mine" : ""}${m.bot ? ".bot" : ""}`, { dataset: { message: m.message_id, sender: m.sender_id } },
        name, " ", body);
    }));
    this.list.scrollTop = this.list.scrollHeight;
  }

  // The actions on another player's name: mute (or unmute) and follow.
  actions(anchor, message) {
    const li = anchor.closest("li");
    const open = li.querySelector(".chat-actions");
    if (open) {
      open.remove();
      return;
    }
    const isMuted = muted.has(message.sender_id);
    li.append(h("span.chat-actions", {},
      h("button.link", { type: "button", dataset: { action: "mute" }, onclick: () => mute(message.sender_id, !isMuted) },
        t(isMuted ? "social.chat.unmute" : "social.chat.mute")),
      h("button.link", {
        type: "button", dataset: { action: "follow" },
        onclick: async (ev) => {
          try {
            await setFollowing(message.sender_id, true);
            ev.target.textContent = t("social.follows.following_now", { name: message.sender_name });
            ev.target.disabled = true;
          } catch (err) {
            this.showError(err);
          }
        },
      }, t("social.follows.follow")),
      h("button.link", {
        type: "button", dataset: { action: "report" },
        onclick: (ev) => this.report(message, ev.target),
      }, t("social.chat.report"))));
  }

  // Report a message to the operators; the confirmation stays until the panel changes channel.
  async report(message, button) {
    if (!this.channel) return;
    this.error.textContent = "";
    delete this.error.dataset.code;
    button.disabled = true;
    try {
      await store.conn.request("chat.report", { channel: this.channel, message_id: message.message_id, reason: "" });
      this.status.textContent = t("social.chat.reported");
      button.closest(".chat-actions")?.remove();
    } catch (err) {
      button.disabled = false;
      this.showError(err);
    }
  }
}

const panels = { table: null, room: null, lobby: null };

async function mute(playerId, on) {
  try {
    const reply = await store.conn.request("chat.mute", { target: playerId, muted: on });
    muted.clear();
    for (const id of reply.muted) muted.add(id);
    for (const panel of Object.values(panels)) {
      if (on) panel.dropSender(playerId);
      else panel.render();
    }
  } catch (err) {
    panels.table.showError(err);
  }
}

// The mutes remembered from earlier sessions, so their names offer "unmute".
async function loadMutes() {
  try {
    const reply = await store.conn.request("chat.mutes");
    muted.clear();
    for (const id of reply.muted) muted.add(id);
  } catch { /* no chat service: nothing to unmute either */ }
}

function tableChannels() {
  const tb = store.table;
  if (store.screen !== "table" || !tb || !tb.view) return [null];
  const me = store.session && store.session.player_id;
  const seated = (tb.view.seats || []).some((seat) => seat.player_id === me);
  // players: their channel; spectators: theirs when the room lets them write, else the players'
  return seated ? [`t_${tb.id}`] : [`s_${tb.id}`, `t_${tb.id}`];
}

export function mount() {
  panels.table = new ChatPanel("chat-table");
  panels.room = new ChatPanel("chat-room");
  panels.lobby = new ChatPanel("chat-lobby");
  const side = $("#view-table .side");
  side.insertBefore(panels.table.root, side.querySelector(".log-card"));
  $("#my-room").after(panels.room.root);
  $("#view-lobby").append(panels.lobby.root);
  const lobbyChannel = () => (store.screen === "lobby" && !store.room ? LOBBY : null);
  on(`push:${P.CHAT_MESSAGE}`, (push) => { for (const panel of Object.values(panels)) panel.receive(push); });
  on("table", () => panels.table.show(...tableChannels()));
  on("screen", () => {
    panels.table.show(...tableChannels());
    panels.room.show(store.screen === "lobby" && store.room ? `r_${store.room.room_id}` : null);
    panels.lobby.show(lobbyChannel());
  });
  on("room", (room) => {
    panels.room.root.hidden = !room;
    panels.room.show(room && store.screen === "lobby" ? `r_${room.room_id}` : null);
    panels.lobby.root.hidden = Boolean(room);
    panels.lobby.show(lobbyChannel());
  });
  on("status", (status) => {
    if (status !== "online") return;
    loadMutes();
    for (const panel of Object.values(panels)) panel.rejoin();
  });
  on("session", (session) => { if (!session) muted.clear(); });
  onLanguage(() => { for (const panel of Object.values(panels)) { translateDom(panel.root); panel.render(); } });
  panels.room.root.hidden = true;
}
