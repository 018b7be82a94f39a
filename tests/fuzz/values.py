"""The generator's values: variables and expressions with their shapes and bounds, and the texts they print as.

Shared by generator.py (the `Builder`) and idioms.py (the Python idioms it writes).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

THRESHOLDS = ("0.13", "-0.31", "0.47", "-0.62", "0.79", "0.05", "-0.08", "1.1")
CONSTANTS = ("0.5", "2.0", "1.5", "0.3", "-0.7", "1.25", "3.0")


@dataclass(frozen=True)
class Var:
    name: str
    shape: tuple
    bound: float
    fresh: bool = False  # owns its data (no view or alias of it exists), so `v += e` may write in place

    @property
    def ndim(self):
        return len(self.shape)


@dataclass(frozen=True)
class Expr:
    plain: str
    probe: str
    shape: tuple
    bound: float
    atom: bool = True                 # needs no parentheses as an operand
    views: frozenset = frozenset()    # variables whose data this value may share

    @property
    def ndim(self):
        return len(self.shape)


class _Part:
    def __init__(self, text, atom):
        self.text, self.atom = text, atom

    def __format__(self, spec):
        return self.text if spec == "x" or self.atom else f"({self.text})"


def ref(var: Var) -> Expr:
    return Expr(var.name, var.name, var.shape, var.bound, True, frozenset({var.name}))


def const(text: str) -> Expr:
    return Expr(text, text, (), abs(float(text)), not text.startswith("-"))


def broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _a_view(e):
    """`e`, which may be a view even of a temporary (`np.split(np.sin(v), 2)[0]`): tapegen refuses `+=` on a
    view, so the variable it is assigned to must not count as owning its data."""
    return None if e is None else replace(e, views=e.views | {"<a view>"})


def _sequence(items, brackets):
    """A list (`"[]"`) or tuple (`"()"`) literal of the item texts; a 1-tuple keeps its comma."""
    if brackets == "()" and len(items) == 1:
        return f"({items[0]},)"
    return brackets[0] + ", ".join(items) + brackets[1]
