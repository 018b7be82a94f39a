"""Every name tapegen writes into generated code is chosen here.

User names survive (`h`); re-assignments become `h_1`, `h_2`; temporaries are
`t1, t2, ...` in program order; cotangents are `g_<name>`, tangents
`<name>_dot`, saved shapes `<name>_shape`. Names never collide with any
identifier in the user's function nor with names generated code imports
(`np`, runtime helpers): a user local called `np` becomes `np_`.
Deterministic: the same function always gets the same names.
"""
from __future__ import annotations

from ..ir import Var

# Locals every generated function may use besides the names it imports. `_` takes the outputs a backward
# statement drops (`_, g_v = einsum_vjp(...)`): a user's own `_` (`_, v = np.linalg.eigh(a)`) is renamed, or a
# later rule reading it would read that dropped cotangent instead.
GENERATED_LOCALS = frozenset({"tape", "residuals", "cotangents", "value", "SPANS", "GENERIC", "GUARD_DTYPES",
                              "ndarray", "record", "_"})


def reserved_names(generated_locals: bool = True) -> "Reserved":
    """Names a user's variable may not keep in generated code (it is renamed: `np` -> `np_`)."""
    return Reserved(GENERATED_LOCALS if generated_locals else ())


class Reserved:
    """The names generated code imports (rules.namespace()) and `extra`, answered one name at a time
    (rules.lookup_name): deciding them all reads every rule's source, most of a first transform's time."""

    def __init__(self, extra=()):
        from .. import rules
        self.extra = frozenset(extra)
        self._lookup, self._missing = rules.lookup_name, rules.MISSING

    def __contains__(self, name) -> bool:
        return name in self.extra or self._lookup(name) is not self._missing


class Namer:
    """Hands out fresh, readable, collision-free variable names for one program.

    `identifiers` are the names in the user's source: a user variable keeps its
    own name, but nothing tapegen invents (temporaries, cotangents, `h_1`) may
    be one of them.
    """

    def __init__(self, identifiers=(), reserved=(), assigned=()):
        self.identifiers = frozenset(identifiers)
        self.reserved = reserved if isinstance(reserved, Reserved) else frozenset(reserved)
        self.assigned = set(assigned)
        self.next_temp = 1
        self.next_suffix: dict = {}  # base -> a suffix below which every `base_<i>` is taken (names only grow)

    def user(self, name: str) -> Var:
        """A var for a user's variable `name`: the name itself the first time, then `name_1`, ..."""
        base = f"{name}_" if name in self.reserved else name
        if base not in self.assigned and (base == name or base not in self.identifiers):
            self.assigned.add(base)
            return Var(base)
        return self._suffixed(base)

    def temp(self) -> Var:
        while True:
            name = f"t{self.next_temp}"
            self.next_temp += 1
            if self._free(name):
                self.assigned.add(name)
                return Var(name)

    def cotangent(self, var: Var) -> Var:
        return self.invented(f"g_{var.name}")

    def tangent(self, var: Var) -> Var:
        return self.invented(f"{var.name}_dot")

    def derived(self, var: Var, suffix: str) -> Var:
        return self.invented(f"{var.name}_{suffix}")

    def snapshot(self):
        return set(self.assigned), self.next_temp, dict(self.next_suffix)

    def restore(self, snapshot) -> None:
        assigned, self.next_temp, next_suffix = snapshot
        self.assigned = set(assigned)
        self.next_suffix = dict(next_suffix)

    def _free(self, name: str) -> bool:
        return name not in self.assigned and name not in self.identifiers and name not in self.reserved

    def invented(self, base: str) -> Var:
        if self._free(base):
            self.assigned.add(base)
            return Var(base)
        return self._suffixed(base)

    def _suffixed(self, base: str) -> Var:
        i = self.next_suffix.get(base, 1)  # not 1 each time: `h` reassigned n times would cost n^2
        while not self._free(f"{base}_{i}"):
            i += 1
        self.next_suffix[base] = i + 1
        self.assigned.add(f"{base}_{i}")
        return Var(f"{base}_{i}")


def namer_for(program, reserved) -> Namer:
    """A namer that avoids every name `program` already uses."""
    from ..ir import assigned as assigned_vars
    assigned = {p.name for p in program.params} | {v.name for v in program.free}
    assigned.update(v.name for v in assigned_vars(program.body))
    namer = Namer(program.identifiers, reserved, assigned)
    temps = [int(n[1:]) for n in assigned if n[:1] == "t" and n[1:].isdigit()]
    namer.next_temp = max(temps, default=0) + 1
    return namer
