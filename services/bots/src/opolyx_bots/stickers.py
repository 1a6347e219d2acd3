"""A bot's odd sticker in its table's chat: after a good auction, someone's bankruptcy, or
at the end of the game.

The worker sees a running game only through the decision requests of its bots, so those
moments are read from consecutive requests of one table: a player more out than last time
is a bankruptcy; the square of the auction that was open last time now owned by this bot is
a good auction. The end of a game sends no decision request: the worker hears it from the
live `game.finished` (`GameFinished`, one worker of the queue group per game), and one of
the game's roster bots, the best placed first, may say goodbye. Now and then (`CHANCE`) the
bot then asks chat (`BotSticker` on `CHAT_BOT_STICKER`) to post its persona's sticker for
it; chat picks the sticker (`opolyx_contracts.chat.sticker_for`), checks the bot sat at the
table and that the room did not turn bot stickers off.

A moment can reach more than one worker: the workers share the tables' requests, so two of
them may each see the same bankruptcy, and a table taken over while announcing its end
announces it again, live, to whichever worker the queue group picks. What a worker
remembers holds for itself only; each sticker therefore names its moment the same way for
every worker (`BotSticker.moment`), and chat takes one sticker per moment.

Posting is fire-and-forget: a refusal or a missing chat service costs the game nothing.
"""

from __future__ import annotations

import asyncio
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from opolyx_contracts.chat import BotOccasion, BotSticker
from opolyx_contracts.envelope import encode
from opolyx_contracts.lobby import bot_persona
from opolyx_contracts.subjects import CHAT_BOT_STICKER
from opolyx_contracts.table import DecisionRequest, GameFinished
from opolyx_service.logs import get_logger

__all__ = ["CHANCE", "TABLES_REMEMBERED", "StickerMoments", "StickerPoster"]

log = get_logger("opolyx.bots.stickers")

CHANCE = 0.4
"""How often a moment gets a sticker (not every bankruptcy: bots are not that chatty)."""
TABLES_REMEMBERED = 2000
"""Tables whose last request is kept (the oldest is forgotten first)."""
TIMEOUT = 1.0


@dataclass(frozen=True)
class _Seen:
    out_count: int
    auction: str | None
    """The open auction as its moment (`<square>-<round>-<seat whose turn>`), if any."""
    auction_square: int | None


class StickerMoments:
    """What each table's last decision request showed, and the moment a new one makes."""

    def __init__(self, rng: random.Random, chance: float = CHANCE) -> None:
        self.rng = rng
        self.chance = chance
        self.tables: OrderedDict[str, _Seen] = OrderedDict()
        self.finished: OrderedDict[str, None] = OrderedDict()
        """Tables whose end this worker heard (the oldest is forgotten first)."""

    def moment(self, request: DecisionRequest) -> BotSticker | None:
        """The sticker this request's bot asks for, if the request shows a moment."""
        state = request.state
        pending = state.pending or {}
        square = pending.get("square") if pending.get("kind") == "auction" else None
        now = _Seen(
            out_count=state.out_count,
            # an auction is open within one seat's turn: square, round and that seat name
            # it the same way in every request of it, whichever worker reads one
            auction=None if square is None else f"{square}-{state.round}-{state.current_seat}",
            auction_square=square,
        )
        before = self.tables.pop(request.table_id, None)
        self.tables[request.table_id] = now
        if len(self.tables) > TABLES_REMEMBERED:
            self.tables.popitem(last=False)
        if before is None:
            return None
        occasion: BotOccasion | None = None
        moment = ""
        if now.out_count > before.out_count:
            # the k-th player out of this game: the same number for every worker
            occasion, moment = "bankruptcy", str(now.out_count)
        elif before.auction is not None and now.auction != before.auction:
            won = [s for s in state.squares if s["square"] == before.auction_square]
            if won and won[0]["owner"] == request.seat:
                occasion, moment = "good_auction", before.auction
        if occasion is None or self.rng.random() >= self.chance:
            return None
        return BotSticker(
            table_id=request.table_id, bot_id=request.player_id, occasion=occasion, moment=moment
        )

    def farewell(self, game: GameFinished) -> BotSticker | None:
        """The end-of-game sticker of a finished game's roster bot, if any: at most one per
        game (a table of bots all saying "gg" is a flood), the best placed bot first, each
        with the same chance. A game heard twice (a republished announcement) gets no
        second sticker from this worker; one that another worker heard too gets none from
        chat (one `game_end` per table, whichever bot asks)."""
        self.tables.pop(game.table_id, None)  # the game is over: no later request compares
        if game.table_id in self.finished:
            return None
        self.finished[game.table_id] = None
        if len(self.finished) > TABLES_REMEMBERED:
            self.finished.popitem(last=False)
        by_seat = {s.seat: s for s in game.seats}
        order = [*game.placement, *(s.seat for s in game.seats if s.seat not in game.placement)]
        for seat in order:
            result = by_seat.get(seat)
            if result is None or not result.bot or bot_persona(result.player_id) is None:
                continue
            if self.rng.random() < self.chance:
                return BotSticker(
                    table_id=game.table_id, bot_id=result.player_id, occasion="game_end"
                )
        return None


Request = Callable[[bytes, str, float], Awaitable[object]]


class StickerPoster:
    """Sends the stickers `StickerMoments` finds, without waiting for them."""

    def __init__(self, request: Request, rng: random.Random) -> None:
        self.request = request
        self.moments = StickerMoments(rng)
        self._tasks: set[asyncio.Task[None]] = set()

    def seen(self, request: DecisionRequest) -> None:
        sticker = self.moments.moment(request)
        if sticker is not None:
            self._send(sticker)

    def game_finished(self, game: GameFinished) -> None:
        sticker = self.moments.farewell(game)
        if sticker is not None:
            self._send(sticker)

    def _send(self, body: BotSticker) -> None:
        task = asyncio.create_task(self._post(body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, body: BotSticker) -> None:
        try:
            await self.request(encode(body), CHAT_BOT_STICKER, TIMEOUT)
        except Exception as exc:  # no chat service, or it refused: no sticker this time
            log.debug("bot_sticker_not_posted", table=body.table_id, error=type(exc).__name__)
