"""What the properties say about whole groups, derived once per ``State.props`` value.

Rent (R6) and the simple policy's building ask the same questions on most commands: does
the owner of this square hold its whole group, how many of its group does it hold, has
the group buildings? The answers depend on ``State.props`` alone, which changes only when
a property is bought, built on, mortgaged or changes hands (about one command in fifty of
a simulated game), and which is a tuple replaced whole on every change, never mutated. So
they are derived for all groups at once and kept for the last ``props`` value seen.
"""

from __future__ import annotations

from typing import NamedTuple

from .board import BOARD_SIZE, GROUP_SQUARES, PROPERTY_SLOT, SQUARES, STREET_GROUPS
from .state import PropState

Props = tuple[PropState, ...]

#: the groups, street groups first (in ``STREET_GROUPS`` order), then dealer and utility
GROUPS: tuple[str, ...] = (*STREET_GROUPS, "dealer", "utility")
#: per board square: the index in ``GROUPS`` of its group (-1 for squares of no group)
GROUP_INDEX: tuple[int, ...] = tuple(
    GROUPS.index(SQUARES[sq].group) if SQUARES[sq].group else -1 for sq in range(BOARD_SIZE)
)
#: per group: the slots in ``State.props`` of its squares
_SLOTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(PROPERTY_SLOT[sq] for sq in GROUP_SQUARES[group]) for group in GROUPS
)


class Holdings(NamedTuple):
    #: per group (``GROUPS`` order): the owner of each of its squares, in board order
    owners: tuple[tuple[int | None, ...], ...]
    #: per group: the seat holding it whole, else None
    holder: tuple[int | None, ...]
    #: per group: whether a street of it has buildings
    built: tuple[bool, ...]


def _derive(props: Props) -> Holdings:
    owners = []
    holder = []
    built = []
    for slots in _SLOTS:
        # Plain loops: generator expressions cost several times more for 2-4 squares.
        group = []
        has_buildings = False
        for slot in slots:
            p = props[slot]
            group.append(p.owner)
            if p.buildings:
                has_buildings = True
        first = group[0]
        whole = first is not None and group.count(first) == len(group)
        owners.append(tuple(group))
        holder.append(first if whole else None)
        built.append(has_buildings)
    return Holdings(tuple(owners), tuple(holder), tuple(built))


#: the last ``props`` value asked about and its holdings. The entry keeps that tuple alive,
#: so an identity match cannot be a new tuple at a reused address; one tuple, replaced
#: whole, so concurrent callers can only miss, never see a mixed entry. One entry: a game
#: asks about the same ``props`` for many commands in a row (a service interleaving many
#: games misses more often, and a miss costs one derivation, a few microseconds).
_LAST: list[tuple[Props, Holdings]] = [((), Holdings((), (), ()))]


def holdings(props: Props) -> Holdings:
    """The whole-group facts of ``props`` (the ``props`` of a state)."""
    last = _LAST[0]
    if last[0] is props:
        return last[1]
    derived = _derive(props)
    _LAST[0] = (props, derived)
    return derived
