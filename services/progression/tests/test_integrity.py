"""The alt-farming check (pure): one-way value and resignation patterns."""

from __future__ import annotations

from opolyx_progression.integrity import Evidence, FarmingRules, find_farming

RULES = FarmingRules(min_games=3, min_value=1000, window_games=20)


def ev(table: str, giver: str, receiver: str, value: int, kind: str = "trade") -> Evidence:
    return Evidence(table, giver, receiver, kind, value)


def test_value_moving_one_way_in_three_games_is_flagged_with_its_evidence() -> None:
    history = [ev("g1", "alt", "main", 800), ev("g2", "alt", "main", 900, "bankruptcy")]
    flags = find_farming([ev("g3", "alt", "main", 700)], history, RULES)
    assert len(flags) == 1
    flag = flags[0]
    assert (flag.kind, flag.giver_id, flag.receiver_id) == ("one_way_value", "alt", "main")
    assert flag.games == ("g1", "g2", "g3")
    assert flag.value == 2400


def test_trades_in_both_directions_are_not_flagged() -> None:
    history = [ev("g1", "ann", "ben", 800), ev("g2", "ben", "ann", 900)]
    assert find_farming([ev("g3", "ann", "ben", 700)], history, RULES) == []


def test_two_games_or_little_value_are_not_a_pattern() -> None:
    assert find_farming([ev("g2", "a", "b", 5000)], [ev("g1", "a", "b", 5000)], RULES) == []
    small = [ev("g1", "a", "b", 100), ev("g2", "a", "b", 100)]
    assert find_farming([ev("g3", "a", "b", 100)], small, RULES) == []


def test_resigning_to_the_same_winner_again_and_again_is_flagged() -> None:
    history = [ev(f"g{i}", "alt", "main", 0, "resignation") for i in (1, 2)]
    flags = find_farming([ev("g3", "alt", "main", 0, "resignation")], history, RULES)
    assert [(f.kind, f.games) for f in flags] == [("resignation_pattern", ("g1", "g2", "g3"))]


def test_resignations_both_ways_are_not_flagged() -> None:
    history = [ev("g1", "a", "b", 0, "resignation"), ev("g2", "b", "a", 0, "resignation")]
    assert find_farming([ev("g3", "a", "b", 0, "resignation")], history, RULES) == []


def test_other_pairs_in_the_history_do_not_count() -> None:
    history = [ev("g1", "a", "c", 5000), ev("g2", "a", "d", 5000)]
    assert find_farming([ev("g3", "a", "b", 5000)], history, RULES) == []
