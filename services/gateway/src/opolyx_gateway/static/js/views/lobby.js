// The lobby: the player's running game or room, a new room, the public rooms.
// A room's chat settings (spectator chat, bot stickers) belong to the chat service: the
// creator picks them with the new room and may change them while the room waits
// (chat.settings); the chat service enforces them.

import { LOBBY_ACTIONS as L, ROOM_STATUSES } from "../constants.js";
import { $, h, singleClick, toast } from "../dom.js";
import {
  createRoom, errorText, joinRoom, leaveRoom, refreshRooms, returnToGame, roomAct, startGame,
} from "../actions.js";
import { onLanguage, t } from "../i18n.js";
import { modeName } from "../names.js";
import { on, store } from "../store.js";

// The chat service's defaults (opolyx_contracts.chat.ChatRoomSettings), until it answers.
const CHAT_DEFAULTS = { spectator_chat: false, bot_stickers: true };
let chatSettings = null; // { room, spectator_chat, bot_stickers } of the shown room

let chatRequests = Promise.resolve(); // one at a time: a read never overtakes a change

function roomChatSettings(roomId, changes = {}) {
  chatRequests = chatRequests.then(async () => {
    try {
      chatSettings = await store.conn.request("chat.settings", { room: roomId, ...changes });
    } catch (err) {
      // a read that fails (no chat service) leaves the defaults shown; a change says why
      if (Object.keys(changes).length) toast(errorText(err));
    }
    if (store.room && store.room.room_id === roomId) renderRoom();
  });
  return chatRequests;
}

function chatSwitch(id, key, setting, roomId) {
  const checked = chatSettings && chatSettings.room === roomId ? chatSettings[setting] : CHAT_DEFAULTS[setting];
  return h("label.check", {},
    h("input", {
      id, type: "checkbox", checked,
      onchange: (ev) => roomChatSettings(roomId, { [setting]: ev.target.checked }),
    }), " ", h("span", {}, t(key)));
}

function renderRooms() {
  const list = $("#rooms");
  const rooms = [...store.rooms.values()].filter((r) => r.status === ROOM_STATUSES.OPEN && r.public);
  if (!rooms.length) {
    list.replaceChildren(h("li.empty", {}, t("ui.lobby.no_rooms")));
    return;
  }
  const busy = Boolean(store.room || store.myGame);
  list.replaceChildren(...rooms.map((r) => {
    const mineHere = store.room && store.room.room_id === r.room_id;
    return h("li", { dataset: { room: r.room_id } },
      h("div", {},
        h("strong", {}, modeName(r.mode)), " ",
        h("span.tag", {}, t("ui.lobby.seats_taken", { taken: r.members.length, count: r.seat_count })), " ",
        h("span.muted", {}, r.members.map((m) => m.name).join(", "))),
      mineHere ? h("span.tag", {}, t("ui.lobby.your_room"))
        : h("button", { onclick: () => joinRoom(r.room_id), disabled: r.members.length >= r.seat_count || busy },
          t("ui.lobby.join")));
  }));
}

// A game the player left for the lobby is still running: the way back to it.
function renderMyGame() {
  const card = $("#my-game");
  card.hidden = !store.myGame;
  $("#create-card").hidden = Boolean(store.room || store.myGame);
}

