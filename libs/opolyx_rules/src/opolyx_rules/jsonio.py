"""JSON forms of the state: the full one for storage (with the RNG and any scripted
outcomes) and the public view for players (without them: R4 of issue 4, fair dice)."""

from __future__ import annotations

from dataclasses import fields, replace
from functools import cache
from types import MappingProxyType
from typing import Any

from .errors import StateVersionError
from .modes import Feature, ModeConfig, get_mode
from .state import (
    RULES_MAJOR,
    SCHEMA_VERSION,
    AuctionPending,
    BusPending,
    BuyPending,
    JackpotPending,
    Offer,
    PaymentPending,
    Pending,
    PropState,
    RollPending,
    Script,
    SeatState,
    SpeedFace,
    State,
    TeleportPending,
    Then,
)

_PENDING_CLASSES: dict[str, Any] = {
    "roll": RollPending,
    "buy": BuyPending,
    "auction": AuctionPending,
    "payment": PaymentPending,
    "jackpot": JackpotPending,
    "bus": BusPending,
    "teleport": TeleportPending,
}


@cache
def _config_changes(config: ModeConfig) -> dict[str, Any]:
    """The fields where a game's configuration differs from its named mode (tests and
    custom tables); empty for every standard game."""
    base = get_mode(config.name)
    changes: dict[str, Any] = {}
    for f in fields(ModeConfig):
        value = getattr(config, f.name)
        if f.init and value != getattr(base, f.name):
            if isinstance(value, Feature):
                value = value.value
            changes[f.name] = list(value) if isinstance(value, tuple) else value
    return changes


def _config_changes_of(config: ModeConfig) -> dict[str, Any]:
    """`_config_changes` as a new dict; a standard game's configuration is its mode's own
    object, so it is answered without hashing the configuration (a frozen dataclass of
    ~40 fields: the hash was a fifth of `public_view`'s time)."""
    if get_mode(config.name) is config:
        return {}
    return dict(_config_changes(config))


def squares_to_json(props: tuple[PropState, ...]) -> list[dict[str, Any]]:
    """The ``squares`` of both JSON forms: one entry per property, in board order."""
    return [
        {
            "square": square,
            "owner": owner,
            "buildings": buildings,
            "mortgaged": mortgaged,
            "mortgaged_round": mortgaged_round,
        }
        for square, owner, buildings, mortgaged, mortgaged_round in props
    ]


_SEAT_KEYS = SeatState._fields


def _config_from(mode: str, changes: dict[str, Any]) -> ModeConfig:
    base = get_mode(mode)
    if not changes:
        return base
    typed: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
    if "features" in typed:
        typed["features"] = Feature(typed["features"])
    return replace(base, **typed)


def _pending_to_json(p: Pending | None) -> dict[str, Any] | None:
    if p is None:
        return None
    out: dict[str, Any] = {"kind": p.kind, "seat": p.seat, "deadline": p.deadline}
    match p:
        case BuyPending():
            out["square"] = p.square
        case AuctionPending():
            out.update(
                square=p.square,
                decliner=p.decliner,
                order=list(p.order),
                bid=p.bid,
                leader=p.leader,
                minimum=p.minimum,
                passed=sorted(p.passed),
            )
        case PaymentPending():
            out.update(
                amount=p.amount,
                creditors=[list(c) for c in p.creditors],
                reason=p.reason,
                then=p.then,
                steps=p.steps,
                queue=[list(q) for q in p.queue],
            )
    return out


def _pending_from_json(d: dict[str, Any] | None) -> Pending | None:
    if d is None:
        return None
    kind = d["kind"]
    seat, deadline = d["seat"], d["deadline"]
    if kind == "buy":
        return BuyPending(seat, deadline, d["square"])
    if kind == "auction":
        return AuctionPending(
            seat,
            deadline,
            d["square"],
            d["decliner"],
            tuple(d["order"]),
            d["bid"],
            d["leader"],
            d["minimum"],
            frozenset(d["passed"]),
        )
    if kind == "payment":
        return PaymentPending(
            seat,
            deadline,
            d["amount"],
            tuple((c[0], c[1]) for c in d["creditors"]),
            d["reason"],
            Then(d["then"]),
            d["steps"],
            tuple((q[0], q[1], q[2]) for q in d["queue"]),
        )
    simple: Pending = _PENDING_CLASSES[kind](seat, deadline)
    return simple


