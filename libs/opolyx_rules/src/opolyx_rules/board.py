"""The board of RULES.md R1 as data: 40 squares, 28 properties in 10 groups.

Names are cosmetic; positions, groups and numbers are the rules. Nothing here changes
between modes (R2: same board everywhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

BOARD_SIZE = 40
START = 0
JAIL = 10
JACKPOT = 20
GO_TO_JAIL = 30


class SquareKind(StrEnum):
    START = "start"
    STREET = "street"
    DEALERSHIP = "dealership"
    UTILITY = "utility"
    EVENT = "event"
    TAX = "tax"
    JAIL = "jail"
    JACKPOT = "jackpot"
    GO_TO_JAIL = "go_to_jail"


PROPERTY_KINDS = frozenset({SquareKind.STREET, SquareKind.DEALERSHIP, SquareKind.UTILITY})


@dataclass(frozen=True, slots=True)
class Square:
    index: int
    kind: SquareKind
    name: str
    group: str = ""
    price: int = 0
    #: rent with 0..5 buildings (streets only)
    rents: tuple[int, ...] = ()
    building_cost: int = 0
    #: amount owed to the bank (tax squares only)
    tax: int = 0

    @property
    def is_property(self) -> bool:
        return self.kind in PROPERTY_KINDS

    @property
    def mortgage_value(self) -> int:
        return self.price // 2


def _street(i: int, name: str, group: str, price: int, rents: tuple[int, ...], cost: int) -> Square:
    return Square(i, SquareKind.STREET, name, group, price, rents, cost)


def _corner(i: int, kind: SquareKind, name: str) -> Square:
    return Square(i, kind, name)


def _event(i: int) -> Square:
    return Square(i, SquareKind.EVENT, "Event")


def _dealer(i: int, name: str) -> Square:
    return Square(i, SquareKind.DEALERSHIP, name, "dealer", 2000)


def _utility(i: int, name: str) -> Square:
    return Square(i, SquareKind.UTILITY, name, "utility", 1500)


SQUARES: tuple[Square, ...] = (
    _corner(0, SquareKind.START, "Start"),
    _street(1, "Brambleway", "brown", 600, (20, 100, 300, 900, 1600, 2500), 500),
    _event(2),
    _street(3, "Mudlark Lane", "brown", 600, (40, 200, 600, 1800, 3200, 4500), 500),
    Square(4, SquareKind.TAX, "Income tax", tax=2000),
    _dealer(5, "Velora Motors"),
    _street(6, "Skyglass Row", "light-blue", 1000, (60, 300, 900, 2700, 4000, 5500), 500),
    _event(7),
    _street(8, "Harbourlight", "light-blue", 1000, (60, 300, 900, 2700, 4000, 5500), 500),
    _street(9, "Azure Court", "light-blue", 1200, (80, 400, 1000, 3000, 4500, 6000), 500),
    _corner(10, SquareKind.JAIL, "Jail / Just visiting"),
    _street(11, "Rosetta Plaza", "pink", 1400, (100, 500, 1500, 4500, 6250, 7500), 1000),
    _utility(12, "Voltaic Power"),
    _street(13, "Petalworks", "pink", 1400, (100, 500, 1500, 4500, 6250, 7500), 1000),
    _street(14, "Blushmark", "pink", 1600, (120, 600, 1800, 5000, 7000, 9000), 1000),
    _dealer(15, "Kestrel Autos"),
    _street(16, "Ember Market", "orange", 1800, (140, 700, 2000, 5500, 7500, 9500), 1000),
    _event(17),
    _street(18, "Tangerine Yard", "orange", 1800, (140, 700, 2000, 5500, 7500, 9500), 1000),
    _street(19, "Copperfield", "orange", 2000, (160, 800, 2200, 6000, 8000, 10000), 1000),
    _corner(20, SquareKind.JACKPOT, "Jackpot"),
    _street(21, "Cinnabar Works", "red", 2200, (180, 900, 2500, 7000, 8750, 10500), 1500),
    _event(22),
    _street(23, "Redwing Hall", "red", 2200, (180, 900, 2500, 7000, 8750, 10500), 1500),
    _street(24, "Scarlet Tower", "red", 2400, (200, 1000, 3000, 7500, 9250, 11000), 1500),
    _dealer(25, "Orbis Cars"),
    _street(26, "Sunmeadow", "yellow", 2600, (220, 1100, 3300, 8000, 9750, 11500), 1500),
    _street(27, "Goldleaf Arcade", "yellow", 2600, (220, 1100, 3300, 8000, 9750, 11500), 1500),
    _utility(28, "Aquaflow Water"),
    _street(29, "Saffron Heights", "yellow", 2800, (240, 1200, 3600, 8500, 10250, 12000), 1500),
    _corner(30, SquareKind.GO_TO_JAIL, "Go to jail"),
    _street(31, "Verdant Park", "green", 3000, (260, 1300, 3900, 9000, 11000, 12750), 2000),
    _street(32, "Fernhollow", "green", 3000, (260, 1300, 3900, 9000, 11000, 12750), 2000),
    _event(33),
    _street(34, "Jade Exchange", "green", 3200, (280, 1500, 4500, 10000, 12000, 14000), 2000),
    _dealer(35, "Meridian Auto"),
    _event(36),
    _street(37, "Sapphire Quay", "dark-blue", 3500, (350, 1750, 5000, 11000, 13000, 15000), 2000),
    Square(38, SquareKind.TAX, "Luxury tax", tax=1000),
    _street(39, "Midnight Crown", "dark-blue", 4000, (500, 2000, 6000, 14000, 17000, 20000), 2000),
)

#: Board indices of the 28 properties, in board order. A property's position in this
#: tuple is its index in ``State.props``.
PROPERTY_SQUARES: tuple[int, ...] = tuple(s.index for s in SQUARES if s.is_property)
#: square index -> index into ``State.props`` (absent for non-properties)
PROPERTY_SLOT: dict[int, int] = {sq: i for i, sq in enumerate(PROPERTY_SQUARES)}

STREET_GROUPS: tuple[str, ...] = (
    "brown",
    "light-blue",
    "pink",
    "orange",
    "red",
    "yellow",
    "green",
    "dark-blue",
)
#: group name -> the board indices of its properties
GROUP_SQUARES: dict[str, tuple[int, ...]] = {
    g: tuple(s.index for s in SQUARES if s.group == g)
    for g in (*STREET_GROUPS, "dealer", "utility")
}
#: per board square: the slots in ``State.props`` of its group (empty for non-properties)
GROUP_SLOTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(PROPERTY_SLOT[q] for q in GROUP_SQUARES[sq.group]) if sq.group else () for sq in SQUARES
)
IS_STREET: tuple[bool, ...] = tuple(sq.kind is SquareKind.STREET for sq in SQUARES)
IS_PROPERTY: tuple[bool, ...] = tuple(sq.is_property for sq in SQUARES)
DEALERSHIPS = GROUP_SQUARES["dealer"]
UTILITIES = GROUP_SQUARES["utility"]

#: Dealership rent by number held (R6)
DEALERSHIP_RENT = (0, 250, 500, 1000, 2000)
#: Utility rent multiplier of the white dice total, by number held (R6)
UTILITY_MULTIPLIER = (0, 40, 100)
MAX_BUILDINGS = 5


def square(index: int) -> Square:
    return SQUARES[index]


def is_property(index: int) -> bool:
    return index in PROPERTY_SLOT


def distance(frm: int, to: int) -> int:
    """Squares moved forward (clockwise) from ``frm`` to ``to``; 0 when equal."""
    return (to - frm) % BOARD_SIZE


def nearest_ahead(frm: int, targets: tuple[int, ...]) -> int:
    """The first square of ``targets`` strictly ahead of ``frm`` (wrapping)."""
    return min(targets, key=lambda t: distance(frm, t) or BOARD_SIZE)


#: Fortuna's board of fictional Chinese-style brand names (R1: names are cosmetic; the
#: positions, groups and numbers are those of ``SQUARES``).
FORTUNA_NAMES: dict[int, str] = {
    1: "Jinlong Tea House",
    3: "Baihe Noodles",
    5: "Feiyue Motors",
    6: "Qingshan Silk",
    8: "Lanting Pearls",
    9: "Yunhai Porcelain",
    11: "Hongmei Jade",
    12: "Tianguang Power",
    13: "Fenghua Fans",
    14: "Mudan Cosmetics",
    15: "Longma Autos",
    16: "Jinqiu Lanterns",
    18: "Huolong Hotpot",
    19: "Chengxin Bank",
    21: "Hongyun Trading",
    23: "Dahong Opera",
    24: "Zhuque Tower",
    25: "Xingchen Cars",
    26: "Huangjin Market",
    27: "Jinxiu Arcade",
    28: "Qingquan Water",
    29: "Taiyang Heights",
    31: "Songlin Garden",
    32: "Zhuyun Teas",
    34: "Feicui Exchange",
    35: "Tianma Auto",
    37: "Lanbao Harbour",
    39: "Zijin Palace",
}


def square_name(index: int, *, fortuna: bool = False) -> str:
    """The display name of a square on the standard board or on Fortuna's."""
    if fortuna and index in FORTUNA_NAMES:
        return FORTUNA_NAMES[index]
    return SQUARES[index].name


def board_data(*, fortuna: bool = False) -> list[dict[str, object]]:
    """The board as plain data for clients: one entry per square, in board order
    (numbers are 0 and ``rents`` empty where a square has none)."""
    return [
        {
            "square": sq.index,
            "kind": str(sq.kind),
            "name": square_name(sq.index, fortuna=fortuna),
            "group": sq.group or None,
            "price": sq.price,
            "rents": list(sq.rents),
            "building_cost": sq.building_cost,
            "tax": sq.tax,
        }
        for sq in SQUARES
    ]
