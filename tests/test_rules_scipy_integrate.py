"""odeint and solve_ivp by the adjoint method, against central differences of the solvers themselves.

Tight tolerances (1e-11) in the forward solve, which the backward solve reuses, so the derivatives
agree with finite differences to about 1e-6. Reverse mode (grad and vjp) and forward mode (jvp) in
the initial state, the time points and `args=`; second derivatives (hessian, jvp of grad, grad of jvp,
jvp of jvp) against central differences of the gradient.
"""
import numpy as np
import pytest

import tapegen as tg
from modes import _compile, check_modes
from rule_rows import Row

integrate = pytest.importorskip("scipy.integrate")
integrate_rules = pytest.importorskip("tapegen.rules.scipy_integrate")
odeint, solve_ivp = integrate.odeint, integrate.solve_ivp

TOL = 1e-11


def pendulum(y, t, theta):
    return np.array([y[1], -theta[0] * np.sin(y[0]) - theta[1] * y[1] * t])


def pendulum_t_first(t, y, theta, damping):
    return np.array([y[1], -theta[0] * np.sin(y[0]) - damping * y[1] * np.cos(t)])


def decay(y, t):
    return -0.7 * y * (1.0 + 0.1 * t)


def odeint_path(y0, t, theta):
    return odeint(pendulum, y0, t, args=(theta,), rtol=TOL, atol=TOL)


def odeint_t_first(y0, t, theta, damping):
    return odeint(pendulum_t_first, y0, t, args=(theta, damping), tfirst=True, rtol=TOL, atol=TOL)


def odeint_no_args(y0, t):
    return odeint(decay, y0, t, rtol=TOL, atol=TOL)


def ivp_path(y0, t_eval, theta):
    return solve_ivp(pendulum_t_first, (0.0, 2.0), y0, t_eval=t_eval, args=(theta, 0.3), rtol=TOL, atol=TOL).y


def ivp_from(t0, y0, theta):
    sol = solve_ivp(pendulum_t_first, np.array([t0, 2.0]), y0, t_eval=np.array([0.5, 1.5]), args=(theta, 0.3),
                    method="DOP853", rtol=TOL, atol=TOL)
    return sol.y * sol.t


def layers(y, t, params):  # autograd's ode_net: the parameters arrive as a list of (W, b) in args
    h = y
    for W, b in params:
        h = np.tanh(h @ W + b)
    return h


def odeint_layers(y0, W, b):
    params = [(W, b), (np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([0.1, -0.1]))]
    return odeint(layers, y0, np.array([0.0, 0.5, 1.0]), tuple((params,)), rtol=TOL, atol=TOL)


def decay_dict(y, t, p, n):
    return -p["k"] * y * n + p["c"]


def odeint_dict(y0, k, c):  # a dict in args, with a string item (no gradient) beside the arrays
    return odeint(decay_dict, y0, T, args=({"k": k, "c": c, "name": "decay"}, 2), rtol=TOL, atol=TOL)


def pendulum_list(t, y, ws):
    return np.array([y[1], -ws[0][0] * np.sin(y[0]) - ws[1] * y[1]])


def ivp_list(y0, theta, damping):
    return solve_ivp(pendulum_list, (0.0, 1.5), y0, t_eval=np.array([0.5, 1.5]), args=([theta, damping],),
                     rtol=TOL, atol=TOL).y


Y0, T, THETA = np.array([0.5, -0.2]), np.array([0.0, 0.4, 1.0, 1.3]), np.array([1.3, 0.4])
W_LAYER, B_LAYER = np.array([[0.3, -0.6], [0.9, 0.2]]), np.array([0.05, -0.2])
LIKE = (np.zeros(2), "name", [np.zeros((2, 2)), decay], {"c": 0.0})  # args as the derivative solves see them


def flattened(a, w):
    """The helpers the derivative solves use, between an args-like tree and one vector."""
    flat = integrate_rules.flat_leaves(LIKE, (a, None, [w, None], {"c": a[0] * a[1]}))
    tree = integrate_rules.leaves_like(LIKE, np.sin(flat))
    return tree[0] * np.sum(tree[2][0]) + tree[3]["c"]


def ode_tangent_fields(t, y):
    field = integrate_rules.ode_tangent(t, y)
    return np.sum(field.t * np.cos(field.y))


