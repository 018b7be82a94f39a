"""scipy.integrate.odeint: derivatives in the initial state, the time points and `args=`, by the adjoint method.

y(t_0) = y0, dy/dt = func(y, t, *args). Reverse mode solves the adjoint system
backwards from the last time point to the first (Chen et al., Neural ODEs;
autograd's odeint), one call of odeint on the augmented state
[y, a, a_t, a_args]:

    dy/dt = func(y, t, *args),  da/dt = -a^T df/dy,  da_t/dt = -a^T df/dt,  da_args/dt = -a^T df/dargs,

adding each time point's cotangent to a on the way. The vector-Jacobian
products of `func` come from tapegen's own transform of it (`tapegen.vjp`,
lent by the api layer through rules/lent.py), not from differentiating the
solver's steps. Forward mode integrates the tangent ODE dv/dt = df/dy v +
df/dargs args_dot alongside y (`tapegen.jvp` of `func`). The backward solve
uses the forward call's rtol, atol, mxstep and hmax: set them tight to get
tight derivatives.

An item of `args` may be a pytree (a list, tuple or dict of arrays, like
autograd's ode_net `args=(params,)` with params a list of (W, b)): each float
leaf gets its derivative; strings and ints in it get none.

`func` must be a function tapegen can read: a module-level def or lambda, a
closure, or a def or lambda of the differentiated function, whose values it
reads are then passed to it after `args` (frontend/inline.py's
`lifted_callables`). A differentiated value must reach it through `args`, or
so: a bound method of an object holding one is refused (activity.py, the
primitive's `callables`), never a zero gradient.

Second derivatives (a hessian, a jvp of a gradient, a gradient of a jvp, and
beyond): gradient code differentiated again reads the derivative solves as
odeint calls of augmented dynamics (`adjoint_dynamics`, `tangent_dynamics`:
a vjp or jvp of `func`), which odeint's own rules differentiate in turn
(`Solve`). solve_ivp's are the same solves through t_eval. Integers in `args`
are refused there (`without_integers`).
"""
import numpy as np
import scipy
import scipy.integrate

from ..errors import TapegenError
from ..runtime import Cotree, _pytree_like, pytree_fields
from .language import item_cotangent
from . import lent
from .formulas import Formulas
from .table import RuleTable

table = RuleTable("scipy.integrate")
ODEINT = scipy.integrate.odeint
_SOLVER = ("rtol", "atol", "mxstep", "hmax")
table.op(ODEINT, "func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None, "
                 "atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, "
                 "mxords=5, printmessg=0, tfirst=False", spelling="scipy.integrate.odeint", sequences=("args",),
         callables=("func", "Dfun"),
         inert=("col_deriv", "full_output", "ml", "mu", "rtol", "atol", "tcrit", "h0", "hmax",
                "hmin", "ixpr", "mxstep", "mxhnil", "mxordn", "mxords", "printmessg", "tfirst"))


