"""Write `game.py`: typed models of every rules command and event, from the rules library.

    python -m opolyx_contracts.generate_game          # rewrite game.py
    python -m opolyx_contracts.generate_game --check  # exit 1 when game.py is out of date

The rules library's command and event classes (`opolyx_rules.commands.COMMAND_TYPES`,
`opolyx_rules.events.EVENT_TYPES`) are the source: one pydantic model per class, its JSON
`type` as the literal discriminator, its fields with the same names, types and defaults.
The output is a plain module (so type checkers see real classes); `tests/test_game.py`
fails whenever it differs from what this script would write, so it cannot drift.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

__all__ = ["GAME_MODULE", "render"]

GAME_MODULE = Path(__file__).with_name("game.py")

MAX_ITEMS = 64
"""Bound on every list inside a command (the board has 28 properties)."""
MAX_TEXT = 64
"""Bound on every string inside a command."""

RENAMED = {"GameFinished": "GameFinishedEvent"}
"""Rules classes whose model takes another name: `opolyx_contracts.table.GameFinished` is
the GAMES stream's message, and generated schemas (AsyncAPI) need distinct names."""


def _fields(cls: type[Any]) -> list[tuple[str, Any, bool, Any]]:
    """(name, type hint, has default, default) of a NamedTuple or dataclass, in order."""
    hints = typing.get_type_hints(cls)
    if dataclasses.is_dataclass(cls):
        out = []
        for field in dataclasses.fields(cls):
            has = field.default is not dataclasses.MISSING
            out.append((field.name, hints[field.name], has, field.default if has else None))
        return out
    defaults: dict[str, Any] = getattr(cls, "_field_defaults", {})
    return [(name, hints[name], name in defaults, defaults.get(name)) for name in cls._fields]


def _type(hint: Any, bounded: bool) -> str:
    """The annotation text of a rules field type (strict scalars: "5" is not an int)."""
    if hint is int:
        return "SInt"
    if hint is str:
        return "BoundedText" if bounded else "SStr"
    if hint is bool:
        return "SBool"
    if hint is float:
        return "SFloat"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        # json.dumps: double quotes, as ruff format writes them
        return "Literal[" + ", ".join(json.dumps(member.value) for member in hint) + "]"
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is Literal:
        return "Literal[" + ", ".join(repr(a) for a in args) + "]"
    if origin in (types.UnionType, typing.Union):
        return " | ".join("None" if a is type(None) else _type(a, bounded) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = f"tuple[{_type(args[0], bounded)}, ...]"
            if bounded:
                return f"Annotated[{inner}, Field(max_length={MAX_ITEMS})]"
            return inner
        return "tuple[" + ", ".join(_type(a, bounded) for a in args) + "]"
    raise TypeError(f"no contract type for rules field type {hint!r}")


def _export_order(name: str) -> tuple[int, str]:
    """The order ruff keeps `__all__` in: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2), name


def _docstring(text: str) -> list[str]:
    if len(text) + 10 <= 100:
        return [f'    """{text}"""']
    wrapped = textwrap.wrap(text, width=92)
    return [f'    """{wrapped[0]}', *(f"    {line}" for line in wrapped[1:]), '    """']


def _model(name: str, kind: str, cls: type[Any], base: str, *, command: bool) -> list[str]:
    doc = (cls.__doc__ or "").strip()
    if doc.startswith(f"{cls.__name__}("):
        doc = ""  # NamedTuple's generated docstring says nothing
    lines = [f"class {name}({base}):"]
    if doc:
        lines.extend(_docstring(" ".join(doc.split())))
        lines.append("")
    lines.append(f'    type: Literal["{kind}"] = "{kind}"')
    for field, hint, has_default, default in _fields(cls):
        annotation = _type(hint, bounded=command)
        if command and field == "seat":
            # On the wire the seat may be left out: the table fills in the sender's seat.
            lines.append(f"    seat: {annotation} | None = None")
            lines.append('    """The acting seat; when absent, the sender\'s own seat."""')
        elif has_default:
            value = tuple(default) if isinstance(default, tuple) else default
            if isinstance(value, enum.Enum):
                value = value.value
            lines.append(f"    {field}: {annotation} = {value!r}")
        else:
            lines.append(f"    {field}: {annotation}")
    return lines


HEADER = '''"""Typed models of every rules command and event: GENERATED, do not edit.

Written by `python -m opolyx_contracts.generate_game` from the rules library's command and
event classes (`opolyx_rules.commands`, `opolyx_rules.events`); `tests/test_game.py` fails
when this file differs from what the generator writes. The JSON form is the rules' own:
`{"type": "roll", "seat": 0}`. `type` discriminates the unions `GameCommand` and
`GameEvent`. Commands refuse unknown fields and non-strict scalars (an error names the
field); events tolerate unknown fields (a newer writer within one contract version).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, Strict, TypeAdapter
from typing_extensions import TypedDict

__all__ = [
{names}
]

SInt = Annotated[int, Strict()]
SStr = Annotated[str, Strict()]
SBool = Annotated[bool, Strict()]
SFloat = Annotated[float, Strict()]
BoundedText = Annotated[str, Strict(), Field(max_length={max_text})]


class CommandModel(BaseModel):
    """A seat's command (or the table's timeout) as sent to a table."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class EventModel(BaseModel):
    """Something that happened in a game, as the rules report it."""

    model_config = ConfigDict(frozen=True, extra="ignore")
'''


