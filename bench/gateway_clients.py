"""The client side of the gateway benchmark, and the floor's two server roles.

A `Player` is one seat of a two-seat table: it watches its table and answers its seat's
decisions as soon as a push says it may (at full speed from its reader's own turn:
`drive_until`). It speaks both the baseline's protocol (a
`table.state` push per seat carrying that seat's `legal` list) and today's (one shared
`table.update` push whose `pending` lists every seat's legal commands), so the same client
drives both sides. Every client connects without permessage-deflate, as the floor does,
and reads only the fields it acts on (`Message`).

    python bench/gateway_clients.py --role echo --nats URL         # the floor's responder
    python bench/gateway_clients.py --role bare --nats URL --port P  # the floor's server
    python bench/gateway_clients.py --role table-stub --nats URL   # a table that only answers
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections import Counter
from typing import Any

import msgspec
import uvloop
from opolyx_service import flush_in_order
from opolyx_testing.measuring import percentile

__all__ = [
    "ECHO_SUBJECT",
    "Figures",
    "Player",
    "open_socket",
]

ECHO_SUBJECT = "bench.echo"
DECISIONS = ("roll", "buy", "pay", "pass", "jackpot_decline", "bus", "teleport", "pay_bail")
RAISE_FUNDS = ("sell", "mortgage", "bankrupt")


async def open_socket(url: str) -> Any:
    """A websocket client without compression (the floor negotiates none either). The
    players' sockets ask for batched frames (`BATCH_QUERY`), as the web client does; the
    baseline's gateway and the floor's server ignore the query."""
    import websockets

    return await websockets.connect(url, max_size=None, compression=None, ping_interval=None)


class Figures:
    """Command latencies of one phase."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.codes: Counter[str] = Counter()
        """The error replies' codes."""
        self.frames = 0
        """Websocket frames the clients read while playing (a batched frame counts once)."""

    def summary(self, seconds: float) -> dict[str, float]:
        lat = self.latencies
        if not lat:
            nan = float("nan")
            return {"per_second": 0.0, "p50_ms": nan, "p99_ms": nan, "n": 0, "frames": nan}
        return {
            "per_second": len(lat) / seconds,
            "p50_ms": statistics.median(lat) * 1000,
            "p99_ms": percentile(lat, 0.99) * 1000,
            "n": len(lat),
            "frames": self.frames / len(lat),
        }


class SeatToAct(msgspec.Struct, gc=False):
    seat: int


class ViewPart(msgspec.Struct, gc=False):
    """What a client reads of a pushed public view to know whether it is to act."""

    finished: bool
    pending: SeatToAct | None = None


class SeatDecision(msgspec.Struct):
    """One entry of a `table.update`'s `pending`: a seat and its legal commands."""

    seat: int
    legal: list[dict[str, Any]]


class Message(msgspec.Struct):
    """The fields of a server message these clients read, whatever its type (a reply, an
    update, the baseline's `table.state`); the rest of it is skipped unread."""

    type: str
    id: int | str | None = None
    ok: bool | None = None
    error: dict[str, Any] | None = None
    data: Any = None
    view: ViewPart | None = None
    """A `table.update`'s view (the baseline's `table.state` names it `state`)."""
    state: ViewPart | None = None
    last_seq: int | None = None
    seq: int | None = None
    pending: msgspec.Raw = msgspec.Raw()
    """Every seat's decisions (`SeatDecision`s), kept unread: only the seat to act reads
    them, once (`Player.choose`)."""
    legal: list[dict[str, Any]] | msgspec.UnsetType | None = msgspec.UNSET
    """The baseline's push carries its seat's legal commands (null: none); today's do not."""

    def error_code(self) -> str:
        return str((self.error or {}).get("code"))


FRAME = msgspec.json.Decoder(list[Message] | Message)
"""A frame as these clients read it. They are the measuring apparatus and share the cores
with what they measure: parsing all of a 3.4 KB batched frame with orjson took 9.4 us,
reading only these fields 3.0 us. At saturation (100 clients, 2 rounds per run) the current
side's clients spent 0.115-0.128 ms of CPU per command in four runs (load 0.3-2.6), against
0.199-0.205 in three runs that parsed every frame whole with orjson and wrote with the
standard library's encoder; the floor's clients 0.034-0.044 against 0.041-0.043."""
DECISIONS_OF_SEATS = msgspec.json.Decoder(list[SeatDecision] | None)
_ENCODER = msgspec.json.Encoder()


