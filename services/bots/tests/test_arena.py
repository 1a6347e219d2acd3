"""The arena: whole games on the rules library, win rates with confidence intervals."""

from __future__ import annotations

import pytest
from opolyx_bots.__main__ import main
from opolyx_bots.arena import play, run_mixed, run_vs_simple, wilson, winners


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("mode", ["blitz", "team"])
def test_arena_games_run_to_the_end_and_credit_the_winning_side(mode: str) -> None:
    state, commands = play(mode, ["balanced", "simple", "trader", "simple"], seed=3)
    assert state.finished and commands > 0
    won = winners(state)
    assert state.winner in won
    if mode == "team":
        assert len(won) == 2 and len({state.seats[s].team for s in won}) == 1


def test_results_count_every_seat_of_every_game() -> None:
    mixed = run_mixed("blitz", games=6, seats=3, seed=5)
    assert sum(t.games for t in mixed.tallies.values()) == 18
    assert 1 <= sum(t.wins for t in mixed.tallies.values()) <= 6
    versus = run_vs_simple("blitz", "shark", games=4, seats=4, seed=5)
    assert versus.tallies["shark"].games == 4 and versus.tallies["simple"].games == 12


def test_cli_prints_win_rates_and_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    main(["arena", "--games", "4", "--mode", "blitz", "--styles", "builder"])
    out = capsys.readouterr().out
    assert "mixed field (blitz, 4 seats): 4 games" in out
    assert "builder vs 3 x simple (blitz)" in out
    assert "95% CI" in out and "best style: builder" in out


def test_cli_refuses_bad_arguments() -> None:
    with pytest.raises(SystemExit):
        main(["arena", "--games", "0"])
    with pytest.raises(SystemExit):
        main(["arena", "--styles", "wizard"])
    with pytest.raises(SystemExit):
        main(["arena", "--mode", "chess"])


def test_cli_help_and_unknown_commands(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--help"])
    assert "opolyx-bots arena --games N --mode M" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["dance"])
