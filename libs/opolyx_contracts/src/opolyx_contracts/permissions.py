"""Who may publish and subscribe where on NATS: one role per service (ARCHITECTURE.md, "Who may
do what on NATS"). The one place the rules are written; built only from `subjects`.

`opolyx_service.nats_server_config` renders these roles into the server's authorization block
(`make run` and the test harness); docs/NATS_PERMISSIONS.md is `permissions_markdown()`.

Every role gets its own reply inbox, `_INBOX.<role>.>`, so no service can read another's
replies; a client of a role connects with that inbox prefix (`inbox_prefix`). JetStream is
reached through its API subjects (`$JS.API.…`), which are granted per stream and per bucket.

What NATS cannot check is left to the receiver: which seat a bot acts for, which player the
gateway speaks for, and where a reply subject points (a responder answers only to `_INBOX.`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from opolyx_contracts.subjects import (
    ACTIVE_GAMES_BUCKET,
    BOTS_CONSUMER,
    BOTS_DECIDE,
    BOTS_DECISIONS_STREAM,
    CHAT_BOT_MOMENTS_BUCKET,
    CHAT_BOT_STICKER,
    CHAT_HISTORY_ANY,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_MUTES_BUCKET,
    CHAT_POST_IDS_BUCKET,
    CHAT_POSTS_ANY,
    CHAT_REPORT,
    CHAT_REPORTS_BUCKET,
    CHAT_ROOMS_BUCKET,
    CHAT_SETTINGS,
    CHAT_STREAM,
    CHAT_STREAM_SUBJECTS,
    GAME_FINISHED,
    GAMES_STREAM,
    GAMES_STREAM_SUBJECTS,
    GATEWAY_PLAYERS_BUCKET,
    LOBBY_CMD,
    LOBBY_EVENTS,
    LOBBY_MEMBER_EVENTS_ANY,
    PROGRESSION_ANY,
    ROOMS_BUCKET,
    TABLE_BOT_COMMANDS_ANY,
    TABLE_COMMANDS_ANY,
    TABLE_CREATE,
    TABLE_EVENTS_STREAM,
    TABLE_EVENTS_SUBJECTS,
    TABLE_INSTANCES_ALIVE_ANY,
    TABLE_LEASES_BUCKET,
    TABLE_PARTITION_CREATE_ANY,
    TABLE_PARTITIONS_ANY,
    TABLE_SEATS_ANY,
    TABLE_TRADE_PREVIEWS_ANY,
    TABLE_VIEWS_ANY,
    TABLES_BUCKET,
    progression,
    table_update_wildcard,
)

__all__ = [
    "ADMIN",
    "ROLES",
    "SERVICE_ROLES",
    "Grant",
    "Role",
    "inbox_prefix",
    "kv_bucket",
    "permissions_markdown",
    "stream_declare",
    "stream_read",
    "subject_matches",
]

INBOX_ROOT = "_INBOX"

CHAT_PLAYER_REQUESTS = (
    CHAT_POSTS_ANY,
    CHAT_HISTORY_ANY,
    CHAT_MUTE,
    CHAT_MUTES,
    CHAT_REPORT,
    CHAT_SETTINGS,
)
"""What the gateway asks the chat service for a player (`opolyx_contracts.chat`)."""


def inbox_prefix(role: str) -> str:
    """The reply-inbox prefix a connection of `role` must use (nats-py `inbox_prefix`)."""
    return f"{INBOX_ROOT}.{role}"


@dataclass(frozen=True)
class Grant:
    """What a role may do for one purpose: one row of the permission table.

    `publish`/`subscribe` are the application's own subjects; `jetstream` the JetStream API
    and acknowledgement subjects (published) that reading or writing a stream or bucket needs.
    """

    purpose: str
    publish: tuple[str, ...] = ()
    subscribe: tuple[str, ...] = ()
    jetstream: tuple[str, ...] = ()

    def __add__(self, other: Grant) -> Grant:
        return Grant(
            self.purpose,
            self.publish + other.publish,
            self.subscribe + other.subscribe,
            self.jetstream + other.jetstream,
        )


@dataclass(frozen=True)
class Role:
    name: str
    summary: str
    grants: tuple[Grant, ...]
    responds: bool = False
    """Answers requests: may publish one reply to the reply subject of a message it received."""

    @property
    def inbox_prefix(self) -> str:
        return inbox_prefix(self.name)

    @property
    def publish(self) -> tuple[str, ...]:
        """The publish allow list, in table order, without repeats."""
        return _unique(s for g in self.grants for s in (*g.publish, *g.jetstream))

    @property
    def subscribe(self) -> tuple[str, ...]:
        """The subscribe allow list: the grants plus the role's own reply inbox."""
        return _unique([*(s for g in self.grants for s in g.subscribe), f"{self.inbox_prefix}.>"])

    def may_publish(self, subject: str) -> bool:
        """What the server decides for a publish to the concrete `subject`."""
        return any(subject_matches(p, subject) for p in self.publish)

    def may_subscribe(self, subject: str) -> bool:
        """What the server decides for a subscription to the concrete `subject`."""
        return any(subject_matches(p, subject) for p in self.subscribe)