def state_to_json(state: State, *, secrets: bool = True, squares: Any = None) -> dict[str, Any]:
    """The state as JSON values. ``squares``: what to put under ``"squares"`` instead of
    ``squares_to_json(state.props)``, for a caller that keeps that part already serialised
    per ``props`` tuple (states are immutable and most commands leave ``props`` as it was;
    building those dicts is most of this function's time)."""
    out: dict[str, Any] = {
        "schema_version": state.schema_version,
        "rules_version": state.rules_version,
        "mode": state.config.name,
        "config": _config_changes_of(state.config),
        "seed_commitment": state.seed_commitment,
        "round": state.round,
        "first_seat": state.first_seat,
        "current_seat": state.current_seat,
        "finished": state.finished,
        "winner": state.winner,
        "placement": list(state.placement),
        "finish_reason": state.finish_reason,
        "pending": _pending_to_json(state.pending),
        "seats": [dict(zip(_SEAT_KEYS, s, strict=True)) for s in state.seats],
        "squares": squares_to_json(state.props) if squares is None else squares,
        "boosts": [{str(sq): pct for sq, pct in b.items()} for b in state.boosts],
        "pot": state.pot,
        "offers": [
            {
                "id": o.id,
                "from": o.frm,
                "to": o.to,
                "give_cash": o.give_cash,
                "give_squares": list(o.give_squares),
                "take_cash": o.take_cash,
                "take_squares": list(o.take_squares),
                "deadline": o.deadline,
            }
            for o in state.offers
        ],
        "offers_made": state.offers_made,
        "last_card": state.last_card,
        "dice": list(state.dice) if state.dice else None,
        "third": state.third,
        "turn_deadline": state.turn_deadline,
        "doubles": state.doubles,
        "roll_again": state.roll_again,
        "x_jump": state.x_jump,
        "built": sorted(state.built),
        "out_count": state.out_count,
    }
    if secrets:
        out["drawn_cards"] = state.drawn_cards
        out["rng"] = state.rng
        out["script"] = {
            "dice": [list(d) for d in state.script.dice],
            "speed_die": list(state.script.speed_die),
            "jackpot_die": list(state.script.jackpot_die),
            "deck": list(state.script.deck),
        }
    return out


#: the keys of the stored form that players never see
SECRET_KEYS = ("rng", "script", "drawn_cards")


def public_view(state: State, *, squares: Any = None) -> dict[str, Any]:
    """What players may see: no RNG state, no scripted outcomes, no deck order
    (``squares`` as for ``state_to_json``)."""
    return state_to_json(state, secrets=False, squares=squares)


def public_from_stored(stored: dict[str, Any]) -> dict[str, Any]:
    """The public view of a state already serialised with ``state_to_json``, without
    serialising it again (the table service stores and publishes every state)."""
    return {key: value for key, value in stored.items() if key not in SECRET_KEYS}


def state_from_json(data: dict[str, Any]) -> State:
    """Load a stored state. A state of another rules major version or schema is refused
    (R22): it must be continued by the library version that created it."""
    rules_version = str(data.get("rules_version", ""))
    major = rules_version.split(".", 1)[0]
    if major != str(RULES_MAJOR):
        raise StateVersionError(
            f"state was created under rules version {rules_version or '?'}; this library "
            f"implements major version {RULES_MAJOR} and cannot continue it"
        )
    if data.get("schema_version") != SCHEMA_VERSION:
        raise StateVersionError(
            f"state schema {data.get('schema_version')!r} is not {SCHEMA_VERSION}"
        )
    script = data.get("script") or {}
    return State(
        schema_version=data["schema_version"],
        rules_version=rules_version,
        config=_config_from(data["mode"], data.get("config") or {}),
        seed_commitment=data["seed_commitment"],
        seats=tuple(SeatState(**s) for s in data["seats"]),
        props=tuple(
            PropState(q["square"], q["owner"], q["buildings"], q["mortgaged"], q["mortgaged_round"])
            for q in data["squares"]
        ),
        boosts=tuple(
            MappingProxyType({int(sq): pct for sq, pct in b.items()}) for b in data["boosts"]
        ),
        rng=data.get("rng", 0),
        script=Script(
            dice=tuple((d[0], d[1]) for d in script.get("dice", ())),
            speed_die=tuple(script.get("speed_die", ())),
            jackpot_die=tuple(script.get("jackpot_die", ())),
            deck=tuple(script.get("deck", ())),
        ),
        first_seat=data["first_seat"],
        round=data["round"],
        current_seat=data["current_seat"],
        pending=_pending_from_json(data["pending"]),
        finished=data["finished"],
        winner=data["winner"],
        placement=tuple(data["placement"]),
        finish_reason=data["finish_reason"],
        pot=data["pot"],
        offers=tuple(
            Offer(
                o["id"],
                o["from"],
                o["to"],
                o["give_cash"],
                tuple(o["give_squares"]),
                o["take_cash"],
                tuple(o["take_squares"]),
                o["deadline"],
            )
            for o in data["offers"]
        ),
        offers_made=data["offers_made"],
        drawn_cards=data.get("drawn_cards", 0),
        last_card=data["last_card"],
        dice=(data["dice"][0], data["dice"][1]) if data["dice"] else None,
        third=None if data["third"] is None else SpeedFace(data["third"]),
        turn_deadline=data["turn_deadline"],
        doubles=data["doubles"],
        roll_again=data["roll_again"],
        x_jump=data["x_jump"],
        built=frozenset(data["built"]),
        out_count=data["out_count"],
    )