function renderRoom() {
  const card = $("#my-room");
  const room = store.room;
  renderMyGame();
  card.hidden = !room;
  if (!room) {
    $("#my-room-body").replaceChildren();
    return;
  }
  const me = store.session.player_id;
  const creator = room.creator === me;
  const full = room.members.length >= room.seat_count;
  const parts = [
    h("p", {}, h("strong", {}, t("ui.room.title", { mode: modeName(room.mode) })), " · ",
      t("ui.room.seats", { taken: room.members.length, count: room.seat_count }), " · ",
      room.public ? t("ui.room.public") : t("ui.room.private")),
  ];
  if (!room.public && store.invite) {
    const link = `${location.origin}/?room=${encodeURIComponent(room.room_id)}&invite=${encodeURIComponent(store.invite)}`;
    const input = h("input", { id: "invite-link", readonly: true, value: link, "aria-label": t("ui.room.invite_link") });
    parts.push(h("div.invite", {}, input,
      h("button", {
        type: "button",
        onclick: () => {
          input.select();
          navigator.clipboard?.writeText(link).then(() => toast(t("ui.room.link_copied")), () => {});
        },
      }, t("ui.room.copy"))));
  }
  parts.push(h("ul.members", { id: "members" }, room.members.map((m) => h("li", {},
    h("span", {}, m.name, " ",
      m.bot ? h("span.tag", {}, m.style ? t("ui.room.bot_style", { style: botStyle(m.style) }) : t("ui.room.bot")) : null,
      m.player_id === room.creator ? h("span.tag", {}, t("ui.room.creator")) : null),
    creator && m.player_id !== me
      ? h("button.link", { onclick: singleClick(() => roomAct(m.bot ? L.REMOVE_BOT : L.KICK, { target: m.player_id })) },
        m.bot ? t("ui.room.remove") : t("ui.room.kick"))
      : null))));
  if (creator) {
    if (!chatSettings || chatSettings.room !== room.room_id) {
      chatSettings = { room: room.room_id, ...CHAT_DEFAULTS };
      roomChatSettings(room.room_id); // what the chat service holds
    }
    parts.push(h("div.row-form.room-chat-settings", {},
      chatSwitch("room-spectator-chat", "social.chat.spectator_chat", "spectator_chat", room.room_id),
      chatSwitch("room-bot-stickers", "social.chat.bot_stickers", "bot_stickers", room.room_id)));
  }
  parts.push(h("div.actions", {},
    // a double click adds one bot, as a double click on Remove or Kick asks once (singleClick)
    creator ? h("button", { id: "add-bot", disabled: full, onclick: singleClick(() => roomAct(L.ADD_BOT)) }, t("ui.room.add_bot")) : null,
    creator ? h("button.primary", { id: "start-game", disabled: room.members.length < 2, onclick: startGame }, t("ui.room.start")) : null,
    creator ? null : h("span.muted", {}, t("ui.room.waiting")),
    h("button.link", { id: "leave-room", onclick: leaveRoom }, t("ui.room.leave"))));
  $("#my-room-body").replaceChildren(...parts);
}

function botStyle(style) {
  const key = `ui.bot_styles.${style}`;
  const text = t(key);
  return text === key ? style : text;
}

function renderModes() {
  const select = $("#create-mode");
  const chosen = select.value;
  select.replaceChildren(...Object.keys(store.modes).map((name) =>
    h("option", { value: name, selected: name === chosen }, modeName(name))));
  if (!chosen) select.dispatchEvent(new Event("change"));
}

export function mount() {
  $("#create-room").before(
    h("label.check", {}, h("input", { id: "create-spectator-chat", type: "checkbox" }), " ",
      h("span", { "data-i18n": "social.chat.spectator_chat" }, t("social.chat.spectator_chat"))),
    h("label.check", {}, h("input", { id: "create-bot-stickers", type: "checkbox", checked: true }), " ",
      h("span", { "data-i18n": "social.chat.bot_stickers" }, t("social.chat.bot_stickers"))));
  $("#create-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const chat = {
      spectator_chat: $("#create-spectator-chat").checked,
      bot_stickers: $("#create-bot-stickers").checked,
    };
    await createRoom({
      mode: $("#create-mode").value,
      seats: Number($("#create-seats").value),
      isPrivate: $("#create-private").checked,
      autopilot: $("#create-autopilot").checked,
    });
    const room = store.room;
    const changes = Object.fromEntries(Object.entries(chat).filter(([k, v]) => v !== CHAT_DEFAULTS[k]));
    if (room && room.creator === store.session.player_id && Object.keys(changes).length) {
      await roomChatSettings(room.room_id, changes);
    }
  });
  $("#join-code-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const [room, code] = $("#join-code").value.trim().split("/");
    if (room) joinRoom(room, code);
  });
  $("#refresh-rooms").addEventListener("click", refreshRooms);
  $("#return-to-game").addEventListener("click", returnToGame);
  $("#create-mode").addEventListener("change", () => {
    const allowed = store.modes[$("#create-mode").value].allowed_seats;
    const seats = $("#create-seats");
    const chosen = Number(seats.value) || 4;
    seats.replaceChildren(...allowed.map((n) => h("option", { value: n, selected: n === chosen }, n)));
  });
  on("rooms", renderRooms);
  on("room", renderRoom);
  on("mygame", () => { renderMyGame(); renderRooms(); });
  on("removed-from-room", () => toast(t("ui.room.removed")));
  on("screen", (screen) => { if (screen === "lobby") { renderRoom(); renderRooms(); } });
  onLanguage(() => { renderModes(); renderRoom(); renderRooms(); });
  renderModes();
}