def subject_matches(pattern: str, subject: str) -> bool:
    """NATS wildcard matching of a concrete subject: `*` is one token, a final `>` the rest."""
    pattern_tokens, subject_tokens = pattern.split("."), subject.split(".")
    for i, token in enumerate(pattern_tokens):
        if token == ">":
            return len(subject_tokens) > i
        if i >= len(subject_tokens) or (token != "*" and token != subject_tokens[i]):
            return False
    return len(pattern_tokens) == len(subject_tokens)


def _unique(subjects: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(subjects))


# --- JetStream building blocks -------------------------------------------------------------

_API = "$JS.API"


def stream_read(stream: str) -> Grant:
    """Read a stream: its info, consumers (ordered, ephemeral or durable, push or pull),
    direct and stored-message gets, acks and flow-control replies."""
    return Grant(
        f"read stream `{stream}`",
        jetstream=(
            f"{_API}.STREAM.NAMES",  # a subscribe without `stream=` looks the stream up
            f"{_API}.STREAM.INFO.{stream}",
            f"{_API}.CONSUMER.CREATE.{stream}",
            f"{_API}.CONSUMER.CREATE.{stream}.>",
            f"{_API}.CONSUMER.DURABLE.CREATE.{stream}.>",
            f"{_API}.CONSUMER.INFO.{stream}.>",
            f"{_API}.CONSUMER.DELETE.{stream}.>",
            f"{_API}.CONSUMER.MSG.NEXT.{stream}.>",
            f"{_API}.STREAM.MSG.GET.{stream}",
            f"{_API}.DIRECT.GET.{stream}",
            f"{_API}.DIRECT.GET.{stream}.>",
            f"$JS.ACK.{stream}.>",
            f"$JS.FC.{stream}.>",
        ),
    )


def stream_declare(stream: str, *, update: bool = True) -> Grant:
    """Create a stream (and, with `update`, bring its configuration up to date)."""
    subjects = [f"{_API}.STREAM.CREATE.{stream}"]
    if update:
        subjects.append(f"{_API}.STREAM.UPDATE.{stream}")
    return Grant(f"declare stream `{stream}`", jetstream=tuple(subjects))


def kv_bucket(bucket: str, *, write: bool) -> Grant:
    """A KV bucket is stream `KV_<bucket>`; writing is publishing to `$KV.<bucket>.<key>`."""
    stream = f"KV_{bucket}"
    grant = stream_read(stream)
    if not write:
        return Grant(f"read bucket `{bucket}`", jetstream=grant.jetstream)
    return Grant(
        f"read and write bucket `{bucket}`",
        jetstream=(*grant.jetstream, *stream_declare(stream).jetstream, f"$KV.{bucket}.>"),
    )


def _stream(purpose: str, stream: str, *, write: tuple[str, ...] = (), declare: bool) -> Grant:
    grant = Grant(purpose, publish=write) + stream_read(stream)
    if declare:
        grant = grant + stream_declare(stream)
    return grant


# --- the roles -----------------------------------------------------------------------------

