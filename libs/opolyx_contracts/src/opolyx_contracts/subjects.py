"""NATS subject, stream and bucket names: the one place they are spelled (ARCHITECTURE.md).

Subjects that carry an id are built by functions so an id can never smuggle in a wildcard
or an extra token.
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "ACTIVE_GAMES_BUCKET",
    "BOTS_CONSUMER",
    "BOTS_DECIDE",
    "BOTS_DECISIONS_STREAM",
    "BOTS_QUEUE",
    "CHAT_BOT_MOMENTS_BUCKET",
    "CHAT_BOT_STICKER",
    "CHAT_HISTORY_ANY",
    "CHAT_MUTE",
    "CHAT_MUTES",
    "CHAT_MUTES_BUCKET",
    "CHAT_POSTS_ANY",
    "CHAT_POST_IDS_BUCKET",
    "CHAT_REPORT",
    "CHAT_REPORTS_BUCKET",
    "CHAT_ROOMS_BUCKET",
    "CHAT_SETTINGS",
    "CHAT_STREAM",
    "CHAT_STREAM_SUBJECTS",
    "DEFAULT_TABLE_PARTITIONS",
    "GAMES_STREAM",
    "GAMES_STREAM_SUBJECTS",
    "GAME_FINISHED",
    "GAME_SEAT_OUT",
    "GATEWAY_PLAYERS_BUCKET",
    "LOBBY_CMD",
    "LOBBY_EVENTS",
    "LOBBY_MEMBER_EVENTS_ANY",
    "PREFIX",
    "PROGRESSION_ANY",
    "ROOMS_BUCKET",
    "TABLES_BUCKET",
    "TABLE_BOT_COMMANDS_ANY",
    "TABLE_COMMANDS_ANY",
    "TABLE_CREATE",
    "TABLE_EVENTS_STREAM",
    "TABLE_EVENTS_SUBJECTS",
    "TABLE_INSTANCES_ALIVE_ANY",
    "TABLE_LEASES_BUCKET",
    "TABLE_PARTITIONS_ANY",
    "TABLE_PARTITION_CREATE_ANY",
    "TABLE_SEATS_ANY",
    "TABLE_TRADE_PREVIEWS_ANY",
    "TABLE_VIEWS_ANY",
    "chat_history",
    "chat_messages",
    "chat_post",
    "is_valid_token",
    "progression",
    "table_bot_command",
    "table_command",
    "table_command_wildcard",
    "table_events",
    "table_instance_alive",
    "table_partition",
    "table_partition_create",
    "table_partition_subjects",
    "table_seat",
    "table_trade_preview",
    "table_update",
    "table_update_wildcard",
    "table_view",
    "table_view_wildcard",
]

PREFIX = "opolyx"

# Table service
TABLE_CREATE = f"{PREFIX}.table.create"
TABLE_EVENTS_STREAM = "TABLE_EVENTS"
TABLE_EVENTS_SUBJECTS = f"{PREFIX}.table.*.events"
TABLES_BUCKET = "tables"
TABLE_LEASES_BUCKET = "table_leases"
DEFAULT_TABLE_PARTITIONS = 16
"""Every client and every table-service instance must agree on this number."""
# Patterns covering every subject of one kind: the NATS authorization rules (permissions.py).
TABLE_COMMANDS_ANY = f"{PREFIX}.table.*.*.cmd"
"""Players' commands (sent by the gateway only): never for a bot seat."""
TABLE_BOT_COMMANDS_ANY = f"{PREFIX}.table.*.*.bot"
"""Bots' commands (sent by the bots role only): only for bot seats and seats on autopilot."""
TABLE_SEATS_ANY = f"{PREFIX}.table.*.*.seat"
"""Seat presence and the player's own autopilot switch (sent by the gateway only)."""
TABLE_VIEWS_ANY = f"{PREFIX}.table.*.*.view"
TABLE_TRADE_PREVIEWS_ANY = f"{PREFIX}.table.*.*.trade_preview"
TABLE_PARTITION_CREATE_ANY = f"{PREFIX}.table.*.create"
TABLE_PARTITIONS_ANY = f"{PREFIX}.table.*.>"
"""Covers what a partition owner subscribes to (`table_partition_subjects`)."""
TABLE_INSTANCES_ALIVE_ANY = f"{PREFIX}.tables.alive.*"
"""Every table instance's liveness subject (`table_instance_alive`)."""

