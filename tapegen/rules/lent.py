"""Transforms the api layer lends to the rules below it.

A rule that differentiates a user's own function (the dynamics `func` of
`scipy.integrate.odeint`, inside its adjoint solve) needs tapegen's `vjp` and
`jvp`, which live two layers up. The api layer hands them down at import
(`provide`, called by api_transforms.py); rules call `vjp` and `jvp` here.
"""
_LENT: dict = {}


def provide(vjp, jvp):
    """Called once by the api layer: `vjp(f, *args, wrt)` and `jvp(f, primals, tangents)`. Code calling the
    ones here is differentiated as if it called those (the composed transforms inlined, rules/recursion.py)."""
    _LENT.update(vjp=vjp, jvp=jvp)
    for own, given in ((globals()["vjp"], vjp), (globals()["jvp"], jvp)):
        own.__tapegen_compose__ = given.__tapegen_compose__


def vjp(f, *args, wrt):
    """tapegen.vjp: `(f(*args), pullback)`."""
    return _LENT["vjp"](f, *args, wrt=wrt)


def jvp(f, primals, tangents):
    """tapegen.jvp: `(f(*primals), tangent)`."""
    return _LENT["jvp"](f, primals, tangents)