TABLE = Role(
    "table",
    "owns every running game: the only writer of table events, GAMES and the table buckets",
    (
        Grant("serve table creates", subscribe=(TABLE_CREATE,)),
        Grant(
            "serve the commands, views and creates of its partitions",
            publish=(TABLE_PARTITION_CREATE_ANY,),
            subscribe=(TABLE_PARTITIONS_ANY,),
        ),
        _stream(
            f"write table events (stream `{TABLE_EVENTS_STREAM}`)",
            TABLE_EVENTS_STREAM,
            write=(TABLE_EVENTS_SUBJECTS,),
            declare=True,
        ),
        Grant("publish live table updates", publish=(table_update_wildcard(),)),
        _stream(
            f"announce finished games and seats out (stream `{GAMES_STREAM}`)",
            GAMES_STREAM,
            write=(GAMES_STREAM_SUBJECTS,),
            declare=True,
        ),
        Grant("ask bots for decisions", publish=(BOTS_DECIDE,)),
        kv_bucket(TABLES_BUCKET, write=True),
        kv_bucket(TABLE_LEASES_BUCKET, write=True),
        Grant(
            "say it is alive, ask whether a lease holder is (takeover)",
            publish=(TABLE_INSTANCES_ALIVE_ANY,),
            subscribe=(TABLE_INSTANCES_ALIVE_ANY,),
        ),
    ),
    responds=True,
)

GATEWAY = Role(
    "gateway",
    "holds the players' sockets: the only sender of player commands, it alone asserts identity",
    (
        Grant(
            "send player commands, read table views and trade previews",
            publish=(TABLE_COMMANDS_ANY, TABLE_VIEWS_ANY, TABLE_TRADE_PREVIEWS_ANY),
        ),
        Grant(
            "report seated players' presence and their autopilot switch",
            publish=(TABLE_SEATS_ANY,),
        ),
        Grant("send lobby commands", publish=(LOBBY_CMD,)),
        Grant("follow lobby events", subscribe=(LOBBY_EVENTS, LOBBY_MEMBER_EVENTS_ANY)),
        Grant("follow live table updates", subscribe=(table_update_wildcard(),))
        + stream_read(TABLE_EVENTS_STREAM),
        Grant(
            "ask chat for a player (post, history, mutes, reports, settings), follow messages",
            publish=CHAT_PLAYER_REQUESTS,
            subscribe=(CHAT_STREAM_SUBJECTS,),
        )
        + stream_read(CHAT_STREAM),
        Grant("ask progression", publish=(PROGRESSION_ANY,)),
        kv_bucket(GATEWAY_PLAYERS_BUCKET, write=True),
    ),
)

LOBBY = Role(
    "lobby",
    "rooms and seats: answers lobby commands, creates tables, frees players when games end",
    (
        Grant("answer lobby commands", subscribe=(LOBBY_CMD,)),
        Grant("publish lobby events", publish=(LOBBY_EVENTS, LOBBY_MEMBER_EVENTS_ANY)),
        Grant("create tables", publish=(TABLE_CREATE,)),
        Grant("ask progression for boosts", publish=(progression("boosts"),)),
        # Creates GAMES when it starts before any table instance, never reconfigures it.
        Grant(f"read `{GAMES_STREAM}` (durable consumer)")
        + stream_read(GAMES_STREAM)
        + stream_declare(GAMES_STREAM, update=False),
        kv_bucket(ROOMS_BUCKET, write=True),
        kv_bucket(ACTIVE_GAMES_BUCKET, write=True),
    ),
    responds=True,
)

BOTS = Role(
    "bots",
    "bot workers: take decision requests, send commands on the bots' own subject (the table "
    "accepts them only for bot seats and seats on autopilot)",
    (
        _stream(
            f"take decision requests (work queue `{BOTS_DECISIONS_STREAM}`, durable pull "
            f"consumer `{BOTS_CONSUMER}`)",
            BOTS_DECISIONS_STREAM,
            declare=True,
        ),
        Grant(
            "send commands for bot seats and seats on autopilot",
            publish=(TABLE_BOT_COMMANDS_ANY,),
        ),
        Grant("post a bot's sticker in its table's chat", publish=(CHAT_BOT_STICKER,)),
        # The end of a game sends no decision request: a bot's end-of-game sticker needs the
        # live `game.finished` (a core subscription in queue group `bots`, no GAMES consumer:
        # a sticker replayed after an outage would land in a finished table's chat). A
        # takeover can announce an end twice; chat posts one goodbye per table.
        Grant(
            "hear that a game finished (a bot's end-of-game sticker)", subscribe=(GAME_FINISHED,)
        ),
    ),
)