def to_text(message: dict[str, Any]) -> str:
    """A client message's JSON text (every client, the floor's too: the standard library's
    encoder was 3% of the clients' CPU at saturation)."""
    return _ENCODER.encode(message).decode()


class Player:
    """One bench client: a seat at a table, answering its decisions."""

    def __init__(self, token: str, table: str) -> None:
        self.token = token
        self.table = table
        self.seat: int | None = None
        self.view: ViewPart | None = None
        """The last public view pushed (what of it says whose turn it is)."""
        self.legal: list[dict[str, Any]] | None = None
        """The baseline's per-seat list; today's pushes list every seat's (`pending`)."""
        self.pending = msgspec.Raw()
        self.seq = 0
        self.changed = asyncio.Event()
        self.replies: dict[int | str | None, asyncio.Future[Message]] = {}
        self.next_id = 0
        self.frames = 0
        self.drive: Drive | None = None
        """Set while the reader itself answers the decisions (`drive_until`)."""

    async def request(self, ws: Any, kind: str, **fields: Any) -> Message:
        self.next_id += 1
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self.replies[self.next_id] = future
        await ws.send(to_text({"id": self.next_id, "type": kind, **fields}))
        return await future

    def _on_view(self, message: Message) -> None:
        if message.type == "table.update":  # the table's own update, forwarded
            self.view, seq = message.view, message.last_seq
        else:
            self.view, seq = message.state, message.seq
        if message.legal is not msgspec.UNSET:  # the baseline's per-seat push
            self.legal = message.legal or []
        else:  # the seat is known from the watch reply, which may come after this push
            self.pending = message.pending
        self.seq = max(self.seq, seq or 0)
        self.changed.set()

    async def reader(self, ws: Any) -> None:
        try:
            await self._read(ws)
        except Exception as exc:
            # A frame these clients cannot read fails what waits on it (a request, the
            # drive), rather than leave the phase waiting for replies nobody reads.
            for future in self.replies.values():
                if not future.done():
                    future.set_exception(exc)
            if self.drive is not None and not self.drive.done.done():
                self.drive.done.set_exception(exc)
            raise

    async def _read(self, ws: Any) -> None:
        async for text in ws:
            self.frames += 1
            frame = FRAME.decode(text)
            # a batched frame (today's gateway: a command's update and its reply) in order
            for message in frame if isinstance(frame, list) else (frame,):
                kind = message.type
                if kind == "reply":
                    future = self.replies.pop(message.id, None)
                    if future is not None and not future.done():
                        future.set_result(message)
                    elif self.drive is not None:
                        self.drive.replied(message)
                elif kind in ("table.state", "table.update"):
                    self._on_view(message)
            if self.drive is not None:
                await self.drive.step()

    def choose(self) -> dict[str, Any] | None:
        view = self.view
        if view is None or view.finished:
            return None
        pending = view.pending
        if pending is None or pending.seat != self.seat:
            return None
        legal = self.legal
        if legal is None:
            seats = (DECISIONS_OF_SEATS.decode(self.pending) if self.pending else None) or []
            legal = next((p.legal for p in seats if p.seat == self.seat), [])
        for kinds in (DECISIONS, RAISE_FUNDS):  # a payment pause without the cash: raise it
            for kind in kinds:
                for command in legal:
                    if command["type"] == kind:
                        return dict(command)
        return None

    async def join(self, ws: Any) -> None:
        assert (await self.request(ws, "hello", token=self.token)).ok
        watch = await self.request(ws, "table.watch", table=self.table)
        assert watch.ok, watch
        self.seat = watch.data["seat"]

    async def play(self, ws: Any, stop: float, figures: Figures, think: float) -> None:
        """Answer this seat's decisions until ``stop``, after ``think`` seconds (jittered)
        of thinking each; one command in flight at a time."""
        frames_before = self.frames
        try:
            await self._play(ws, stop, figures, think)
        finally:
            figures.frames += self.frames - frames_before

    async def drive_until(self, ws: Any, stop: float, figures: Figures) -> None:
        """Answer this seat's decisions at full speed until ``stop``, from the reader: the
        frame that offers a decision sends its command, one in flight at a time.

        What `play` does with a task waiting on an event per decision, this does in the
        reader's own turn: at saturation the clients share the cores with what they measure,
        and that machinery cost them more than reading the frames did."""
        frames_before = self.frames
        drive = self.drive = Drive(self, ws, stop, figures)
        try:
            await drive.step()  # the decision already offered, if any
            await asyncio.wait_for(drive.done, max(0.0, stop - time.perf_counter()) + 10)
        finally:
            self.drive = None
            figures.frames += self.frames - frames_before

    async def _play(self, ws: Any, stop: float, figures: Figures, think: float) -> None:
        while time.perf_counter() < stop:
            command = self.choose()
            if command is not None and think:
                await asyncio.sleep(random.uniform(0.5, 1.5) * think)
                command = self.choose()
            if command is None:
                self.changed.clear()
                try:
                    await asyncio.wait_for(
                        self.changed.wait(), max(0.01, stop - time.perf_counter())
                    )
                except TimeoutError:
                    return
                continue
            seq = self.seq
            t0 = time.perf_counter()
            reply = await self.request(ws, "table.cmd", table=self.table, command=command)
            if reply.ok:
                if t0 < stop:
                    figures.latencies.append(time.perf_counter() - t0)
            else:
                figures.errors += 1
                figures.codes[reply.error_code()] += 1
            # decide again only on the state after this command
            while self.seq <= seq and time.perf_counter() < stop:
                self.changed.clear()
                try:
                    await asyncio.wait_for(self.changed.wait(), 5)
                except TimeoutError:
                    break