class Dynamics:
    """`func` at (y, t, args), with its derivatives in y, t and every float leaf of args, from tapegen.

    An item of args may be a pytree (a list, tuple or dict of arrays, as in `args=(params,)` with params a
    list of (W, b) layers): its float arrays and numbers are the leaves that carry derivatives, flattened
    into one vector for the adjoint solve, in the order `_leaves` walks them.
    """

    def __init__(self, func, y0, args, tfirst, full_output):
        if full_output or np.ndim(y0) != 1:
            raise TapegenError("tapegen differentiates scipy.integrate.odeint of a 1-D initial state with "
                               "full_output=0", hint="ravel y0 (and reshape inside func); drop full_output")
        self.func, self.tfirst, self.size = func, tfirst, np.size(y0)
        self.args = tuple(args)
        self.moving = [i for i, a in enumerate(self.args) if _leaves(a)]  # the args that can carry derivatives
        self.shapes = [np.shape(leaf) for i in self.moving for leaf in _leaves(self.args[i])]
        y_at, t_at = (1, 0) if tfirst else (0, 1)
        self.wrt = (y_at, t_at) + tuple(2 + i for i in self.moving)

    def call_args(self, y, t, moving=None):
        args = list(self.args)
        if moving is not None:
            pieces = iter(self.unflatten(moving))
            for i in self.moving:
                args[i] = _with_leaves(self.args[i], pieces)
        return ((float(t), y) if self.tfirst else (y, float(t))) + tuple(args)

    def __call__(self, y, t):
        return np.asarray(self.func(*self.call_args(y, t)))

    def flat_args(self):
        return self.flatten([leaf for i in self.moving for leaf in _leaves(self.args[i])])

    def flatten(self, values):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values] + [np.zeros(0)])

    def unflatten(self, flat):
        out, start = [], 0
        for shape in self.shapes:
            size = int(np.prod(shape))
            piece = flat[start:start + size].reshape(shape)
            out.append(piece if shape else float(piece))
            start += size
        return out

    def moving_leaves(self, parts):
        """The float leaves of derivatives (cotangents or tangents) of the moving args, zeros where None."""
        return [leaf for i, part in zip(self.moving, parts) for leaf in _paired_leaves(self.args[i], part)]

    def cotangents(self, flat):
        """args' cotangents from the flat vector: a tree like each moving arg, None where no float leaf is."""
        pieces = iter(self.unflatten(flat))
        return [_with_leaves(a, pieces, other=None) if i in self.moving else None for i, a in enumerate(self.args)]

    def adjoint_step(self, state, t, flat_args):
        """d/dt of [y, a, a_t, a_args]: the augmented system, solved backwards in time."""
        n = self.size
        y, a = state[:n], state[n:2 * n]
        dy, pullback = lent.vjp(self.func, *self.call_args(y, t, flat_args), wrt=self.wrt)
        parts = pullback(-a)  # in the order of self.wrt: y, t, the moving args
        g_y, g_t = parts[0], parts[1]
        return np.concatenate([np.ravel(dy), np.ravel(g_y), [0.0 if g_t is None else float(g_t)],
                               self.flatten(self.moving_leaves(parts[2:]))])

    def tangent_step(self, state, t, args_dot):
        """d/dt of [y, v]: y's ODE and its tangent's, dv/dt = df/dy v + df/dargs args_dot."""
        n = self.size
        tangents = [None] * len(self.args)
        if args_dot is not None:
            for i in self.moving:
                tangents[i] = _with_leaves(self.args[i], iter(_paired_leaves(self.args[i], args_dot[i])), None)
        primals = self.call_args(state[:n], t)
        tangents = ((0.0, state[n:]) if self.tfirst else (state[n:], 0.0)) + tuple(tangents)
        dy, dv = lent.jvp(self.func, primals, tangents)
        return np.concatenate([np.ravel(dy), np.ravel(dv)])


def _is_float(value):
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind in "fc")


def _branches(x):
    """(key, item) pairs of a pytree node (namedtuple, dataclass, registered class, dict, list, tuple), or None."""
    fields = pytree_fields(x)
    if fields is not None:
        return list(fields.items())
    if isinstance(x, dict):
        return list(x.items())
    if isinstance(x, (list, tuple)):
        return list(enumerate(x))
    return None


def _leaves(x):
    """The float arrays and numbers in `x`, a value or a pytree of them, in a fixed order."""
    if _is_float(x):
        return [x]
    return [leaf for _, item in _branches(x) or () for leaf in _leaves(item)]


def _part(g, key):
    """The item `key` of a derivative tree `g` (a list, tuple, dict, Cotree or pytree object), or None."""
    if g is None:
        return None
    if isinstance(g, dict):
        return g.get(key)
    if isinstance(g, (list, tuple)) and pytree_fields(g) is None:
        return g[key] if key < len(g) else None
    return getattr(g, key, None) if isinstance(key, str) else g[key]