CHAT = Role(
    "chat",
    "table, room and lobby chat: takes posts, keeps the bounded history",
    (
        Grant(
            "answer chat requests (players' through the gateway, bots' stickers)",
            subscribe=(*CHAT_PLAYER_REQUESTS, CHAT_BOT_STICKER),
        ),
        _stream(
            f"publish chat messages (stream `{CHAT_STREAM}`)",
            CHAT_STREAM,
            write=(CHAT_STREAM_SUBJECTS,),
            declare=True,
        ),
        kv_bucket(CHAT_MUTES_BUCKET, write=True),
        kv_bucket(CHAT_REPORTS_BUCKET, write=True),
        kv_bucket(CHAT_ROOMS_BUCKET, write=True),
        kv_bucket(CHAT_BOT_MOMENTS_BUCKET, write=True),
        kv_bucket(CHAT_POST_IDS_BUCKET, write=True),
        # Who is in which room and at which table: the lobby's records, read only.
        kv_bucket(ROOMS_BUCKET, write=False),
    ),
    responds=True,
)

PROGRESSION = Role(
    "progression",
    "XP, levels, cards, missions: answers queries, credits finished games from GAMES",
    (
        Grant("answer progression queries", subscribe=(PROGRESSION_ANY,)),
        Grant(f"read `{GAMES_STREAM}` (durable consumer)")
        + stream_read(GAMES_STREAM)
        + stream_declare(GAMES_STREAM, update=False),
        # Mission statistics come from a finished game's events, read by the reference
        # GAMES carries (an ordered consumer on one table's subject).
        Grant(f"read a finished game's events (stream `{TABLE_EVENTS_STREAM}`)")
        + stream_read(TABLE_EVENTS_STREAM),
    ),
    responds=True,
)

ADMIN = Role(
    "admin",
    "the test harness and operators only (set-up, inspection); never given to a service",
    (Grant("everything", publish=(">",), subscribe=(">",)),),
    responds=True,
)

SERVICE_ROLES: tuple[Role, ...] = (TABLE, GATEWAY, LOBBY, BOTS, CHAT, PROGRESSION)
ROLES: dict[str, Role] = {role.name: role for role in (*SERVICE_ROLES, ADMIN)}


# --- the document --------------------------------------------------------------------------


def _code(subjects: tuple[str, ...]) -> str:
    return "<br>".join(f"`{s}`" for s in subjects) or "-"