class Drive:
    """A player's commands at full speed, sent and timed from its reader (`drive_until`)."""

    RETRY_AFTER = 1.0
    """Seconds before a refused command's decision is tried again on an unchanged state
    (a refusal usually comes with a new state, which is tried at once)."""

    def __init__(self, player: Player, ws: Any, stop: float, figures: Figures) -> None:
        self.player = player
        self.ws = ws
        self.stop = stop
        self.figures = figures
        self.sent_id: int | None = None
        self.sent_at = 0.0
        self.retrying: asyncio.Future[None] | None = None
        """The step a refusal's retry started (kept: a task nobody holds may be collected)."""
        self.decided_on = -1
        """The sequence number the last command was chosen on: the next is chosen only on a
        later state (its own update), as a player decides on what it sees."""
        loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = loop.create_future()
        loop.call_later(max(0.0, stop - time.perf_counter()), self._time_up)

    def _time_up(self) -> None:
        if self.sent_id is None and not self.done.done():
            self.done.set_result(None)

    def replied(self, message: Message) -> None:
        if message.id != self.sent_id:
            return
        self.sent_id = None
        if message.ok:
            if self.sent_at < self.stop:
                self.figures.latencies.append(time.perf_counter() - self.sent_at)
        else:
            self.figures.errors += 1
            self.figures.codes[message.error_code()] += 1
            asyncio.get_running_loop().call_later(self.RETRY_AFTER, self._retry, self.sent_at)
        if time.perf_counter() >= self.stop and not self.done.done():
            self.done.set_result(None)

    def _retry(self, refused_at: float) -> None:
        if self.sent_id is None and self.sent_at == refused_at:  # nothing sent since
            self.decided_on = -1
            self.retrying = asyncio.ensure_future(self.step())

    async def step(self) -> None:
        """Send the seat's next command if one is due and none is in flight."""
        player = self.player
        if self.sent_id is not None or player.seq <= self.decided_on:
            return
        if time.perf_counter() >= self.stop:
            return
        command = player.choose()
        if command is None:
            return
        self.decided_on = player.seq
        player.next_id += 1
        self.sent_id = player.next_id
        self.sent_at = time.perf_counter()
        table = player.table
        message = {"id": self.sent_id, "type": "table.cmd", "table": table, "command": command}
        await self.ws.send(to_text(message))


