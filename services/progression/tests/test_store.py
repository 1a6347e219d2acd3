"""Crediting and every query against a real database: SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from opolyx_contracts.errors import ContractError
from opolyx_contracts.progression import FOLLOW_SELF, UNKNOWN_PLAYER
from opolyx_progression import reads, social
from opolyx_progression.cards import draw_from_seed
from opolyx_progression.database import migrate, open_database
from opolyx_progression.integrity import FarmingRules
from opolyx_progression.schema import metadata, weekly_xp, weekly_xp_counts
from opolyx_progression.stats import game_stats
from opolyx_progression.store import CreditStore
from opolyx_progression.weekly import add_weekly_xp
from opolyx_rules.progression import level_for_xp, xp_for_seat
from opolyx_testing.finished_games import WEDNESDAY, finished_game, seat_result, two_player_game
from progression_builders import EventLog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

NOW = WEDNESDAY + 3600


def store_for(engine: AsyncEngine) -> CreditStore:
    return CreditStore(
        engine,
        farming=FarmingRules(min_games=3, min_value=1000),
        new_seed=itertools.count(1).__next__,
        clock=lambda: NOW,
    )


async def test_migrations_create_exactly_the_schema_the_code_uses(engine: AsyncEngine) -> None:
    await migrate(engine)  # a second run changes nothing
    async with engine.connect() as conn:
        diff = await conn.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync), metadata)
        )
    assert diff == []


async def test_a_game_is_credited_once_however_often_it_arrives(engine: AsyncEngine) -> None:
    store = store_for(engine)
    game = two_player_game("t1", "ann", "ben")
    first = await store.credit(game, game_stats([]))
    assert first is not None and first.reason == "paid"
    assert await store.credit(game, game_stats([])) is None
    assert await store.is_credited("t1")
    async with engine.connect() as conn:
        ann = await reads.profile(conn, "ann", NOW)
    won = xp_for_seat(place=1, complete_groups=0, survived=True, final_round=30)
    assert ann.games_credited == 1
    assert ann.total_xp == won + first.credits[0].mission_xp
    assert ann.level == level_for_xp(ann.total_xp)
    assert ann.weekly_xp == ann.total_xp
    assert [g.table_id for g in ann.recent_games] == ["t1"]
    assert ann.recent_games[0].xp == won


async def test_the_post_game_credit_shows_xp_level_and_cards(engine: AsyncEngine) -> None:
    store = store_for(engine)
    async with engine.connect() as conn:
        pending = await reads.game_credit(conn, "ben", "t1")
    assert pending.status == "pending" and pending.credit is None
    await store.credit(two_player_game("t1", "ann", "ben"), game_stats([]))
    async with engine.connect() as conn:
        ann = await reads.game_credit(conn, "ann", "t1")
        cards = await reads.player_cards(conn, "ann")
    assert ann.status == "credited" and ann.credit is not None
    assert ann.credit.level_before == 1 and ann.credit.level_after >= 2
    sources = sorted(c.source for c in ann.credit.cards)
    assert sources == ["level", "win"]
    for card in cards.cards:
        redrawn = draw_from_seed(card.seed)
        assert (redrawn.square, redrawn.rarity.value) == (card.square, card.rarity)
    assert set(cards.best_by_square) == {c.square for c in cards.cards}


async def test_a_short_game_pays_nothing_but_is_recorded(engine: AsyncEngine) -> None:
    store = store_for(engine)
    outcome = await store.credit(two_player_game("t1", "ann", "ben", rounds=12), game_stats([]))
    assert outcome is not None and outcome.reason == "too_short"
    async with engine.connect() as conn:
        ann = await reads.profile(conn, "ann", NOW)
        credit = await reads.game_credit(conn, "ann", "t1")
    assert ann.total_xp == 0 and ann.weekly_xp == 0 and ann.cards == 0
    assert credit.credit is not None and credit.credit.reason == "too_short"


async def test_missions_show_progress_from_credited_games(engine: AsyncEngine) -> None:
    store = store_for(engine)
    log = EventLog("t1").buy(0, 1).buy(0, 3).auction_won(0, 6, 700).rent(1, 0, 3500).build(0, 1)
    await store.credit(two_player_game("t1", "ann", "ben"), game_stats(log.batches))
    async with engine.connect() as conn:
        missions = await reads.missions(conn, "ann", NOW)
        fresh = await reads.missions(conn, "zoe", NOW)
    assert len(missions.missions) == 6
    assert any(m.progress > 0 for m in missions.missions)
    assert all(m.progress == 0 for m in fresh.missions)
    assert [m.mission_id for m in fresh.missions] != [] and all(
        m.ends_at > NOW for m in fresh.missions
    )


async def test_weekly_leaderboard_top_ties_and_own_rank(engine: AsyncEngine) -> None:
    store = store_for(engine)
    # Four games: ann wins twice, ben and cid once each; dan only loses.
    for table, winner, loser in [
        ("t1", "ann", "dan"),
        ("t2", "ann", "dan"),
        ("t3", "ben", "dan"),
        ("t4", "cid", "dan"),
    ]:
        await store.credit(two_player_game(table, winner, loser), game_stats([]))
    async with engine.begin() as conn:
        # Two players with exactly the same XP this week share a position.
        for pid in ("tie1", "tie2"):
            await reads.touch_player(conn, pid, None, NOW)
        await add_weekly_xp(conn, {("2026-W49", "tie1"): 77, ("2026-W49", "tie2"): 77})
    async with engine.connect() as conn:
        board = await reads.leaderboard(conn, "cid", "weekly", None, NOW)
        small = await reads.leaderboard(conn, "dan", "weekly", None, NOW, limit=1)
        other_week = await reads.leaderboard(conn, "cid", "weekly", "2026-W40", NOW)
    assert board.week == "2026-W49" and board.players == 6
    xp = {e.player_id: e.xp for e in board.entries}
    assert board.entries[0].player_id == "ann" and board.entries[0].position == 1
    assert [e.xp for e in board.entries] == sorted(xp.values(), reverse=True)
    for entry in board.entries:
        assert entry.position == 1 + sum(1 for v in xp.values() if v > entry.xp)
    positions = {e.player_id: e.position for e in board.entries}
    assert positions["tie1"] == positions["tie2"] == 5
    assert board.own is not None and board.own.player_id == "cid"
    assert [e.player_id for e in small.entries] == ["ann"]
    assert small.own is not None and small.own.player_id == "dan"
    assert small.own.position == positions["dan"]
    assert other_week.entries == [] and other_week.own is None


async def test_follow_unfollow_following_list_and_leaderboard(engine: AsyncEngine) -> None:
    store = store_for(engine)
    await store.credit(two_player_game("t1", "ann", "ben"), game_stats([]))
    await store.credit(two_player_game("t2", "cid", "dan"), game_stats([]))
    async with engine.begin() as conn:
        reply = await social.follow(conn, "ben", "ann", NOW)
        again = await social.follow(conn, "ben", "ann", NOW)
        await social.follow(conn, "ben", "cid", NOW + 1)
        await social.report_presence(conn, ["ann"], [], {"ann": "Ann"}, NOW)
        await social.set_current_game(conn, ["cid"], "t9", NOW)
    assert reply.following and reply.followers == 1 and reply.following_count == 1
    assert again.followers == 1
    async with engine.connect() as conn:
        listed = await social.following(
            conn, "ben", NOW + 10, presence_ttl=60, current_game_ttl=3600
        )
        later = await social.following(
            conn, "ben", NOW + 120, presence_ttl=60, current_game_ttl=3600
        )
        board = await reads.leaderboard(conn, "ben", "following", None, NOW)
        ann = await reads.public_profile(conn, "ben", "ann", NOW)
    by_id = {p.player_id: p for p in listed.players}
    assert set(by_id) == {"ann", "cid"} and listed.following == 2
    assert by_id["ann"].online and by_id["ann"].display_name == "Ann"
    assert not by_id["cid"].online and by_id["cid"].table_id == "t9"
    assert not {p.player_id: p for p in later.players}["ann"].online
    assert {e.player_id for e in board.entries} == {"ann", "ben", "cid"}
    assert board.own is not None and board.own.player_id == "ben"
    assert ann.followed_by_you and ann.followers == 1
    async with engine.begin() as conn:
        gone = await social.unfollow(conn, "ben", "ann")
        await social.leave_game(conn, "cid", "t9")
    assert not gone.following and gone.followers == 0 and gone.following_count == 1
    async with engine.connect() as conn:
        listed = await social.following(
            conn, "ben", NOW + 10, presence_ttl=60, current_game_ttl=3600
        )
    assert [(p.player_id, p.table_id) for p in listed.players] == [("cid", None)]


async def test_follow_refuses_self_and_unknown_players(engine: AsyncEngine) -> None:
    await store_for(engine).credit(two_player_game("t1", "ann", "ben"), game_stats([]))
    async with engine.begin() as conn:
        with pytest.raises(ContractError) as self_follow:
            await social.follow(conn, "ann", "ann", NOW)
        with pytest.raises(ContractError) as unknown:
            await social.follow(conn, "ann", "nobody", NOW)
    assert self_follow.value.code == FOLLOW_SELF
    assert unknown.value.code == UNKNOWN_PLAYER
    async with engine.connect() as conn:
        with pytest.raises(ContractError) as profile:
            await reads.public_profile(conn, "ann", "nobody", NOW)
    assert profile.value.code == UNKNOWN_PLAYER


async def test_boosts_are_the_best_card_per_square(engine: AsyncEngine) -> None:
    store = store_for(engine)
    for i in range(4):
        await store.credit(two_player_game(f"t{i}", "ann", f"x{i}"), game_stats([]))
    async with engine.connect() as conn:
        owned = await reads.player_cards(conn, "ann")
        boosts = await social.boosts(conn, ["ann", "nobody"])
    assert len(owned.cards) >= 4
    best: dict[int, int] = {}
    for card in owned.cards:
        best[card.square] = max(best.get(card.square, 0), card.boost_pct)
    assert boosts == {"ann": best}


async def test_a_farming_pattern_is_flagged_and_pays_nothing_a_normal_one_is_not(
    engine: AsyncEngine,
) -> None:
    store = store_for(engine)
    outcomes = []
    # alt gives main 1,000+ net value in every game: the third completes the pattern.
    for i in (1, 2, 3):
        log = EventLog(f"f{i}").trade(1, 0, give_cash=1200, take_cash=600)
        game = two_player_game(f"f{i}", "main", "alt")
        outcomes.append(await store.credit(game, game_stats(log.batches, winner=0)))
    # ann and ben trade both ways across three games: normal play.
    for i, (frm, to) in enumerate([(0, 1), (1, 0), (0, 1)], start=1):
        log = EventLog(f"n{i}").trade(frm, to, give_cash=1200, take_cash=600)
        game = two_player_game(f"n{i}", "ann", "ben")
        outcomes.append(await store.credit(game, game_stats(log.batches, winner=0)))
    reasons = [o.reason if o else None for o in outcomes]
    assert reasons == ["paid", "paid", "flagged", "paid", "paid", "paid"]
    async with engine.connect() as conn:
        flags = await reads.flags(conn, 10)
        main = await reads.game_credit(conn, "main", "f3")
    assert len(flags.flags) == 1
    flag = flags.flags[0]
    assert (flag.kind, flag.giver_id, flag.receiver_id, flag.table_id) == (
        "one_way_value",
        "alt",
        "main",
        "f3",
    )
    assert flag.games == ["f1", "f2", "f3"] and flag.value == 1800
    assert main.credit is not None and main.credit.xp == 0 and main.credit.cards == []


async def test_team_games_are_not_checked_for_one_way_value(engine: AsyncEngine) -> None:
    store = store_for(engine)
    for i in (1, 2, 3):
        log = EventLog(f"t{i}").trade(1, 0, give_cash=3000)
        game = finished_game(
            f"t{i}",
            [
                seat_result(0, "a", place=1),
                seat_result(1, "b", place=1),
                seat_result(2, "c", place=2),
                seat_result(3, "d", place=3),
            ],
            mode="team",
        )
        outcome = await store.credit(game, game_stats(log.batches))
        assert outcome is not None and outcome.reason == "paid"


async def test_a_batch_credits_each_game_once_and_carries_totals_through(
    engine: AsyncEngine,
) -> None:
    store = store_for(engine)
    await store.credit(two_player_game("t0", "ann", "ben"), game_stats([]))
    batch = [
        (two_player_game("t0", "ann", "ben"), game_stats([])),  # credited before
        (two_player_game("t1", "ann", "ben"), game_stats([])),
        (two_player_game("t1", "ann", "ben"), game_stats([])),  # twice in the batch
        (two_player_game("t2", "ben", "ann"), game_stats([])),
    ]
    outcomes = await store.credit_many(batch)
    assert [o.table_id if o else None for o in outcomes] == [None, "t1", None, "t2"]
    one_by_one = store_for(engine)
    assert await one_by_one.credit_many(batch) == [None] * 4
    async with engine.connect() as conn:
        ann = await reads.profile(conn, "ann", NOW)
        history = [await reads.game_credit(conn, "ann", t) for t in ("t0", "t1", "t2")]
    assert ann.games_credited == 3
    credits = [h.credit for h in history]
    assert all(c is not None for c in credits)
    # Each game starts where the one before it ended, also inside one batch.
    levels = [(c.level_before, c.level_after) for c in credits if c is not None]
    assert levels[1][0] == levels[0][1] and levels[2][0] == levels[1][1]
    gained = sum(c.xp + c.mission_xp for c in credits if c is not None)
    assert ann.total_xp == gained


async def test_a_farming_pattern_inside_one_batch_is_flagged(engine: AsyncEngine) -> None:
    store = store_for(engine)
    batch = []
    for i in (1, 2, 3):
        log = EventLog(f"f{i}").bankrupt_to(1, 0, 1500)
        batch.append((two_player_game(f"f{i}", "main", "alt"), game_stats(log.batches, winner=0)))
    outcomes = await store.credit_many(batch)
    assert [o.reason if o else None for o in outcomes] == ["paid", "paid", "flagged"]


async def test_two_instances_crediting_the_same_games_at_once_credit_each_once(
    database_url: str, engine: AsyncEngine
) -> None:
    other = await open_database(database_url)
    try:
        batch = [
            (two_player_game(f"t{i}", f"w{i % 3}", f"l{i % 2}"), game_stats([])) for i in range(6)
        ]
        first, second = await asyncio.gather(
            store_for(engine).credit_many(batch), store_for(other).credit_many(batch)
        )
    finally:
        await other.dispose()
    for mine, theirs in zip(first, second, strict=True):
        assert (mine is None) != (theirs is None)
    async with engine.connect() as conn:
        winners = [await reads.profile(conn, f"w{i}", NOW) for i in range(3)]
    assert sum(w.games_credited for w in winners) == 6


async def test_the_weekly_histogram_always_matches_the_weekly_rows(engine: AsyncEngine) -> None:
    store = store_for(engine)
    games = [
        (two_player_game(f"t{i}", f"p{i % 5}", f"p{(i + 2) % 7}"), game_stats([]))
        for i in range(30)
    ]
    await store.credit_many(games[:12])
    for game in games[12:]:
        await store.credit(*game)
    async with engine.connect() as conn:
        rows = (await conn.execute(select(weekly_xp.c.week, weekly_xp.c.xp))).all()
        counts = (
            await conn.execute(select(weekly_xp_counts).where(weekly_xp_counts.c.players != 0))
        ).all()
    expected: dict[tuple[str, int], int] = {}
    for week, xp in rows:
        expected[(week, xp)] = expected.get((week, xp), 0) + 1
    assert {(c.week, c.xp): c.players for c in counts} == expected


async def test_the_shared_top_is_at_most_its_ttl_old_and_the_own_row_always_fresh(
    engine: AsyncEngine,
) -> None:
    store = store_for(engine)
    await store.credit(two_player_game("t1", "ann", "ben"), game_stats([]))
    tops = reads.TopCache(ttl=1.0)
    async with engine.connect() as conn:
        first = await reads.leaderboard(conn, "cid", "weekly", "2026-W49", NOW, cache=tops)
    await store.credit(two_player_game("t2", "cid", "dan"), game_stats([]))
    async with engine.connect() as conn:
        soon = await reads.leaderboard(conn, "cid", "weekly", "2026-W49", NOW + 0.5, cache=tops)
        later = await reads.leaderboard(conn, "cid", "weekly", "2026-W49", NOW + 1.5, cache=tops)
    assert first.own is None
    assert [e.player_id for e in soon.entries] == [e.player_id for e in first.entries]
    assert soon.own is not None and soon.own.player_id == "cid" and soon.players == 4
    assert "cid" in {e.player_id for e in later.entries}


async def test_an_invalidated_top_is_read_again_and_a_read_from_before_is_not_kept(
    engine: AsyncEngine,
) -> None:
    store = store_for(engine)
    await store.credit(two_player_game("t1", "ann", "ben"), game_stats([]))
    tops = reads.TopCache(ttl=3600.0)
    async with engine.connect() as conn:
        await reads.leaderboard(conn, "ann", "weekly", "2026-W49", NOW, cache=tops)
        await store.credit(two_player_game("t2", "cid", "dan"), game_stats([]))
        tops.invalidate()  # what the games consumer does after the commit
        fresh = await reads.leaderboard(conn, "ann", "weekly", "2026-W49", NOW, cache=tops)
    assert {"cid", "dan"} <= {e.player_id for e in fresh.entries}

    class InvalidatedMidRead:
        """A connection whose read is overtaken by a credit's invalidation."""

        def __init__(self, conn: object) -> None:
            self.conn = conn

        async def execute(self, *args: object) -> object:
            result = await self.conn.execute(*args)  # type: ignore[attr-defined]
            tops.invalidate()
            return result

    tops.invalidate()
    async with engine.connect() as conn:
        await tops.top(InvalidatedMidRead(conn), "2026-W49", NOW)  # type: ignore[arg-type]
        await store.credit(two_player_game("t3", "eve", "fay"), game_stats([]))
        again = await tops.top(conn, "2026-W49", NOW)
    assert {"eve", "fay"} <= {e.player_id for e in again}


async def test_the_own_row_is_fresh_when_the_asker_is_in_a_stale_shared_top(
    engine: AsyncEngine,
) -> None:
    store = store_for(engine)
    await store.credit(two_player_game("t1", "ann", "ben"), game_stats([]))
    tops = reads.TopCache(ttl=3600.0)
    async with engine.connect() as conn:
        before = await reads.leaderboard(conn, "ben", "weekly", "2026-W49", NOW, cache=tops)
        await store.credit(two_player_game("t2", "ben", "cid"), game_stats([]))
        after = await reads.leaderboard(conn, "ben", "weekly", "2026-W49", NOW, cache=tops)
    assert before.own is not None and after.own is not None
    assert after.entries == before.entries  # the shared top, not invalidated here
    assert after.own.xp > before.own.xp and after.own.position == 1