def _paired_leaves(x, g):
    """The leaves of `g`, a derivative of `x` (or None), where `x` has float leaves: zeros where g has none."""
    if _is_float(x):
        return [np.zeros(np.shape(x)) if g is None else g]
    return [leaf for key, item in _branches(x) or () for leaf in _paired_leaves(item, _part(g, key))]


_KEEP = object()


def _with_leaves(x, leaves, other=_KEEP):
    """`x` with its float leaves taken in order from the iterator `leaves`; other leaves kept, or set to `other`."""
    if _is_float(x):
        return next(leaves)
    branches = _branches(x)
    if branches is None:
        return x if other is _KEEP else other
    values = {key: _with_leaves(item, leaves, other) for key, item in branches}
    if pytree_fields(x) is not None:
        return _pytree_like(x, values)
    if isinstance(x, dict):
        return type(x)(values)
    return type(x)(values.values())


def _solver(rtol, atol, mxstep, hmax):
    return {name: value for name, value in zip(_SOLVER, (rtol, atol, mxstep, hmax)) if value not in (None, 0, 0.0)}


_LAST: list = []  # the last backward solve, reused while its output and cotangent are the ones asked about


def _once(y, g, solve):
    """solve(), or its result for this very (output, cotangent): one backward solve serves every VJP rule."""
    if not (_LAST and _LAST[0] is y and _LAST[1] is g):
        _LAST[:] = [y, g, solve()]
    return _LAST[2]


def odeint_adjoint_fast(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, y, g):
    """(y0's cotangent, t's, args' list), by one backward solve of the adjoint system."""
    return _once(y, g, lambda: _adjoint(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, y, g))


def _adjoint(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, y, g):
    dynamics = Dynamics(func, y0, args, tfirst, full_output)
    n, flat_args, g = dynamics.size, dynamics.flat_args(), np.asarray(g)
    a, a_t, a_args = g[-1].copy(), 0.0, np.zeros_like(flat_args)
    g_times = np.zeros(len(t))
    for i in range(len(t) - 1, 0, -1):
        g_times[i] = np.dot(dynamics(y[i], t[i]), g[i])
        a_t = a_t - g_times[i]
        state = np.concatenate([y[i], a, [a_t], a_args])
        state = ODEINT(dynamics.adjoint_step, state, np.array([t[i], t[i - 1]]), args=(flat_args,),
                       **_solver(rtol, atol, mxstep, hmax))[1]
        a, a_t, a_args = state[n:2 * n] + g[i - 1], state[2 * n], state[2 * n + 1:]
    g_times[0] = a_t
    return a, g_times, dynamics.cotangents(a_args)


_ODEINT_READS = ["func", "y0", "t", "args", "tfirst", "full_output", "rtol", "atol", "mxstep", "hmax", "y", "g"]
odeint_rules = Formulas(table, globals(), "<tapegen scipy.integrate.odeint adjoint rules>")
for _k, _wrt in enumerate(("y0", "t", "args")):  # one backward solve, read for each argument
    odeint_rules.rule(ODEINT, _wrt, "vjp", f"odeint_vjp_{_wrt}", _ODEINT_READS,
                      f"odeint_adjoint({', '.join(_ODEINT_READS)})[{_k}]")
odeint_rules.load()


def odeint_tangent_fast(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, v0, args_dot):
    """The tangent of odeint's output, started at v0 and driven by args_dot: the tangent ODE, solved with y."""
    dynamics = Dynamics(func, y0, args, tfirst, full_output)
    state = ODEINT(dynamics.tangent_step, np.concatenate([y0, v0]), t, args=(args_dot,),
                   **_solver(rtol, atol, mxstep, hmax))
    return state[:, dynamics.size:]


@table.jvp(ODEINT, "y0")
def odeint_jvp_y0(func, y0, y0_dot, t, args, full_output, rtol, atol, hmax, mxstep, tfirst):
    return odeint_tangent(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, y0_dot, None)


