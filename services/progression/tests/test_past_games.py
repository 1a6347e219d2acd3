"""A player's past games and those of the players they follow (issue 16: the profile's
links to replays), asked over a real nats-server as the gateway."""

from __future__ import annotations

from nats.aio.client import Client
from opolyx_contracts import progression as contract
from opolyx_contracts.replay import PAST_GAMES, PastGamesReply, PastGamesRequest
from opolyx_progression.app import ProgressionApp
from opolyx_testing.finished_games import WEDNESDAY, two_player_game
from test_service_nats import app, app_settings, ask, publish_game, wait_credited

__all__ = ["app", "app_settings"]  # fixtures used by the test below (the others: conftest)


async def test_past_games_list_own_games_and_the_followed_players_newest_first(
    app: ProgressionApp, admin: Client, gateway: Client
) -> None:
    await publish_game(admin, two_player_game("g1", "ann", "ben", at=WEDNESDAY))
    await publish_game(admin, two_player_game("g2", "ben", "cid", at=WEDNESDAY + 60))
    await publish_game(admin, two_player_game("g3", "dan", "eve", at=WEDNESDAY + 120))
    for player, table in (("ann", "g1"), ("ben", "g2"), ("dan", "g3")):
        await wait_credited(gateway, player, table)
    followed = await ask(
        gateway,
        contract.FOLLOW,
        contract.FollowRequest(player_id="ann", target_id="ben"),
        contract.FollowReply,
    )
    assert followed.following
    reply = await ask(gateway, PAST_GAMES, PastGamesRequest(player_id="ann"), PastGamesReply)
    assert [(g.table_id, g.place, g.player_id) for g in reply.games] == [("g1", 1, "ann")]
    assert [(g.table_id, g.player_id, g.place) for g in reply.followed] == [
        ("g2", "ben", 1),
        ("g1", "ben", 2),
    ]
    assert reply.games[0].mode == "classic" and reply.games[0].rounds == 30
    limited = await ask(
        gateway, PAST_GAMES, PastGamesRequest(player_id="ann", limit=1), PastGamesReply
    )
    assert [g.table_id for g in limited.followed] == ["g2"]
    nobody = await ask(gateway, PAST_GAMES, PastGamesRequest(player_id="zed"), PastGamesReply)
    assert nobody.games == [] and nobody.followed == []