ROWS = [
    Row("odeint-(2,)x(4,)-args", odeint_path, (Y0, T, THETA), (0, 1, 2), covers=(odeint,)),
    Row("odeint-tfirst-float-arg", odeint_t_first, (Y0, T, THETA, 0.3), (0, 1, 2, 3), covers=(odeint,)),
    Row("odeint-(3,)-no-args", odeint_no_args, (np.array([1.0, 0.5, -0.3]), T), (0, 1), covers=(odeint,)),
    Row("solve_ivp-t_eval-args", ivp_path, (Y0, np.array([0.3, 1.0, 1.7]), THETA), (0, 1, 2), covers=(solve_ivp,)),
    Row("solve_ivp-t_span-sol.t", ivp_from, (0.1, Y0, THETA), (0, 1, 2), covers=(solve_ivp,)),
    Row("odeint-args-list-of-layers", odeint_layers, (Y0, W_LAYER, B_LAYER), (0, 1, 2), covers=(odeint,)),
    Row("odeint-args-dict-and-int", odeint_dict, (Y0, np.array([0.7, 0.3]), 0.2), (0, 1, 2), covers=(odeint,)),
    Row("solve_ivp-args-nested-list", ivp_list, (Y0, THETA, 0.3), (0, 1, 2), covers=(solve_ivp,)),
    Row("flat_leaves-leaves_like-tree", flattened, (THETA, W_LAYER), (0, 1),
        covers=(integrate_rules.flat_leaves, integrate_rules.leaves_like)),
    Row("ode_tangent-fields", ode_tangent_fields, (Y0, W_LAYER), (0, 1), covers=(integrate_rules.ode_tangent,)),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_reverse_and_forward_against_central_differences(row):
    check_modes(row.fn, *row.args, order2=False)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_scalar_loss_gradient_in_every_argument(row):
    fn = row.fn
    loss = {3: lambda a, b, c: np.sum(np.sin(fn(a, b, c))),
            4: lambda a, b, c, d: np.sum(np.sin(fn(a, b, c, d))), 2: lambda a, b: np.sum(np.sin(fn(a, b)))}
    tg.gradcheck(loss[len(row.args)], *row.args, wrt=row.wrt, rtol=1e-5, atol=1e-7)


def test_the_dynamics_is_differentiated_by_tapegen_not_the_solver_steps():
    """The gradient code calls the adjoint solve, which calls tapegen's VJP of the user's dynamics."""
    text = tg.source(lambda y0, theta: np.sum(odeint_path(y0, T, theta)), wrt=(0, 1))
    assert "odeint_adjoint(pendulum, y0, t, (theta,)" in text or "odeint_adjoint(pendulum" in text
    assert "pendulum_vjp" not in text  # no unrolled solver: one call per rule


def _loss(fn, n):
    params = ", ".join(f"a{k}" for k in range(n))
    return _compile(f"def loss({params}):\n    return np.sum(np.sin(fn({params})))\n", "loss", {"np": np, "fn": fn})


def _gradient_difference(gradient, args, i, u, eps=1e-5):
    plus, minus = list(args), list(args)
    plus[i], minus[i] = args[i] + eps * u, args[i] - eps * u
    return (np.asarray(gradient(*plus)) - np.asarray(gradient(*minus))) / (2 * eps)


SECOND = [(row, i) for row in ROWS if not row.id.endswith("-and-int") for i in row.wrt
          if isinstance(row.args[i], np.ndarray)]  # (an integer in args: refused at second order, below)


@pytest.mark.parametrize("row, i", SECOND, ids=[f"{row.id}-wrt{i}" for row, i in SECOND])
def test_second_order_against_differences_of_the_gradient(row, i):
    """hessian, jvp of grad and grad of jvp: the derivative solves differentiated as odeint calls of the
    augmented dynamics, against central differences of tapegen's (checked) gradient."""
    n = len(row.args)
    loss = _loss(row.fn, n)
    u = np.random.default_rng(i).standard_normal(np.shape(row.args[i]))
    gradient = tg.grad(loss, wrt=i)
    expected = _gradient_difference(gradient, row.args, i, u)
    params = ", ".join(f"a{k}" for k in range(n))
    tangents = ", ".join("u" if k == i else "None" for k in range(n))
    along = _compile(f"def along({params}):\n    return tg.jvp(loss, ({params},), ({tangents},))[1]\n", "along",
                     {"tg": tg, "loss": loss, "u": u})
    found = {"hessian": np.tensordot(tg.hessian(loss, wrt=i)(*row.args), u, axes=np.ndim(u)),
             "jvp of grad": tg.jvp(gradient, tuple(row.args), tuple(u if k == i else None for k in range(n)))[1],
             "grad of jvp": tg.grad(along, wrt=i)(*row.args)}
    for what, value in found.items():
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-6, err_msg=what)


def test_second_order_in_a_float_start_time_and_a_dict_with_a_string():
    check_modes(lambda t0, theta: np.sum(np.sin(ivp_from(t0, Y0, theta))), 0.1, THETA)
    check_modes(lambda y0, k: np.sum(np.sin(odeint(decay_dict, y0, T, args=({"k": k, "c": 0.2, "name": "d"}, 2.0),
                                                   rtol=TOL, atol=TOL))), Y0, np.array([0.7, 0.3]))


def test_jvp_of_jvp_through_odeint():
    u, w = np.array([0.3, -0.5]), np.array([0.2, 0.7])

    def along(theta):
        return tg.jvp(lambda th: np.sum(np.sin(odeint_path(Y0, T, th))), (theta,), (u,))[1]
    inner = tg.jvp(along, (THETA,), (w,))[1]
    expected = (along(THETA + 1e-5 * w) - along(THETA - 1e-5 * w)) / 2e-5
    np.testing.assert_allclose(inner, expected, rtol=1e-4, atol=1e-6)