@table.jvp(ODEINT, "args")
def odeint_jvp_args(func, y0, t, args, args_dot, full_output, rtol, atol, hmax, mxstep, tfirst):
    return odeint_tangent(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, np.zeros_like(y0),
                          args_dot)


@table.jvp(ODEINT, "t")
def odeint_jvp_t(func, y0, t, t_dot, args, full_output, rtol, atol, hmax, mxstep, tfirst, y):
    """Moving t_0 shifts the start (v(t_0) = -f(y0, t_0) dt_0); moving t_i reads y further on (f(y_i, t_i) dt_i)."""
    v0 = -call_with(y0, t[0], args, func, tfirst) * t_dot[0]
    moved = odeint_tangent(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, v0, None)
    return moved + np.stack([call_with(y[i], t[i], args, func, tfirst) * t_dot[i] for i in range(len(t))])


# --- the derivative solves as code tapegen differentiates: second derivatives and beyond -----------------
#
# Gradient code calls odeint_adjoint and odeint_tangent, which solve with the Dynamics above. Differentiated
# again (a hessian, a gradient of a jvp, a jvp of a gradient), a call of either is the code below instead
# (`Solve.__tapegen_inline__`): the same solves written as calls of odeint on the augmented dynamics
# `adjoint_dynamics` and `tangent_dynamics`, module-level functions taking the user's `func` and `args`
# through odeint's `args`, which call tapegen's vjp or jvp of `func`. odeint's own rules above then
# differentiate those solves, tapegen differentiating the augmented dynamics (a vjp or jvp of `func`
# differentiated once more), so every order closes without an adjoint written by hand.

def call_with(y, s, args, func, tfirst):
    """`func` at state y and time s, with `args` after them, in its own argument order."""
    if tfirst:
        return func(s, y, *args)
    return func(y, s, *args)


def flat_leaves(args, tree):
    """`tree`'s items at the float leaves of `args` (zeros where it has none), in one vector."""
    return np.concatenate([np.ravel(np.asarray(leaf, dtype=float)) for leaf in _paired_leaves(args, tree)]
                          + [np.zeros(0)])


def leaves_like(args, flat):
    """A tree like `args` whose float leaves are cut from `flat` (None where args has no float leaf)."""
    pieces, start = [], 0
    for leaf in _leaves(args):
        size = int(np.size(leaf))
        piece = np.reshape(flat[start:start + size], np.shape(leaf))
        pieces.append(piece if np.ndim(leaf) else float(piece))
        start += size
    return _with_leaves(args, iter(pieces), other=None)


table.op(flat_leaves, "args, tree", spelling="flat_leaves", inert=("args",))
table.op(leaves_like, "args, flat", spelling="leaves_like", inert=("args",))


@table.vjp(flat_leaves, "tree")
def flat_leaves_vjp(args, g):
    return leaves_like(args, g)


@table.jvp(flat_leaves, "tree")
def flat_leaves_jvp(args, tree_dot):
    return flat_leaves(args, tree_dot)


@table.vjp(leaves_like, "flat")
def leaves_like_vjp(args, g):
    return flat_leaves(args, g)


@table.jvp(leaves_like, "flat")
def leaves_like_jvp(args, flat_dot):
    return leaves_like(args, flat_dot)


def without_integers(args):
    """Refuse an int or bool among `args` (a second derivative differentiates with respect to args as a whole,
    and an integer has no derivative there); None otherwise."""
    if any(isinstance(leaf, (bool, int, np.integer, np.bool_)) for leaf in _all_leaves(args)):
        raise TapegenError("tapegen differentiates scipy.integrate.odeint and solve_ivp twice (a hessian, a gradient "
                           "of a jvp) only with args= of floats, float arrays, strings and functions, not integers",
                           hint="pass the integer as a float, or bind it in func (functools.partial, a closure)")


def _all_leaves(x):
    branches = _branches(x)
    return [x] if branches is None else [leaf for _, item in branches for leaf in _all_leaves(item)]


table.nondiff(without_integers, "args", spelling="without_integers")