# Bots
BOTS_DECIDE = f"{PREFIX}.bots.decide"
BOTS_QUEUE = "bots"
BOTS_DECISIONS_STREAM = "BOTS_DECISIONS"
"""Work-queue stream over `BOTS_DECIDE`: a request waits there until a worker acks it."""
BOTS_CONSUMER = "bots"
"""The one durable pull consumer every bot worker fetches from (STACK.md trap 6)."""

# Finished games and seats that went out
GAMES_STREAM = "GAMES"
GAME_FINISHED = f"{PREFIX}.game.finished"
GAME_SEAT_OUT = f"{PREFIX}.game.seat_out"
GAMES_STREAM_SUBJECTS = f"{PREFIX}.game.>"

# Lobby
LOBBY_CMD = f"{PREFIX}.lobby.cmd"
LOBBY_EVENTS = f"{PREFIX}.lobby.events"
LOBBY_MEMBER_EVENTS_ANY = f"{PREFIX}.lobby.player.*.events"
"""Every player's own lobby events (`opolyx_contracts.lobby.lobby_member_events`)."""
ROOMS_BUCKET = "rooms"
ACTIVE_GAMES_BUCKET = "active_games"

# Chat
CHAT_STREAM = "CHAT"
CHAT_STREAM_SUBJECTS = f"{PREFIX}.chat.*.messages"
CHAT_POSTS_ANY = f"{PREFIX}.chat.*.post"
CHAT_HISTORY_ANY = f"{PREFIX}.chat.*.history"
CHAT_MUTE = f"{PREFIX}.chat.mute"
CHAT_MUTES = f"{PREFIX}.chat.mutes"
CHAT_REPORT = f"{PREFIX}.chat.report"
CHAT_SETTINGS = f"{PREFIX}.chat.settings"
CHAT_BOT_STICKER = f"{PREFIX}.chat.bot_sticker"
"""Three tokens: never taken for a channel's `post`/`history`/`messages` subject."""
CHAT_MUTES_BUCKET = "chat_mutes"
CHAT_REPORTS_BUCKET = "chat_reports"
CHAT_ROOMS_BUCKET = "chat_rooms"
CHAT_BOT_MOMENTS_BUCKET = "chat_bot_moments"
"""One key per bot sticker moment taken (table, occasion, moment): a repeat is refused."""
CHAT_POST_IDS_BUCKET = "chat_post_ids"
"""One key per player and post `request_id` (`opolyx_contracts.chat.ChatPost`), created once:
a repeated request gets the post it made."""

# Progression
PROGRESSION_ANY = f"{PREFIX}.progression.*"

# Gateway
GATEWAY_PLAYERS_BUCKET = "gateway_players"

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def is_valid_token(token: str) -> bool:
    """True when `token` can stand as one subject token (no dots, wildcards or spaces)."""
    return bool(_TOKEN.match(token))


def _token(kind: str, token: str) -> str:
    if not is_valid_token(token):
        raise ValueError(f"{kind} {token!r} is not a valid subject token ([A-Za-z0-9_-]{{1,128}})")
    return token


def table_partition(table_id: str, partitions: int = DEFAULT_TABLE_PARTITIONS) -> int:
    """The partition a table belongs to: a stable hash, the same in every process and language."""
    digest = hashlib.sha256(table_id.encode()).digest()
    return int.from_bytes(digest[:4], "big") % partitions