FOOTER = '''
_COMMANDS: TypeAdapter[GameCommand] = TypeAdapter(GameCommand)
_EVENTS: TypeAdapter[GameEvent] = TypeAdapter(GameEvent)


def parse_command(data: dict[str, Any] | str | bytes) -> GameCommand:
    """A command from its JSON form (object, or JSON text); raises `ValidationError`."""
    if isinstance(data, dict):
        return _COMMANDS.validate_python(data)
    return _COMMANDS.validate_json(data)


def parse_event(data: dict[str, Any] | str | bytes) -> GameEvent:
    """An event from its JSON form (object, or JSON text); raises `ValidationError`."""
    if isinstance(data, dict):
        return _EVENTS.validate_python(data)
    return _EVENTS.validate_json(data)
'''


def _typed_dict(name: str, cls: type[Any], doc: str) -> list[str]:
    lines = [f"class {name}(TypedDict):", f'    """{doc}"""', ""]
    for field, hint, _, _ in _fields(cls):
        lines.append(f"    {field}: {_type(hint, bounded=False)}")
    return lines


def render() -> str:
    """The text of game.py for the installed rules library."""
    from opolyx_rules import state
    from opolyx_rules.commands import COMMAND_TYPES
    from opolyx_rules.events import EVENT_TYPES

    command_names = {kind: cls.__name__ for kind, cls in COMMAND_TYPES.items()}
    event_names = {
        kind: RENAMED.get(cls.__name__, cls.__name__) for kind, cls in EVENT_TYPES.items()
    }
    models = {*command_names.values(), *event_names.values()}
    if len(models) != len(command_names) + len(event_names):
        raise ValueError("a command and an event share a class name")
    fixed = {"COMMAND_MODELS", "EVENT_MODELS", "CommandModel", "EventModel", "GameCommand"}
    fixed |= {"GameEvent", "SeatView", "SquareView", "parse_command", "parse_event"}
    names = sorted(models | fixed, key=_export_order)
    blocks = [
        HEADER.replace("{names}", "\n".join(f'    "{n}",' for n in names))
        .replace("{max_text}", str(MAX_TEXT))
        .rstrip("\n")
    ]
    blocks.append("# --- commands " + "-" * 74)
    for kind, cls in COMMAND_TYPES.items():
        blocks.append(
            "\n".join(_model(command_names[kind], kind, cls, "CommandModel", command=True))
        )
    blocks.append("# --- events " + "-" * 76)
    for kind, cls in EVENT_TYPES.items():
        blocks.append("\n".join(_model(event_names[kind], kind, cls, "EventModel", command=False)))
    blocks.append("# --- the public view's seats and squares " + "-" * 47)
    blocks.append(
        "\n".join(_typed_dict("SeatView", state.SeatState, "One seat in the public view."))
    )
    blocks.append(
        "\n".join(_typed_dict("SquareView", state.PropState, "One property in the public view."))
    )
    blocks.append(
        "GameCommand: TypeAlias = Annotated[\n    "
        + "\n    | ".join(command_names.values())
        + ',\n    Field(discriminator="type"),\n]\n'
        + "GameEvent: TypeAlias = Annotated[\n    "
        + "\n    | ".join(event_names.values())
        + ',\n    Field(discriminator="type"),\n]\n\n'
        + "COMMAND_MODELS: dict[str, type[CommandModel]] = {\n"
        + "".join(f'    "{kind}": {name},\n' for kind, name in command_names.items())
        + "}\n"
        + '"""Command model by JSON `type`."""\n'
        + "EVENT_MODELS: dict[str, type[EventModel]] = {\n"
        + "".join(f'    "{kind}": {name},\n' for kind, name in event_names.items())
        + "}\n"
        + '"""Event model by JSON `type`."""'
    )
    blocks.append(FOOTER.strip("\n"))
    return "\n\n\n".join(blocks) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="write opolyx_contracts/game.py")
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args()
    text = render()
    current = GAME_MODULE.read_text() if GAME_MODULE.exists() else ""
    if args.check:
        if current != text:
            print(f"{GAME_MODULE} is out of date: run python -m opolyx_contracts.generate_game")
            sys.exit(1)
        return
    GAME_MODULE.write_text(text)
    print(f"wrote {GAME_MODULE}")


if __name__ == "__main__":
    main()