def adjoint_dynamics(state, s, func, tfirst, n, *args):
    """d/ds of [y, a, a_t, a_args] (Dynamics.adjoint_step), as code tapegen differentiates."""
    y, a = state[:n], state[n:2 * n]
    dy, pullback = lent.vjp(call_with, y, s, args, func, tfirst, wrt=(0, 1, 2))
    g_y, g_s, g_args = pullback(-a)
    return np.concatenate([dy, g_y, np.reshape(g_s, (1,)), flat_leaves(args, g_args)])


def tangent_dynamics(state, s, func, tfirst, n, *args):
    """d/ds of [y, v] (Dynamics.tangent_step) for a tangent of y0 only, as code tapegen differentiates."""
    y, v = state[:n], state[n:]
    dy, dv = lent.jvp(call_with, (y, s, args, func, tfirst), (v, None, None, None, None))
    return np.concatenate([dy, dv])


def args_tangent_dynamics(state, s, func, tfirst, n, args_dot, *args):
    """tangent_dynamics with tangents of args too."""
    y, v = state[:n], state[n:]
    dy, dv = lent.jvp(call_with, (y, s, args, func, tfirst), (v, None, args_dot, None, None))
    return np.concatenate([dy, dv])


def odeint_adjoint_code(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, y, g):
    """odeint_adjoint as odeint calls of adjoint_dynamics, one per interval, backwards."""
    without_integers(args)
    n = np.size(y0)
    a, a_t, a_args = g[-1], 0.0, flat_leaves(args, None)
    g_times = []
    for i in range(len(t) - 1, 0, -1):
        g_time = np.dot(call_with(y[i], t[i], args, func, tfirst), g[i])
        g_times.append(g_time)
        state = np.concatenate([y[i], a, np.reshape(a_t - g_time, (1,)), a_args])
        state = ODEINT(adjoint_dynamics, state, np.stack([t[i], t[i - 1]]), args=(func, tfirst, n, *args),
                       rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)[1]
        a, a_t, a_args = state[n:2 * n] + g[i - 1], state[2 * n], state[2 * n + 1:]
    g_times.append(a_t)
    return a, np.stack(g_times[::-1]), leaves_like(args, a_args)