def permissions_markdown() -> str:
    """docs/NATS_PERMISSIONS.md (a test keeps the file equal to this)."""
    lines = [
        "# Who may do what on NATS",
        "",
        "Generated from `libs/opolyx_contracts/src/opolyx_contracts/permissions.py` (the one",
        "place the rules live; `tests` fail when this file and the code differ). Regenerate with",
        "`python -m opolyx_contracts.permissions > docs/NATS_PERMISSIONS.md`.",
        "",
        "Every service connects as its own user and may publish and subscribe only where this",
        "table says; the nats-server refuses the rest (a permissions violation). Every role also",
        "subscribes to its own reply inbox `_INBOX.<role>.>` (connections set that inbox prefix),",
        "so no service reads another's replies. JetStream access is granted through the API",
        "subjects of each stream or bucket only (listed per role below).",
        "",
        "| role | what for | publish | subscribe | JetStream API (below) |",
        "|---|---|---|---|---|",
    ]
    for role in ROLES.values():
        for grant in role.grants:
            lines.append(
                f"| {role.name} | {grant.purpose} | {_code(grant.publish)} "
                f"| {_code(grant.subscribe)} | {'yes' if grant.jetstream else '-'} |"
            )
        replies = "answers requests (one reply per request received)" if role.responds else ""
        lines.append(
            f"| {role.name} | replies{': ' + replies if replies else ''} | - "
            f"| `{role.inbox_prefix}.>` | - |"
        )
    lines += [
        "",
        "## Roles",
        "",
    ]
    for role in ROLES.values():
        lines += [
            f"### {role.name}",
            "",
            f"{role.summary[0].upper()}{role.summary[1:]}.",
            "",
            f"Responds to requests: {'yes' if role.responds else 'no'}.",
            "",
            "Publish:",
            *(f"- `{s}`" for s in role.publish),
            "",
            "Subscribe:",
            *(f"- `{s}`" for s in role.subscribe),
            "",
        ]
    lines += [
        "## What NATS cannot check (the receiving service must)",
        "",
        "- **Bots act only for bot seats.** Bots send commands on a subject of their own",
        "  (`opolyx.table.<p>.<table>.bot`), players' commands come from the gateway on",
        "  `opolyx.table.<p>.<table>.cmd`, and NATS lets neither role send on the other's. NATS",
        "  cannot see which seat a command is for: the table accepts a command on the bots'",
        "  subject only for a bot seat or a seat on autopilot, and one on the players' subject",
        "  only for the seat of the player the gateway vouches for, never for a bot seat",
        "  (refused with a coded error, nothing changed).",
        "- **Identity.** Only the gateway may send player commands and lobby commands, so a",
        "  `player_id` on those subjects was set by the gateway; it is still the table's and the",
        "  lobby's job to check that player owns the seat or room it acts for.",
        "- **Message sizes.** NATS bounds every message at the server's `max_payload` (1 MiB,",
        "  its default). A message a role sends on behalf of someone else is bounded tighter,",
        "  per kind, by the service that reads it, before it is parsed, and refused with",
        "  `request/invalid`: a player's message at the gateway (`max_message_bytes`, 16 KB), a",
        "  table command from the gateway or a bot (`MAX_COMMAND_BYTES`, 4 KB), a seat message",
        "  (`MAX_SEAT_MESSAGE_BYTES`), a trade preview (`MAX_PREVIEW_BYTES`), a lobby command",
        "  (`MAX_LOBBY_COMMAND_BYTES`), a chat request or a bot's sticker",
        "  (`MAX_CHAT_REQUEST_BYTES`), a progression request (`MAX_REQUEST_BYTES`). What a",
        "  service writes of its own and another reads (a table's events, updates and decision",
        "  requests, game results, lobby and chat events) is bounded by `max_payload` alone: a",
        "  game's first batch carries its whole state, and a tighter bound could only make a",
        "  reader drop a trusted writer's data. The longest-game test keeps every kind of",
        "  message under 1/8 of `max_payload`.",
        "- **Reply subjects.** A responder may publish one reply to whatever reply subject a",
        "  request names. A sender could name another service's subject (for example",
        "  `opolyx.game.finished`) and make the responder publish there with its own rights:",
        "  responders must answer only reply subjects under `_INBOX.`.",
        "- **Consumers on readable streams.** A role that may read a stream may create consumers",
        "  on it (and delete consumers there, including another instance's); their deliveries",
        "  carry the stored messages only, never new content.",
        "- **Replies across a NATS restart.** The right to answer a request lives with the",
        "  connection that received it: a reply to a request taken before the server restarted",
        "  is refused. The sender times out and retries with the same command id (commands are",
        "  idempotent).",
        "",
        "## Credentials",
        "",
        "- `make run` writes the server configuration and one password file per role under its",
        "  data folder (`.run/nats-auth/`) the first time, and starts each service with",
        "  `OPOLYX_NATS__USER` and `OPOLYX_NATS__PASSWORD_FILE` of its own role.",
        "- The test harness does the same in each test's temporary folder: `nats_server.url`",
        "  is the admin's (everything allowed, for set-up and inspection),",
        "  `nats_server.url_for(role)` carries a role's credentials; services started by tests",
        "  use that.",
        "- Production: `OPOLYX_NATS__USER` with `OPOLYX_NATS__PASSWORD` (a Secret) or",
        "  `OPOLYX_NATS__PASSWORD_FILE`, or `OPOLYX_NATS__CREDS_FILE` or",
        "  `OPOLYX_NATS__NKEY_SEED_FILE` (these two need the `nkeys` package); TLS with",
        "  `OPOLYX_NATS__TLS_CA_FILE`, `OPOLYX_NATS__TLS_CERT_FILE`, `OPOLYX_NATS__TLS_KEY_FILE`.",
        "  The reply inbox follows the user name (`_INBOX.<user>`);",
        "  with creds or nkeys set `OPOLYX_NATS__INBOX_PREFIX=_INBOX.<role>`.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(permissions_markdown(), end="")