def test_second_order_with_an_integer_in_args_is_refused():
    loss = lambda y0: np.sum(odeint_dict(y0, np.array([0.7, 0.3]), 0.2) ** 2)  # noqa: E731
    with pytest.raises(tg.TapegenError, match="not integers"):
        tg.hessian(loss)(Y0)


@pytest.mark.parametrize("call, match", [
    (lambda y0: solve_ivp(pendulum_t_first, (0.0, 1.0), y0, args=(THETA, 0.3)).y, "t_eval"),
    (lambda y0: odeint(decay, y0, T, full_output=1)[0], "full_output=0"),
], ids=["solve_ivp-no-t_eval", "odeint-full_output"])
def test_what_has_no_derivative_is_an_error(call, match):
    with pytest.raises(tg.TapegenError, match=match):
        tg.grad(lambda y0: np.sum(call(y0)))(Y0)


def test_a_list_of_layers_in_args_gets_its_gradient_as_a_list():
    """autograd's ode_net passes `tuple((params,))`: every array leaf gets its gradient, none silently zero."""
    def loss(params):
        return np.sum(odeint(layers, Y0, T, tuple((params,)), rtol=TOL, atol=TOL) ** 2)
    params = [(W_LAYER, B_LAYER), (W_LAYER.T, -B_LAYER)]
    check_modes(loss, params, order2=False)
    gradient = tg.grad(loss)(params)
    assert all(np.any(g != 0) for layer in gradient for g in layer)


class Model:
    def __init__(self, w):
        self.w = w

    def rhs(self, y, t):
        return np.tanh(y * self.w)


def test_a_function_holding_a_differentiated_value_is_refused():
    """`odeint(Model(w).rhs, ...)`: w reaches the dynamics through its object, not args: refused, not zero."""
    def loss(w):
        return np.sum(odeint(Model(w).rhs, Y0, T))
    with pytest.raises(tg.NoRuleError, match="holds a differentiated value"):
        tg.grad(loss)(np.array([0.3, -0.2]))
    with pytest.raises(tg.TapegenError):
        tg.jvp(loss, (np.array([0.3, -0.2]),), (np.ones(2),))


def test_a_function_holding_a_constant_object_is_fine():
    def loss(y0):
        return np.sum(odeint(Model(np.array([0.3, -0.2])).rhs, y0, T, rtol=TOL, atol=TOL))
    check_modes(loss, Y0, order2=False)


def spring(k, y0):  # the dynamics a def of the differentiated function, reading its names (published style)
    damping = 0.3 * k

    def force(y, scale):  # another def reading them, which the dynamics calls
        return -k * scale * y[0] - damping * y[1]

    def rhs(y, t, scale):
        return np.array([y[1], force(y, scale)])
    return np.sum(odeint(rhs, y0, T, args=(2.0,), rtol=TOL, atol=TOL)[:, 0] ** 2)


def decay_of_rate(rate, y0):
    sol = solve_ivp(lambda t, y: -rate * y * (1.0 + t), (0.0, 1.0), y0, t_eval=np.linspace(0.0, 1.0, 5),
                    rtol=TOL, atol=TOL)
    return np.sum(sol.y[:, -1] ** 2)


@pytest.mark.parametrize("f", [spring, decay_of_rate], ids=lambda f: f.__name__)
def test_a_def_or_lambda_of_the_function_reading_its_values_is_the_dynamics(f):
    """`rhs` written as a function of its own taking the values it reads last (k, damping), passed in args."""
    check_modes(f, 1.3, np.array([1.0, 0.5]), order2=False)


def kinetics(y, t, k1, k2):  # A -> B -> C, the right-hand side a list as the SciPy cookbook writes it
    a, b = y
    return [-k1 * a, k1 * a - k2 * b]


def kinetics_yield(k):
    sol = odeint(kinetics, [1.0, 0.0], np.linspace(0, 2, 5), args=(k[0], k[1]), rtol=TOL, atol=TOL)
    return np.sum(sol[:, 1])


def test_dynamics_returning_a_list_in_every_mode_and_second_order():
    check_modes(kinetics_yield, np.array([1.2, 0.4]))



def lotka_volterra(t, z, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


def prey_total(p):  # the parameters passed as args=tuple(p), as the SciPy cookbook does
    sol = solve_ivp(lotka_volterra, [0, 1], [10.0, 5.0], args=tuple(p), t_eval=np.linspace(0, 1, 4),
                    rtol=TOL, atol=TOL)
    return np.sum(sol.y[0])


def test_args_a_tuple_of_an_array_argument_in_every_mode_and_second_order():
    check_modes(prey_total, np.array([1.0, 0.1, 1.5, 0.075]), rtol=1e-4, atol=1e-5)