def table_command(table_id: str, partitions: int = DEFAULT_TABLE_PARTITIONS) -> str:
    """Request-reply subject for the commands of one table (answered by its owning instance)."""
    tid = _token("table id", table_id)
    return f"{PREFIX}.table.{table_partition(tid, partitions)}.{tid}.cmd"


def table_bot_command(table_id: str, partitions: int = DEFAULT_TABLE_PARTITIONS) -> str:
    """Request-reply subject for the bots' commands to one table: a subject of its own, so
    the table knows a command came from a bot worker (NATS lets only the bots role send
    here, and only the gateway on `table_command`)."""
    tid = _token("table id", table_id)
    return f"{PREFIX}.table.{table_partition(tid, partitions)}.{tid}.bot"


def table_seat(table_id: str, partitions: int = DEFAULT_TABLE_PARTITIONS) -> str:
    """Request-reply subject on which the gateway reports a seated player's presence (and
    their autopilot switch) to one table."""
    tid = _token("table id", table_id)
    return f"{PREFIX}.table.{table_partition(tid, partitions)}.{tid}.seat"


def table_command_wildcard(partition: int) -> str:
    """What an instance owning `partition` subscribes to for commands."""
    return f"{PREFIX}.table.{partition}.*.cmd"


def table_partition_create(partition: int) -> str:
    """Request-reply subject on which the owner of `partition` creates a table there."""
    return f"{PREFIX}.table.{int(partition)}.create"


def table_instance_alive(instance_id: str) -> str:
    """Request-reply subject a table instance's lease connection answers while it lives: a
    peer asking gets "no responders" the moment that connection is gone (a killed process),
    and takes the instance's leases over without waiting for them to expire."""
    token = instance_id if is_valid_token(instance_id) else _hashed(instance_id)
    return f"{PREFIX}.tables.alive.{token}"


def _hashed(text: str) -> str:
    return "h" + hashlib.sha256(text.encode()).hexdigest()[:32]


def table_partition_subjects(partition: int) -> str:
    """Everything addressed to the owner of `partition` (commands, views, creates)."""
    return f"{PREFIX}.table.{int(partition)}.>"


def table_view(table_id: str, partitions: int = DEFAULT_TABLE_PARTITIONS) -> str:
    """Request-reply subject for the public view of one table (snapshot for resyncing clients)."""
    tid = _token("table id", table_id)
    return f"{PREFIX}.table.{table_partition(tid, partitions)}.{tid}.view"


def table_trade_preview(table_id: str, partitions: int = DEFAULT_TABLE_PARTITIONS) -> str:
    """Request-reply subject on which a table judges a drafted trade offer (changes nothing)."""
    tid = _token("table id", table_id)
    return f"{PREFIX}.table.{table_partition(tid, partitions)}.{tid}.trade_preview"


def table_view_wildcard(partition: int) -> str:
    return f"{PREFIX}.table.{partition}.*.view"


def table_events(table_id: str) -> str:
    """JetStream subject (stream TABLE_EVENTS) of one table's events."""
    return f"{PREFIX}.table.{_token('table id', table_id)}.events"


def table_update(table_id: str) -> str:
    """Core NATS subject (not stored) of a table's `TableUpdate`: its events plus the view and
    the pending decisions after them, published once per stored batch for live watchers."""
    return f"{PREFIX}.table.{_token('table id', table_id)}.update"


def table_update_wildcard() -> str:
    return f"{PREFIX}.table.*.update"


def chat_post(room: str) -> str:
    return f"{PREFIX}.chat.{_token('room', room)}.post"


def chat_history(room: str) -> str:
    return f"{PREFIX}.chat.{_token('room', room)}.history"


def chat_messages(room: str) -> str:
    return f"{PREFIX}.chat.{_token('room', room)}.messages"


def progression(query: str) -> str:
    return f"{PREFIX}.progression.{_token('query', query)}"