async def bare_play(ws: Any, stop: float, figures: Figures, think: float) -> None:
    """The floor's client: a command-sized message, its echo, and a paced pause."""
    n = 0
    if think:  # paced players do not all start at the same instant
        await asyncio.sleep(random.uniform(0, 2 * think))
    while time.perf_counter() < stop:
        n += 1
        t0 = time.perf_counter()
        await ws.send(to_text({"id": n, "type": "table.cmd", "command": {"type": "roll"}}))
        await ws.recv()
        figures.frames += 1
        if t0 < stop:
            figures.latencies.append(time.perf_counter() - t0)
        if think:  # half the players of two-seat tables act at once
            await asyncio.sleep(random.uniform(0.5, 1.5) * 2 * think)


# ----------------------------------------------------------------- the floor's servers
async def run_echo_responder(nats_url: str) -> None:
    import nats

    nc = await nats.connect(nats_url)

    async def answer(msg: Any) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(ECHO_SUBJECT, cb=answer)
    await asyncio.Event().wait()


async def run_table_stub(nats_url: str) -> None:
    """A stand-in for the table service that costs next to nothing: it accepts every
    command at once (no rules, no storage) and publishes the `TableUpdate` a real table
    would (same models, same size: the starting view, the next seat to roll), so the
    gateway's command path is what a saturation run measures, not the table's.
    Two seats per table, taking turns to roll.

    The update is built as the table service builds it: the view and the pending decisions
    encoded once (per seat to act: they are all it varies) and spliced into the contract's
    `TableUpdate` with the table's own `encode_fields`. Validating and encoding the whole
    model per command made the stub cost 0.13 ms of CPU a command, two thirds of the
    gateway's own, in a run meant to measure the gateway."""
    import uuid

    import nats
    import orjson
    from opolyx_contracts import CONTRACT_VERSION, subjects
    from opolyx_contracts.envelope import error_reply
    from opolyx_contracts.errors import BAD_REQUEST
    from opolyx_contracts.game import DiceRolled, GameCommand, Roll, TurnStarted
    from opolyx_contracts.table import (
        CommandAccepted,
        CreateTable,
        EventRecord,
        PendingDecision,
        PublicView,
        SeatPresence,
        SeatStatus,
        TableCommand,
        TableCreated,
        TableUpdate,
        TableView,
    )
    from opolyx_rules import new_game, public_view
    from opolyx_service.publishing import publish
    from opolyx_table.messages import encode, encode_fields
    from pydantic import TypeAdapter

    nc = await nats.connect(nats_url)
    start = PublicView.model_validate(public_view(new_game("classic", 2, 1)))
    tables: dict[str, dict[str, Any]] = {}
    records: TypeAdapter[list[EventRecord]] = TypeAdapter(list[EventRecord])
    pendings: TypeAdapter[list[PendingDecision]] = TypeAdapter(list[PendingDecision])

    def state(table: dict[str, Any]) -> tuple[PublicView, list[PendingDecision]]:
        seat = table["turn"]
        view = start.model_copy(
            update={"current_seat": seat, "pending": {"kind": "roll", "seat": seat}}
        )
        legal: list[GameCommand] = [Roll(seat=seat)]
        return view, [PendingDecision(seat=seat, kind="roll", deadline_at=None, legal=legal)]

    def encoded(seat: int) -> tuple[orjson.Fragment, orjson.Fragment]:
        view, pending = state({"turn": seat})
        return orjson.Fragment(encode(view)), orjson.Fragment(pendings.dump_json(pending))

    parts = [encoded(0), encoded(1)]
    """The update's view and pending decisions, encoded, by the seat to act."""

    async def create(msg: Any) -> None:
        try:
            request = CreateTable.model_validate_json(msg.data)
        except ValueError:  # the bench's "are you up" probe
            await msg.respond(
                error_reply(BAD_REQUEST, "not a CreateTable").model_dump_json().encode()
            )
            return
        table_id = uuid.uuid4().hex[:16]
        tables[table_id] = {"seats": request.seats, "seq": 1, "turn": 0}
        created = TableCreated(
            table_id=table_id,
            partition=subjects.table_partition(table_id),
            command_subject=subjects.table_command(table_id),
            view_subject=subjects.table_view(table_id),
            events_subject=subjects.table_events(table_id),
            seed_commitment="0" * 64,
            seq=1,
        )
        await msg.respond(created.model_dump_json().encode())

    async def view(msg: Any) -> None:
        table_id = msg.subject.split(".")[-2]
        table = tables[table_id]
        public, pending = state(table)
        answer = TableView(
            table_id=table_id,
            seq=table["seq"],
            version=table["seq"],
            state=public,
            seats=table["seats"],
            pending=pending,
            seed_commitment="0" * 64,
        )
        await msg.respond(answer.model_dump_json().encode())

    async def command(msg: Any) -> None:
        table_id = msg.subject.split(".")[-2]
        table = tables[table_id]
        request = TableCommand.model_validate_json(msg.data)
        seat = table["turn"]
        if request.player_id != table["seats"][seat].player_id:
            await msg.respond(
                error_reply("seat/not_yours", "not your turn").model_dump_json().encode()
            )
            return
        first = table["seq"] + 1
        table["seq"] += 2
        table["turn"] = 1 - seat
        dice = DiceRolled(
            seat=seat, white=(1, 2), third=None, doubles=0, roll_again=False, x_jump=False
        )
        events = [
            EventRecord(seq=first, version=first, event=dice),
            EventRecord(
                seq=first + 1,
                version=first + 1,
                event=TurnStarted(seat=1 - seat, round=1, deadline=75.0),
            ),
        ]
        await publish(
            nc, msg.reply, encode(CommandAccepted(seq=first + 1, version=first + 1, events=2))
        )
        # As the table does: let the connection's flusher send the reply before the update
        # is built.
        await asyncio.sleep(0)
        view, pending = parts[1 - seat]
        body = encode_fields(
            TableUpdate,
            v=CONTRACT_VERSION,
            table_id=table_id,
            first_seq=first,
            last_seq=first + 1,
            version=first + 1,
            events=orjson.Fragment(records.dump_json(events)),
            view=view,
            net_worth=[],
            autopilot=[],
            pending=pending,
            deadline_at=None,
            at=time.time(),
        )
        await publish(nc, subjects.table_update(table_id), body)

    async def seat(msg: Any) -> None:
        report = SeatPresence.model_validate_json(msg.data)
        table = tables[msg.subject.split(".")[-2]]
        index = next(i for i, s in enumerate(table["seats"]) if s.player_id == report.player_id)
        status = SeatStatus(seat=index, away=False, autopilot=False, chosen=False)
        await msg.respond(status.model_dump_json().encode())

    await nc.subscribe(subjects.TABLE_CREATE, cb=create)
    await nc.subscribe(f"{subjects.PREFIX}.table.*.*.view", cb=view)
    await nc.subscribe(f"{subjects.PREFIX}.table.*.*.cmd", cb=command)
    await nc.subscribe(f"{subjects.PREFIX}.table.*.*.seat", cb=seat)
    await flush_in_order(nc)
    await asyncio.Event().wait()


def run_bare_server(nats_url: str, port: int) -> None:
    """A websocket server that only forwards each message as a NATS request and relays
    the answer: the floor under any gateway."""
    import nats
    import uvicorn

    state: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    state["nc"] = await nats.connect(nats_url)
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await state["nc"].close()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "http":  # readiness probe
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
            return
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            reply = await state["nc"].request(ECHO_SUBJECT, message["text"].encode(), timeout=5)
            await send({"type": "websocket.send", "text": reply.data.decode()})

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        log_level="warning",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="a server role of the gateway benchmark")
    parser.add_argument("--role", choices=["echo", "bare", "table-stub"], required=True)
    parser.add_argument("--nats", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    # On uvloop, as every opolyx service runs (and uvicorn picks it for the bare server):
    # on asyncio's own loop a responder's p50 was 1.06-1.18x (opolyx_table.bench).
    if args.role == "echo":
        uvloop.run(run_echo_responder(args.nats))
    elif args.role == "table-stub":
        uvloop.run(run_table_stub(args.nats))
    else:
        run_bare_server(args.nats, args.port)


if __name__ == "__main__":
    main()