def odeint_tangent_code(func, y0, t, args, tfirst, full_output, rtol, atol, mxstep, hmax, v0, args_dot):
    """odeint_tangent as one odeint call of tangent_dynamics."""
    without_integers(args)
    n = np.size(y0)
    if args_dot is None:
        state = ODEINT(tangent_dynamics, np.concatenate([y0, v0]), t, args=(func, tfirst, n, *args),
                       rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
    else:
        args_dot = leaves_like(args, flat_leaves(args, args_dot))  # zeros where an argument has no tangent
        state = ODEINT(args_tangent_dynamics, np.concatenate([y0, v0]), t, args=(func, tfirst, n, args_dot, *args),
                       rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
    return state[:, n:]


class Solve:
    """A derivative solve gradient code calls: `fast` (the Dynamics above) when it runs, and `code` (odeint
    calls of augmented dynamics) when gradient code is differentiated again."""

    def __init__(self, fast, code):
        self.fast, self.code, self.__name__ = fast, code, fast.__name__

    def __call__(self, *args):
        return self.fast(*args)

    def __tapegen_inline__(self):
        return self.code


odeint_adjoint = Solve(odeint_adjoint_fast, odeint_adjoint_code)
odeint_tangent = Solve(odeint_tangent_fast, odeint_tangent_code)


# --- solve_ivp: sol.y at t_eval, from t_span[0]; the same adjoint, with fun(t, y, *args) ------------------

SOLVE_IVP = scipy.integrate.solve_ivp
table.op(SOLVE_IVP, "fun, t_span, y0, method='RK45', t_eval=None, dense_output=False, events=None, "
                    "vectorized=False, args=None, *, rtol=0.001, atol=1e-06, max_step=None, first_step=None",
         spelling="scipy.integrate.solve_ivp", sequences=("args",),
         callables=("fun", "events"),
         inert=("method", "dense_output", "vectorized", "rtol", "atol", "max_step", "first_step"))


class OdeTangent(Cotree):
    """solve_ivp's output tangent (or cotangent): its fields `t` and `y`, read as attributes too."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __add__(self, other):
        return OdeTangent(Cotree.__add__(self, other))

    __radd__ = __add__


def ivp_times(t_span, t_eval, dense_output, events):
    """[t_span[0], *t_eval]: where the solution is read, after its start; refuses what has no derivative."""
    if t_eval is None or dense_output or events is not None:
        raise TapegenError("tapegen differentiates scipy.integrate.solve_ivp's sol.y at given times t_eval, "
                           "without events or dense output",
                           hint="pass t_eval=...; the solver's own time steps have no derivative")
    return np.concatenate([[float(t_span[0])], np.ravel(t_eval)])


def ivp_adjoint_fast(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, g):
    """(y0's cotangent, t_span's, t_eval's, args' list) from g, the cotangent of the result's fields."""
    def solve():
        times, g_y, g_t = ivp_times(t_span, t_eval, dense_output, events), g.get("y"), g.get("t")
        path = np.concatenate([np.asarray(y0, dtype=float)[None], y.y.T])
        g_path = np.concatenate([np.zeros((1, np.size(y0))), np.zeros_like(path[1:]) if g_y is None else g_y.T])
        g_y0, g_times, g_args = _adjoint(fun, y0, times, () if args is None else args, True, 0, rtol, atol, 0, 0.0,
                                         path, g_path)
        g_eval = g_times[1:] + (0.0 if g_t is None else g_t)
        return g_y0, np.array([g_times[0], 0.0]), np.reshape(g_eval, np.shape(t_eval)), g_args
    return _once(y, g, solve)


def ivp_checked(t_eval, dense_output, events):
    """Refuse (as ivp_times) a solve_ivp call whose result has no derivative; None otherwise."""
    ivp_times((0.0,), t_eval, dense_output, events)


table.nondiff(ivp_checked, "t_eval, dense_output, events", spelling="ivp_checked")


def ivp_adjoint_code(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, g):
    """ivp_adjoint as odeint_adjoint_code from t_span[0] through t_eval (second derivatives)."""
    ivp_checked(t_eval, dense_output, events)
    moving = () if args is None else args
    times = np.concatenate([np.reshape(t_span[0], (1,)), np.ravel(t_eval)])
    path = np.concatenate([np.reshape(y0, (1, np.size(y0))), y.y.T])
    g_y = np.reshape(flat_leaves(y.y, item_cotangent(g, "y")), np.shape(y.y))
    g_path = np.concatenate([np.zeros((1, np.size(y0))), g_y.T])
    g_y0, g_times, g_args = odeint_adjoint_code(fun, y0, times, moving, True, 0, rtol, atol, 0, 0.0, path, g_path)
    g_eval = g_times[1:] + flat_leaves(np.ravel(t_eval), item_cotangent(g, "t"))
    return g_y0, np.stack([g_times[0], 0.0]), np.reshape(g_eval, np.shape(t_eval)), g_args


ivp_adjoint = Solve(ivp_adjoint_fast, ivp_adjoint_code)
_IVP_READS = ["fun", "t_span", "y0", "t_eval", "dense_output", "events", "args", "rtol", "atol", "y", "g"]
adjoint_rules = Formulas(table, globals(), "<tapegen scipy.integrate adjoint rules>")
for _k, _wrt in enumerate(("y0", "t_span", "t_eval", "args")):  # one backward solve, read for each argument
    adjoint_rules.rule(SOLVE_IVP, _wrt, "vjp", f"solve_ivp_vjp_{_wrt}", _IVP_READS,
                       f"ivp_adjoint({', '.join(_IVP_READS)})[{_k}]")
adjoint_rules.load()


def ivp_tangent_fast(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, v0, args_dot, t_dot):
    """The tangent of sol.y (and sol.t, which is t_eval): the tangent ODE from [t_span[0], *t_eval]."""
    times = ivp_times(t_span, t_eval, dense_output, events)
    args = () if args is None else args
    dynamics = Dynamics(fun, y0, args, True, 0)
    v = odeint_tangent(fun, y0, times, args, True, 0, rtol, atol, 0, 0.0, v0, args_dot)[1:]
    if t_dot is not None:
        v = v + np.stack([dynamics(y.y[:, i], t) * t_dot[i] for i, t in enumerate(np.ravel(t_eval))])
    return OdeTangent(t=np.zeros(np.shape(t_eval)) if t_dot is None else t_dot, y=v.T)


def ode_tangent(times, path):
    """solve_ivp's tangent from its fields: an OdeTangent (sol.t's tangent `times` and sol.y's `path`)."""
    return OdeTangent(t=times, y=path)


table.op(ode_tangent, "times, path", spelling="ode_tangent")


@table.vjp(ode_tangent, "times", partial=True)
def ode_tangent_vjp_times(g):
    return item_cotangent(g, "t")


@table.vjp(ode_tangent, "path", partial=True)
def ode_tangent_vjp_path(g):
    return item_cotangent(g, "y")


@table.jvp(ode_tangent, "times")
def ode_tangent_jvp_times(times_dot, path):
    return ode_tangent(times_dot, np.zeros_like(path))


@table.jvp(ode_tangent, "path")
def ode_tangent_jvp_path(times, path_dot):
    return ode_tangent(np.zeros_like(times), path_dot)


def ivp_tangent_code(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, v0, args_dot, t_dot):
    """ivp_tangent as odeint_tangent_code from t_span[0] through t_eval (second derivatives)."""
    ivp_checked(t_eval, dense_output, events)
    moving = () if args is None else args
    times = np.concatenate([np.reshape(t_span[0], (1,)), np.ravel(t_eval)])
    v = odeint_tangent_code(fun, y0, times, moving, True, 0, rtol, atol, 0, 0.0, v0, args_dot)[1:]
    if t_dot is None:
        return ode_tangent(np.zeros(np.shape(t_eval)), v.T)
    moved = [call_with(y.y[:, i], np.ravel(t_eval)[i], moving, fun, True) * np.ravel(t_dot)[i]
             for i in range(np.size(t_eval))]
    return ode_tangent(t_dot, (v + np.stack(moved)).T)


ivp_tangent = Solve(ivp_tangent_fast, ivp_tangent_code)


@table.jvp(SOLVE_IVP, "y0")
def solve_ivp_jvp_y0(fun, t_span, y0, y0_dot, t_eval, dense_output, events, args, rtol, atol, y):
    return ivp_tangent(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, y0_dot, None, None)


@table.jvp(SOLVE_IVP, "args")
def solve_ivp_jvp_args(fun, t_span, y0, t_eval, dense_output, events, args, args_dot, rtol, atol, y):
    return ivp_tangent(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, np.zeros_like(y0),
                       args_dot, None)


@table.jvp(SOLVE_IVP, "t_span")
def solve_ivp_jvp_t_span(fun, t_span, t_span_dot, y0, t_eval, dense_output, events, args, rtol, atol, y):
    start = -call_with(y0, t_span[0], () if args is None else args, fun, True) * t_span_dot[0]
    return ivp_tangent(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, start, None, None)


@table.jvp(SOLVE_IVP, "t_eval")
def solve_ivp_jvp_t_eval(fun, t_span, y0, t_eval, t_eval_dot, dense_output, events, args, rtol, atol, y):
    return ivp_tangent(fun, t_span, y0, t_eval, dense_output, events, args, rtol, atol, y, np.zeros_like(y0), None,
                       t_eval_dot)


__all__ = ["table", "Dynamics", "OdeTangent", "odeint_adjoint", "odeint_tangent", "ivp_times", "ivp_adjoint",
           "ivp_tangent"]
