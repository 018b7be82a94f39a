"""Python as people write it (issue 15): each function uses idioms of published NumPy model code.

tests/test_python_features.py checks each in grad, vjp, jvp and grad-of-grad.
"""
import functools
import itertools
import math
import operator
import typing
import warnings
from collections import namedtuple
import dataclasses
from dataclasses import dataclass, field

import numpy as np

import tapegen as tg

from . import other_module

Params = namedtuple("Params", "W b")


@dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray
    name: str = "affine"


def mlp_over_pairs(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def enumerate_zip(w, xs, ys):
    total = 0.0
    for t, (x, y) in enumerate(zip(xs, ys)):
        total = total + (t + 1.0) * np.sum((x * w - y) ** 2)
    return total


def zip_star(w, pairs):
    total = 0.0
    for a, b in zip(*pairs):
        total = total + np.sum(a * w * b)
    return total


def dict_items_loop(params, x):
    total = 0.0
    for name, value in params.items():
        total = total + np.sum(np.sin(value) * x) * len(name)
    return total


def comprehensions(Ws, h):
    hs = [np.tanh(W @ h) for W in Ws]
    penalty = sum(np.sum(W ** 2) for W in Ws)
    scaled = {k: v * 2.0 for k, v in enumerate(hs) if k > 0}
    pairs = [[h[i] * h[j] for j in range(3) if j != i] for i in range(3)]
    return np.sum(np.stack(hs) ** 2) + 0.1 * penalty + np.sum(scaled[1]) + np.sum(np.array(pairs))


def builtins_and_math(x, s):
    a = abs(x[0]) + pow(x[1], 2) + max(x[0], x[1], 0.1) + min(x) + round(1.7) * x[2] + len(x) * x[0]
    b = math.exp(s) + math.log(s) + math.sqrt(s) + math.sin(s) * math.cos(s) + math.tanh(s) + math.pi * s
    return a + b + math.log(s, 2) + sum(x) + sum([x[0], x[1]], 1.0) + math.hypot(x[0], x[1], s)


def apply(f, x):
    return f(x) * 2.0


def layer(x, W, act=np.tanh):
    return act(x @ W)


def functions_as_values(W, x):
    tanh = np.tanh
    pi, sqrt = np.pi, np.sqrt
    h = layer(x, W) + layer(x, W, act=np.sin) + apply(np.cos, x @ W)
    return np.sum(tanh(h) * pi + sqrt(h * h + 1.0))


def total(*arrays, scale=1.0, **extra):
    result = 0.0
    for a in arrays:
        result = result + np.sum(a * scale)
    return result + extra["bias"] * len(arrays)


def through(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def star_arguments(x, y, *, scale=2.0):
    args = (x, y * x)
    opts = {"bias": np.sum(y)}
    return total(*args, scale=scale, **opts) + through(np.dot, x, y) + through(total, x, bias=1.0)


def check_vector(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got {x.ndim} dimensions")
    assert np.all(np.isfinite(x)), "x must be finite"
    return x * 2.0


class Dense:
    def __init__(self, W, activation=np.tanh):
        self.W = W
        self.act_fn = activation

    def forward(self, X):
        self.n_in = X.shape[1]
        self.Z = X @ self.W
        return self.act_fn(self.Z)


def statements_and_objects(w, X):
    a = b = check_vector(w)
    print(f"a[0] = {a[0]:.3f}, shape {b.shape!r}")
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        c = np.log(a * a + 1.0)
    if -10.0 < w[0] < 10.0:
        c = c * 2.0
    dense = Dense(np.eye(3) * 0.5)
    out = dense.forward(X * w)
    del a
    return np.sum(c) + np.sum(out) + np.sum(dense.Z ** 2) + dense.n_in


def writes_into_arguments(x, v):
    x[0] = v[0] * v[1]
    for i in range(1, 3):
        x[i] = x[i - 1] * v[i]
    v += 1.0
    return np.sum(x * v)


def arguments_added_to_in_a_loop(pos, vel, dt=0.1):
    """Velocity Verlet as simulations write it: `vel += ...` and `pos += ...` on the arguments, pass after pass."""
    acc = -np.sin(pos)
    for _ in range(3):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = -np.sin(pos)
        vel *= 1.0 - 0.1 * dt
        vel += acc * dt / 2.0
    return np.sum(pos ** 2) + np.sum(vel * pos)


def array_named_twice_then_added_to_in_a_loop(x):
    """`prev` is the same array as `vel` when the code runs: NumPy's `+=` changes both."""
    vel = x * 1.0
    prev = vel
    for _ in range(3):
        vel += x
    return np.sum(prev * vel)


def array_named_twice_in_a_loop_then_added_to(x):
    vel = x * 1.0
    prev = x * 0.5
    for i in range(3):
        if i == 1:
            prev = vel
        vel -= 0.1 * vel
    return np.sum(prev * vel)


def arrays_named_twice_by_a_tuple_in_a_loop(x):
    """`prev, vel = vel, vel`, pass after pass: the aliases go round the loop (none starts from a new array)."""
    vel = x * 1.0
    prev = x * 0.0
    for _ in range(3):
        prev, vel = vel, vel
        vel += x
    return np.sum(prev * vel)


def array_named_twice_at_the_end_of_a_pass(x):
    """`prev = vel` ends a pass; the next pass's `vel += x` changes `prev` too, read after it."""
    vel = x * 1.0
    prev = x * 0.0
    total = 0.0
    for _ in range(3):
        vel += x
        total = total + np.sum(prev * prev)
        prev = vel
    return total


def array_named_twice_at_the_end_of_a_pass_then_written_into(x):
    vel = x * 1.0
    prev = x * 0.0
    total = 0.0
    for _ in range(3):
        vel[1] = vel[1] * x[1]
        total = total + np.sum(prev * prev)
        prev = vel
    return total


def rnn_states_written_into_rows_the_last_read_through_a_view(x):
    """`H[t] = np.tanh(...)`, then `h = H[t]` (a view of that row) for the next pass, and the same through
    `out=H[t]`: `h` shares H's memory, but no write reaches the row it shows."""
    W = np.outer(x, x) * 0.5
    H = np.zeros((3, 3))
    h = np.zeros(3)
    for t in range(3):
        H[t] = np.tanh(x * (t + 1) + h @ W)
        h = H[t]
    G = np.zeros((3, 3))
    g = np.zeros(3)
    for t in range(3):
        np.tanh(x - g @ W, out=G[t])
        g = G[t]
    return np.sum(H ** 2) + np.sum(G * H) + np.sum(h * g)


def rows_written_over_the_one_the_last_pass_kept(x):
    """`prev = H[t]`, then `H[t:t + 2] = ...` in the next pass reaches the row `prev` shows."""
    H = np.zeros((4, 3))
    prev = x * 0.0
    for t in range(2):
        H[t:t + 2] = np.tanh(x + prev)
        prev = H[t + 1]
    return np.sum(H)


def arrays_swapped_then_added_to_in_a_loop(x):
    """Double buffers: `b, c = c, b` swaps two arrays, neither ever the other, so `b += x` changes only `b`."""
    b, c = x * 1.0, x * 2.0
    for _ in range(3):
        b, c = c, b
        b += x
        c *= 0.5
    return np.sum(b * c)


def number_named_twice_in_a_loop_then_added_to(x):
    """A number is rebound by `+=`, as Python does: `prev` keeps the value from before."""
    total = 0.0
    prev = 1.0
    for k in range(3):
        prev = total
        total += np.sum(x * k)
    return prev * total


def namedtuple_parameters(p, x):
    return np.sum(np.tanh(x @ p.W + p.b)) + np.sum(p[0] * 2.0)


def dataclass_parameters(layer_params, x):
    return np.sum(np.tanh(x @ layer_params.W + layer_params.b) ** 2)


seed = np.array([1.0, 2.0, 0.5])
tape = 3.0
shape = (3,)


def unbroadcast(x):
    return x * 2.0


def names_like_generated_ones(x):
    return np.sum(unbroadcast(x * seed) * tape) + np.sum(np.ones(shape) * x)


def matrix_power(x, v):
    """Named as NumPy's function is: its forward code would be `matrix_power_jvp`, the name of the rule it
    calls."""
    A = np.outer(x, v) * 0.3 + np.eye(3)
    return np.sum(np.linalg.matrix_power(A, 3)) + np.sum(loss_grad(x))


def loss_grad(x):
    """A function of the module named as generated gradient code would be (`loss` calls it)."""
    return np.tanh(x) * 2.0


def loss(x, v):
    """Its gradient code would be `loss_grad`, the name of the module's function it calls."""
    return np.sum(loss_grad(x * v) ** 2)


WEIGHTS3 = np.array([0.3, -1.1, 0.8])


def underscore_as_a_name(a):
    """`_` for an unwanted output: generated code drops a backward statement's unused outputs into `_` too
    (`_, g_v = einsum_vjp(...)`), and eigh's rule, after it, reads the eigenvalues kept here."""
    _, v = np.linalg.eigh(a @ a.T + np.eye(3))
    return np.sum(np.einsum("i,ij->j", WEIGHTS3, v) ** 4)


# --- functions and objects known item by item (loops over them are unrolled) -------------------

def relu(z):
    return np.maximum(z, 0.0)


def apply_all(fs, x):
    return [f(x) for f in fs]


def functions_in_containers(W, x):
    """Functions in a list, a dict of lambdas, map() with a lambda, calls through constant indices."""
    z = x @ W
    acts = {"tanh": np.tanh, "soft": lambda u: np.log1p(np.exp(u))}
    outs = apply_all([np.sin, relu, acts["soft"], lambda u: u ** 3], z)
    total = sum(map(lambda o: np.sum(o ** 2), outs))
    for name, f in [("tanh", acts["tanh"]), ("sin", np.sin)]:
        total = total + np.mean(f(z)) * len(name)
    pairs = list(map(lambda a, b: a * b, outs, outs[::-1]))
    return total + np.sum(pairs[0]) + acts["tanh"](z).sum()


def dicts_of_functions_made_here(W, x):
    """A dict of lambdas made in the function: looped over by .values(), .items(), its keys (`for k in ops`,
    `.keys()`), items set by key (replaced, added), and a list of functions with an item replaced."""
    z = x @ W
    ops = {"square": lambda u: u * u, "sin": np.sin}
    ops["square"] = lambda u: u ** 3  # (replaced: its place in the order kept)
    ops["soft"] = lambda u: np.log1p(np.exp(u))  # (added last)
    total = sum(np.sum(op(z)) for op in ops.values())
    for k, op in ops.items():
        total = total + np.mean(op(z)) * len(k)
    total = total + sum(np.sum(ops[k](z[0])) for k in ops) + sum(np.sum(ops[k](z[1])) for k in ops.keys())
    fs = [lambda u: u * 2, np.tanh]
    fs[0] = ops["sin"]
    return total + sum(np.sum(f(z)) for f in fs)


class Normal:
    """A normal distribution with the operators of a small library of the user's: products, scaling by a number from
    either side, sums, negation, `+=` through __iadd__."""

    def __init__(self, mu, var):
        self.mu, self.var = mu, var

    def __mul__(self, other):
        if isinstance(other, Normal):
            var = 1.0 / (1.0 / self.var + 1.0 / other.var)
            return Normal(var * (self.mu / self.var + other.mu / other.var), var)
        return Normal(self.mu * other, self.var * other ** 2)

    def __rmul__(self, k):
        return self * k

    def __add__(self, other):
        if not isinstance(other, Normal):
            return NotImplemented
        return Normal(self.mu + other.mu, self.var + other.var)

    def __iadd__(self, other):
        self.mu = self.mu + other.mu
        self.var = self.var + other.var
        return self

    def __neg__(self):
        return Normal(-self.mu, self.var)

    def __sub__(self, other):
        return self + (-other)

    def logpdf(self, x):
        return -0.5 * np.log(2 * np.pi * self.var) - (x - self.mu) ** 2 / (2 * self.var)


class ScaledNormal(Normal):
    def __rmul__(self, k):  # (a subclass's reflected method: Python tries it before Normal.__mul__)
        return ScaledNormal(self.mu * 3.0, self.var)


def operators_of_a_class_of_the_users(mu, var):
    """`a * b`, `2.0 * a`, `a - b`, `-a`, `a += b` on objects of the user's class: its methods, in the order
    Python tries them (a subclass's reflected method first; NotImplemented decided when transforming)."""
    a = Normal(mu, var)
    b = Normal(mu ** 2, var * 0.5 + 1.0)
    d = 2.0 * (a * b) - b
    d += a
    parts = [a, b, d * 0.5]
    total = parts[0]
    for g in parts[1:]:
        total = total + g
    s = ScaledNormal(mu * 2.0, var)
    return np.sum(total.logpdf(np.ones(3))) + np.sum((a * s).mu) + np.sum((-d).mu * d.var)


class Bag:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


class Doubled(Bag):
    def __iter__(self):
        for item in self.items:
            yield item * 2.0


def builtins_over_objects_of_the_users(x):
    """sum(), list(), np.stack() of an object of the user's class: of the items its __iter__ gives (an
    iterator over an attribute, or a generator)."""
    bag, doubled = Bag([x, x * 2, np.sin(x)]), Doubled([x ** 2, np.cos(x)])
    total = np.sum(sum(bag)) + np.sum(np.stack(list(bag)) ** 2) + len(bag)
    return total + np.sum(sum(doubled, np.ones(3))) + np.sum(np.stack(tuple(doubled)) * x)


class TorchModule:
    """PyTorch's style, in NumPy: calling a module runs its forward."""

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class TorchLinear(TorchModule):
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, x):
        return x @ self.W + self.b

    def parameters(self):
        return [self.W, self.b]


class TorchReLU(TorchModule):
    def forward(self, x):
        return np.maximum(x, 0.0)

    def parameters(self):
        return []


class TorchSequential(TorchModule):
    def __init__(self, *layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


class TorchStack(TorchSequential):
    def __init__(self, *layers):
        super().__init__(*layers)
        self.layers = list(layers)


def sequential_modules_of_different_classes(W1, b1, W2, x):
    """`Sequential(Linear(W1, b1), ReLU(), Linear(W2, b2))`: modules of different classes passed through
    `*layers`, kept as the tuple (or `list(layers)`), called in a loop through `__call__`."""
    model = TorchSequential(TorchLinear(W1, b1), TorchReLU(), TorchLinear(W2, np.zeros(2)))
    stack = TorchStack(TorchLinear(W1, b1 * 2.0), TorchReLU())
    reg = sum(np.sum(p ** 2) for p in model.parameters())
    return np.mean((model(x) - 1.0) ** 2) + np.sum(stack(x) ** 2) + 0.01 * reg


class SigmoidAct:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))


class SoftPlusAct:
    def __call__(self, x):
        return np.log(1 + np.exp(x))


ACTIVATION_CLASSES = {"sigmoid": SigmoidAct, "softplus": SoftPlusAct}


class DenseLayer:
    def __init__(self, W, b):
        self.W, self.b, self.layer_input = W, b, None

    def forward_pass(self, X):
        self.layer_input = X
        return X.dot(self.W) + self.b


class ActivationLayer:
    def __init__(self, name):
        self.activation_func = ACTIVATION_CLASSES[name]()

    def forward_pass(self, X):
        return self.activation_func(X)


class LayerList:
    """ML-From-Scratch's NeuralNetwork: layers appended one by one (`model.add(layer)`), run in a loop."""

    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def forward(self, X):
        out = X
        for layer in self.layers:
            out = layer.forward_pass(out)
        return out


def layers_of_different_classes_appended(W1, W2, X, kind="softplus"):
    """Layers of two classes appended to a list attribute by a method, then run in a loop over the list (each
    pass the layer it is); an activation object made from a class a module's dict holds, picked by a key
    known now (`ACTIVATION_CLASSES[name]()`, `cls = ACTIVATION_CLASSES[kind]; cls()`)."""
    model = LayerList()
    model.add(DenseLayer(W1, np.full(4, 0.1)))
    model.add(ActivationLayer("sigmoid"))
    model.add(DenseLayer(W2, np.zeros(2)))
    model.add(ActivationLayer(kind))
    cls = ACTIVATION_CLASSES[kind]
    return np.mean(model.forward(X) ** 2) + np.sum(cls()(X[0]))


class Square:
    def fn(self, z):
        return z ** 2


class Scaled(Square):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def fn(self, z):
        return self.scale * super().fn(z)


class Shifted:
    def __init__(self, inner):
        self.inner = inner

    def fn(self, z):
        return self.inner.fn(z) + 1.0

    def __call__(self, z):
        return self.fn(z)


class Loss:
    def __call__(self, y, p, *args):
        return self.loss(y, p, *args)

    @staticmethod
    def loss(y, p, weight=1.0):
        return weight * np.sum((p - y) ** 2)


LAYERS = [Square(), Scaled(0.5), Shifted(Scaled(2.0))]


def objects_of_different_classes(z, weights):
    """A global list of objects of different classes, each called; super(); a @staticmethod via *args."""
    total = sum(w * np.sum(layer.fn(z)) for layer, w in zip(LAYERS, weights)) + np.sum(LAYERS[2](z))
    made = [Scaled(3.0), Square()]
    for k, layer in enumerate(made):
        total = total + k * np.sum(layer.fn(z))
    return total + Loss()(z, 2 * z, 0.5)


def unpack_layers(weights, shapes):
    for m, n in shapes:
        yield weights[:m * n].reshape((m, n)), weights[m * n:m * n + n]
        weights = weights[(m + 1) * n:]


def generator_helper(weights, x):
    """autograd's bayesian_neural_net: a generator helper looped over."""
    h = x
    for W, b in unpack_layers(weights, [(3, 2), (2, 1)]):
        h = np.tanh(h @ W + b)
    squares = list(W ** 2 for W, b in unpack_layers(weights, [(3, 2)]))
    return np.sum(h) + np.sum(squares[0][1])


def dict_loops(params, x):
    """`for k in params` walks a dict's keys (also with int keys, in any order)."""
    total = sum(np.sum(params[k] * x) for k in params if k.startswith("W"))
    counts = {1: x, 0: 2 * x}
    for k in counts:
        total = total + k * np.sum(counts[k] ** 2)
    return total + len(list(params)) + sum(list(counts))


Gaussian = namedtuple("Gaussian", ["mean", "log_std", "weight"], defaults=[1.0])


def gaussian_logpdf(g, x):
    return -0.5 * np.sum(((x - g.mean) / np.exp(g.log_std)) ** 2) - np.sum(g.log_std)


def namedtuples_made_here(mu, s, x):
    """Namedtuples built from differentiated values: fields read by name, by position, unpacked, replaced."""
    g = Gaussian(mu, log_std=0.5 * s)
    mean, log_std, weight = g
    wider = g._replace(log_std=log_std + 0.1)
    return weight * gaussian_logpdf(wider, x) + np.sum(g[0] * mean) + gaussian_logpdf(Gaussian(mean, s, 2.0), x)


def namedtuple_class_made_inside(mu, s, x):
    """A namedtuple class made inside the function (by collections.namedtuple and typing.NamedTuple)."""
    State = namedtuple("State", ["mean", "scale"], defaults=[1.0])
    Pair = typing.NamedTuple("Pair", [("first", float), ("second", float)])
    state = State(mu * s)
    pair = Pair(np.sum(state.mean * x), second=np.sum(s ** 2))
    first, second = pair
    return first * state.scale + np.tanh(second) + np.sum(state._replace(scale=x)[1] * mu)


def numpy_writes_in_place(x, v):
    """NumPy functions that write into an array: np.fill_diagonal (short values repeated, wrap, 3-d),
    np.copyto (with where=), np.put (negative and repeated indices, short values), np.putmask, np.place,
    np.put_along_axis (on an axis and flattened)."""
    A = np.outer(x, v)
    np.fill_diagonal(A, v[:2] ** 2)
    B = np.zeros((7, 3)) + v
    np.fill_diagonal(B, x[0], wrap=True)
    C = np.zeros((3, 3, 3)) + x
    np.fill_diagonal(C, v[::-1])
    D = x * 1.0
    np.copyto(D, np.sin(v[0]), where=x > 0)
    E = np.zeros(6) + v[1]
    np.put(E, [0, 2, -1, 2], np.concatenate([x, v[:1]]))
    np.put(E, [1, 3, 4], v[:2] * 3.0)
    F = np.outer(x, x)
    np.putmask(F, F > 0.1, v)
    np.place(F, F < -0.1, v[:2])
    i = np.argmax(A, axis=1)[:, None]
    np.put_along_axis(A, i, x[:, None] ** 2, axis=1)
    np.put_along_axis(F, np.array([1, 4]), v[:2], axis=None)
    return (np.sum(A ** 2) + np.sum(np.sin(B)) + np.sum(C * C) + np.sum(D ** 3) + np.sum(E ** 2)
            + np.sum(F ** 3))


def helper_with_a_bare_return(x, v):
    """`return` with no value in a helper, taken in a branch decided when transforming or when running."""
    A = np.outer(x, v)
    _set_diagonal(A, x ** 3, False)
    _set_diagonal(A, v, v[0] > 10.0)
    return np.sum(A ** 2)


def _set_diagonal(A, d, skip):
    if skip:
        return
    i = np.arange(3)
    A[i, i] = d


def closure_changes_a_list_it_reads(x, v):
    """A local def changing a list and a dict of the function it is written in (`total[0] += ...`), called
    in a loop and in a branch: the function reads the changed containers afterwards."""
    total = [0.0]
    stats = {"n": 0, "loss": 0.0}

    def add(w):
        total[0] += np.sum(w * v)
        stats["n"] += 1
        stats["loss"] = stats["loss"] + np.sum(w ** 2)
        return w * 0.9

    w = x
    for _ in range(3):
        w = add(w)
    if v[0] > 0:
        add(np.sin(x))
    return total[0] ** 2 + stats["loss"] / stats["n"]


def centred_with_asarray(x, v):
    """`x = np.asarray(x)` (the argument itself) changed in place by `-=`: computed apart from the caller's."""
    x = np.asarray(x, dtype=float)
    x -= x.mean()
    y = np.asarray(v)
    return np.sum(x ** 2 * y)


def numpy_functions_written_out(x, v):
    """np.gradient with spacings (numbers, coordinates, per axis), np.cov / np.corrcoef, np.broadcast_arrays,
    np.compress, np.extract, np.diff with prepend / append, np.take with mode: as the NumPy code they are."""
    A = np.outer(x, np.concatenate([v, v ** 2]))
    t = np.cumsum(np.abs(v) + 0.5)
    gy, gx = np.gradient(A, 0.3, np.concatenate([t, t[-1] + t]))
    spaced = np.sum(gy ** 2) + np.sum(gx * A) + np.sum(np.gradient(x ** 3, 0.5, edge_order=2) ** 2)
    X = np.stack([x, v ** 2, np.sin(x), x * v])
    stats = np.sum(np.cov(X)) + np.sum(np.corrcoef(X) ** 2) + np.cov(x, v, bias=True)[0, 1] + np.cov(x)
    a, b = np.broadcast_arrays(x[:, None], v[None, :] ** 2)
    picked = np.sum(np.compress([True, False, True], x * v) ** 2) + np.sum(np.extract(v > 0, x) ** 3) \
        + np.sum(np.compress([False, True, True], A, axis=1))
    ends = np.sum(np.diff(x ** 2, n=2, prepend=0.5, append=v[0]) ** 2) + np.sum(np.diff(A, axis=0, prepend=A[:1]))
    wrapped = np.sum(np.take(x, [0, 4, -1], mode="wrap") * v) + np.sum(np.take(A, [7, -9], axis=1, mode="clip"))
    return spaced + stats + np.sum(a * b) + picked + ends + wrapped


def display_of_functions_indexed(x, v):
    """A display of functions (lambdas among them) indexed where it is written, by a constant or a name
    known when transforming: `{"relu": lambda z: ..., "tanh": np.tanh}[kind]`."""
    kind = "softplus"
    act = {"relu": lambda z: np.maximum(z, 0.0), "softplus": lambda z: np.log1p(np.exp(z)), "tanh": np.tanh}[kind]
    second = [np.sin, lambda z: z ** 3][1]
    return np.sum(act(x * v) ** 2) + np.sum(second(v + x))


ACTIVATION_BY_NAME = {"relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh,
                      "softplus": lambda z: np.log1p(np.exp(z))}


ACTIVATION = "softplus"


def activation_named_by_the_module(W, x):
    """A string of the module's (and a closure's) naming the function: known when transforming, the code
    made again when the name is rebound."""
    hidden = ACTIVATION_BY_NAME[ACTIVATION](x @ W)
    return np.sum(_activation_loss("tanh")(hidden)) + np.sum(ACTIVATION_BY_NAME[ACTIVATION](W) ** 2)


def _activation_loss(name):
    def loss(h):
        act = ACTIVATION_BY_NAME[name]
        return act(h) ** 2
    return loss


def nll_fn(X, y, noise, naive=False):
    """A helper returning one of two local functions closing over its values, picked by a flag known when
    transforming (Krasser's Gaussian-process notebook)."""
    def nll_naive(theta):
        K = theta[1] ** 2 * np.exp(-0.5 * (X - X.T) ** 2 / theta[0] ** 2) + noise ** 2 * np.eye(len(X))
        return 0.5 * np.log(np.linalg.det(K)) + 0.5 * y @ np.linalg.solve(K, y)

    def nll_stable(theta):
        K = theta[1] ** 2 * np.exp(-0.5 * (X - X.T) ** 2 / theta[0] ** 2) + noise ** 2 * np.eye(len(X))
        L = np.linalg.cholesky(K)
        alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
        return np.sum(np.log(np.diagonal(L))) + 0.5 * y @ alpha

    if naive:
        return nll_naive
    else:
        return nll_stable


def local_functions_a_helper_picks(theta):
    X, y = np.linspace(-1.0, 1.0, 4)[:, None], np.array([0.3, -0.2, 0.5, 0.1])
    return nll_fn(X, y, 0.3)(theta) + nll_fn(X, y, 0.3, naive=True)(theta * 1.1)


def itertools_of_differentiated_items(x, X):
    """itertools.product (of several, and with repeat=), combinations, permutations and
    combinations_with_replacement of lists and arrays holding derivatives: the tuples they stand for."""
    pts = [x[0], x[1] * 2.0, x[2]]
    total = sum(a * b for a, b in itertools.product(pts, repeat=2))
    total = total + sum(a - b ** 2 for a, b in itertools.product(pts, [x[0], 2.0]))
    total = total + sum(a * b ** 2 for a, b in itertools.combinations(pts, 2))
    total = total + sum(np.sum(a * np.sin(b)) for a, b in itertools.permutations(X, 2))
    total = total + sum(a * b * c for a, b, c in itertools.combinations_with_replacement(x[:2], 3))
    return total + sum(x[i] * x[j] for i, j in itertools.combinations(range(3), 2))


def matrix_factorization_steps(P, Q):
    """quuxlabs' matrix factorization: `P[i][k] = ...` and `Q[k][j] += ...` on arrays, row by row (each
    `P[i, k]`, as NumPy writes through the row `P[i]` is a view of)."""
    R = np.array([[5.0, 3.0, 0.0], [4.0, 0.0, 1.0]])
    P, Q = P.copy(), Q * 1.0
    for i in range(len(R)):
        for j in range(len(R[i])):
            if R[i][j] > 0:
                eij = R[i][j] - np.dot(P[i, :], Q[:, j])
                for k in range(2):
                    P[i][k] = P[i][k] + 0.01 * (2 * eij * Q[k][j] - 0.02 * P[i][k])
                    Q[k][j] += 0.01 * (2 * eij * P[i][k] - 0.02 * Q[k][j])
    Q[-1][0:2] = Q[-1][1:3] * 2.0  # (a slice after the row)
    return np.sum((R - P @ Q) ** 2)


def _weighted(W, b):
    return np.sum(np.tanh(W) * b)


def star_arguments_of_a_list_rebuilt_in_a_loop(W, b):
    """`params = [p * 0.9 for p in params]` in a loop, then `f(*params)`: a comprehension over a list of a
    length known now, without an `if`, has that length (min-char-rnn's parameter updates)."""
    params = [W, b]
    for _ in range(3):
        params = [p * 0.9 + 0.01 * np.sin(p) for p in params]
    return _weighted(*params) + _weighted(*[p ** 2 for p in params])


VECTOR_ACTIVATIONS = {"tanh": np.tanh, "sin": np.sin}


def activation_of_a_vector_named_by_a_default(x, kind="tanh"):
    return np.sum(VECTOR_ACTIVATIONS[kind](x) ** 2)


def activation_named_by_an_argument(W, x, activation="tanh", output="identity"):
    """A string argument naming the function to use, from a dict of the module's and from a display (the
    code is made for the string passed, again for another one)."""
    act = ACTIVATION_BY_NAME[activation]
    h = act(x @ W)
    final = {"identity": lambda z: z, "square": np.square}[output]
    return np.sum(final(h)) + np.sum(ACTIVATION_BY_NAME[activation](W) ** 2)


class LayerWithActivation:
    """An activation kept in an attribute: a lambda, a function passed in, or one named by a string."""

    def __init__(self, W, activation=None, name=None):
        self.W = W
        if name is not None:
            self.act = ACTIVATION_BY_NAME[name]
        elif activation is not None:
            self.act = activation
        else:
            self.act = lambda z: np.log1p(np.exp(z))

    def __call__(self, x):
        return self.act(x @ self.W)


def lambdas_kept_in_attributes(W, x):
    """Objects made here holding a lambda (or a function) in an attribute, called through it."""
    first = LayerWithActivation(W)
    second = LayerWithActivation(W, lambda z: z ** 3)
    third = LayerWithActivation(W, name="tanh")
    return np.sum(first(x) ** 2) + np.sum(second(x)) + np.sum(third(x) * first(x))


def shape_set_in_place(x, v):
    """`a.shape = (3, 1)`: the array reshaped where it is, as NumPy does."""
    column = x * v
    column.shape = (3, 1)
    grid = np.outer(v, x)
    grid.shape = (grid.size,)
    return np.sum(column @ column.T) + np.sum(grid ** 2)


def lists_of_numbers_with_arrays(x, v):
    """A list of numbers written where NumPy takes it as an array: `x * [1.0, 2.0, 3.0]` (not a repetition:
    x is an array), `x ** [1, 2, 3]`, `[...] - x`, and passed to NumPy functions (`np.hypot(x, [...])`,
    `np.matmul([[...]], x)`, `np.power([...], x)`)."""
    scaled = x * [1.0, 2.0, 3.0] + [0.5, -1.0, 2.0] * v
    powers = np.abs(x) ** [1, 2, 3] + [3.0, 2.0, 1.0] / np.exp(v) - ([1.0, 2.0, 3.0] - x) ** 2
    calls = np.hypot(x, [1.0, 2.0, 3.0]) + np.power([1.5, 2.0, 3.0], v) + np.arctan2([1.0, 2.0, 3.0], np.exp(x))
    return np.sum(scaled * powers) + np.sum(calls) + np.sum(np.matmul([[1.0, 2.0, 3.0]], np.outer(x, v)) ** 2) \
        + np.sum([0.5] * 3 * x)


def assignment_in_a_while_test(x, v):
    """`while (y := ...) < 1:`: y, set by the test, is used in the body and after the loop (the value of the
    last, failing, test); its derivative flows back through every test."""
    i = 0
    total = 0.0
    while (y := x[i] ** 2 + v[i] * total) < 1.0 and i < 2:
        total = total + y
        i += 1
    return total + y * v[0]


def builtins_and_itertools_as_written(x, v):
    """itertools.product and a set of constants looped over, zip(*rows), itertools.accumulate (sums and a
    function), filter, math.fsum, math.prod, divmod and complex(re, im)."""
    total = 0.0
    for i, j in itertools.product(range(3), range(2)):
        total = total + x[i] * v[j] * (j + 1)
    chosen = sum(x[i] ** 2 for i in range(3) if i in {0, 2})
    rows = [x, v ** 2, np.sin(x)]
    columns = sum(a * b + c for a, b, c in zip(*rows))
    running = itertools.accumulate(x * v)
    products = list(itertools.accumulate(v, lambda a, b: a * b, initial=1.0))
    kept = sum(filter(lambda t: t > -0.5, x * 2))
    nonzero = list(filter(None, [x[0], 0.0, v[1]]))
    whole, rest = divmod(x[2] * 3 + 5.0, 2.0)
    z = complex(x[0], v[1]) * complex(v[0], x[1])
    return (total + chosen + columns + sum(r ** 2 for r in running) + products[-1] + kept + sum(nonzero)
            + math.fsum([x[0], v[1] ** 2]) + math.prod([x[1], v[2], 2.0]) + rest * whole + abs(z) + z.real)


@dataclass
class Stack:
    """A dataclass holding a list of dataclass objects (its layers), called on an input."""
    layers: list = field(default_factory=list)

    def __call__(self, x):
        for layer in self.layers:
            x = np.tanh(x @ layer.W + layer.b)
        return x


def records_as_dicts_and_dataclasses_of_objects(x, v):
    """A dataclass made from a list of dataclass objects (Stack([Affine(...), ...])), dataclasses.asdict of
    one (and dataclasses.astuple), and a namedtuple's _asdict()."""
    model = Stack([Affine(np.outer(x, v), x), Affine(np.eye(3) * v, -x)])
    fields = dataclasses.asdict(Affine(np.outer(v, x), v ** 2))
    parts = dataclasses.astuple(Affine(np.outer(x, x), v))
    g = Gaussian(x, v)
    d = g._asdict()
    return np.sum(model(v) ** 2) + np.sum(fields["W"] @ fields["b"]) + np.sum(d["mean"] * d["log_std"]) * d["weight"] \
        + np.sum(parts[0] @ parts[1])


def items_of_held_arrays_set_in_loops(x, v):
    """`xs[t][k] = ...` and `d[key][j] += ...` inside loops, on arrays a list and a dict hold (min-char-rnn's
    one-hot rows, written in its loop): each pass sees the arrays as the passes before left them."""
    xs = [np.zeros(3) for _ in range(2)]
    for t in range(2):
        xs[t][t + 1] = x[t] * v[2]
        xs[t][0] = xs[t][t + 1] + v[t]
    d = {"a": np.zeros(3), "b": np.ones(3)}
    for key in ["a", "b"]:
        for j in range(3):
            d[key][j] = d[key][j] + x[j] * v[j]
    return np.sum(xs[0] * x) + np.sum(xs[1] ** 2) + np.sum(d["a"] * d["b"])


def lists_and_dicts_held_in_containers_changed(x, v):
    """rows[i][j] = v on a list of lists (the rows stay lists: rows[1] + rows[0] joins them), and
    params[name]["W"] = ... on a dict of dicts, in loops."""
    rows = [[0.0] * 3 for _ in range(2)]
    for i in range(2):
        for j in range(3):
            rows[i][j] = x[j] * v[i]
    joined = rows[1] + rows[0]
    params = {"l1": {"W": x, "b": 0.0}, "l2": {"W": v ** 2, "b": 1.0}}
    for name in ["l1", "l2"]:
        params[name]["W"] = params[name]["W"] * 0.5
        params[name]["b"] += np.sum(params[name]["W"])
    return (np.sum(np.array(joined) * np.arange(6.0)) + len(joined) * x[0] + sum(rows[0]) ** 2
            + params["l1"]["b"] * params["l2"]["b"])


def appends_to_held_lists_in_loops(x, v):
    """`hist["h"].append(h)` and `buckets[i % 2].append(...)` inside loops: lists a dict and a list hold,
    each pass appending to what the passes before left."""
    hist = {"loss": [], "h": []}
    h = x
    for t in range(3):
        h = np.tanh(h * v)
        hist["h"].append(h)
        hist["loss"].append(np.sum(h ** 2))
    buckets = [[], []]
    for i in range(3):
        buckets[i % 2].append(x[i] * v[i])
    return sum(hist["loss"]) + np.sum(hist["h"][0]) + sum(buckets[0]) * len(buckets[0]) + sum(buckets[1])


def mlp_with(params, x, nonlinearity=np.tanh):
    for W, b in params:
        x = nonlinearity(x @ W + b)
    return x


def function_valued_parameter(params, x, nonlinearity=np.tanh):
    """The differentiated function's own parameter is a function (autograd's examples pass `np.tanh`)."""
    return np.sum(mlp_with(params, x, nonlinearity) ** 2)


START = np.array([1.0, 2.0, -0.5])


def loop_from_a_global(x):
    """A loop variable starting at a module-level array: the loop must not reassign the global's name."""
    h = START
    for i in range(2):
        h = h * x + START
    return np.sum(h) + np.sum(START * x)


def star_parameters(*params, scale=2.0):
    """autograd-style `def loss(*params)`: any number of arrays, looped over and unpacked."""
    total = 0.0
    for k, p in enumerate(params):
        total = total + np.sum(np.tanh(p) ** 2) * (k + 1)
    first, *rest = params
    return scale * total + np.sum(first * params[-1]) + sum(np.sum(r) for r in rest)


def starred_unpacking(layers, x):
    """`first, *middle, last = layers` on a list argument (its length known only at run time)."""
    first, *middle, last = layers
    h = np.tanh(x * first)
    for m in middle:
        h = np.tanh(h * m)
    head, *tail = [h, last, first]
    return np.sum(head * tail[0]) + len(tail)


def scatter_adds(E, tokens, W):
    """np.add.at into arrays the function made, once and in a loop (repeated indices add up)."""
    sums = np.zeros((2, E.shape[1]))
    np.add.at(sums, [0, 1, 0], E[tokens])
    total = np.zeros(E.shape[1])
    for k in range(2):
        np.add.at(total, [0, 0, 1], sums[k] * W[k])
    np.subtract.at(total, [1, 1], W[0, 0])  # (it was run as written, its effect on the gradient lost)
    counts = np.zeros(3)
    np.maximum.at(counts, [0, 2, 2], [1.0, 2.0, 3.0])  # of values without derivatives: run as written
    return np.sum(np.tanh(sums) * W) + np.sum(total ** 2) + np.sum(counts)


class Running:
    def __init__(self):
        self.stats = {"mean": None, "steps": 0}

    def update(self, x):
        if self.stats["mean"] is None:
            self.stats["mean"] = np.zeros_like(x)
        self.stats["mean"] = 0.9 * self.stats["mean"] + 0.1 * x
        return self.stats["mean"]


def attribute_dict_items(x, W):
    """numpy-ml's BatchNorm1D style: a dict in an attribute, its items set on first use, then updated."""
    r = Running()
    h = np.tanh(x @ W + r.update(x))
    h = np.tanh(h @ W + r.update(h))
    return np.sum(h ** 2) + np.sum(r.stats["mean"])


def running_in_a_loop(x, W):
    """The same object updated by a method called in a loop: the loop carries the attribute it sets."""
    r = Running()
    h = x
    for k in range(3):
        h = np.tanh(h @ W + r.update(h))
    return np.sum(h ** 2)


class Accumulator:
    def __init__(self, h):
        self.h = h
        self.scale = 2.0

    def step(self, x):
        self.h = np.tanh(self.h * x + self.scale)
        return self.h

    def reset_to(self, x):
        self.h = 3.0 * x


def read_then_set_by_a_method_in_a_loop(x):
    """The loop reads `a.h`, then a method it calls sets `a.h`: each pass reads the last pass's value."""
    a = Accumulator(x)
    total = 0.0
    for k in range(3):
        total = total + np.sum(a.h * 2.0)
        a.reset_to(x * (k + 1))
    return total + np.sum(a.h)


def methods_in_loops_and_branches(x):
    """Attributes set by methods called in nested loops, a while loop and a branch, read after each."""
    a = Accumulator(x)
    s = 0.0
    for i in range(2):
        for j in range(2):
            s = s + np.sum(a.step(x[::-1]))
    k = 0
    while k < 2:
        y = a.h
        a.step(x)
        k += 1
    if np.sum(x) > 0:
        a.step(x)
    return s + np.sum(y * a.h)


def dict_attribute_carried_by_a_loop(x):
    """An attribute holding a dict, replaced in the loop: its items are not the ones from before the loop."""
    r = Accumulator(x)
    r.stats = {"m": None, "n": 0}
    for k in range(3):
        if r.stats["m"] is None:
            r.stats = {"m": x, "n": 1}
        else:
            r.stats = {"m": r.stats["m"] * np.sin(x), "n": r.stats["n"] + 1}
    return np.sum(r.stats["m"]) * r.stats["n"]


class Counter:
    def __init__(self):
        self.derived = {"n_steps": 0, "total": 0.0}

    def forward(self, x, W):
        self.derived["n_steps"] += 1
        h = np.tanh(x @ W)
        self.derived["total"] += np.sum(h)
        return h


def counters_in_a_dict(x, W):
    """numpy-ml's `self.derived_variables["n_timesteps"] += 1`: number items of a dict rebound."""
    c = Counter()
    counts = {"calls": 0}
    h = x
    for t in range(3):
        h = c.forward(h, W)
        counts["calls"] += 1
    return c.derived["total"] / c.derived["n_steps"] + counts["calls"] * np.sum(h)


def array_item_added_in_place(x):
    grads = {"W": np.zeros(3)}
    for k in range(2):
        grads["W"] += x
    return np.sum(grads["W"])


def dict_rebuilt_in_branches(x):
    """A dict's items known in one branch are not known in the other (nor in the loop's next pass)."""
    d = {"m": None, "n": 0}
    for k in range(3):
        if d["m"] is None:
            d = {"m": x, "n": 1}
        else:
            d = {"m": d["m"] * np.sin(x), "n": d["n"] + 1}
    return np.sum(d["m"]) * d["n"]


class Doubler:
    def f(self, x):
        return x * 2.0


class Tripler:
    def f(self, x):
        return x * 3.0


def object_chosen_by_a_branch(x):
    if np.sum(x) > 0:
        o = Doubler()
    else:
        o = Tripler()
    return np.sum(o.f(x))


def object_replaced_in_a_loop(x):
    o = Doubler()
    s = 0.0
    for k in range(2):
        s = s + np.sum(o.f(x))
        o = Tripler()
    return s


def _accumulate(total, x):
    total += x


def _accumulate_twice(total, x):
    _accumulate(total, x * 2.0)
    _accumulate(total, np.sin(x))


def _added(s, x):
    s += x
    return s


def helpers_adding_in_place(x):
    """`total += x` in a helper (two deep, in a loop) changes the caller's array; on a number it does not."""
    h = np.zeros(3)
    for k in range(3):
        _accumulate_twice(h, x * k)
    s = np.sum(x)
    r = _added(s, x)
    return np.sum(h ** 2) + np.sum(r) * s


def view_of_an_array_a_helper_changes(x):
    h = np.zeros(3)
    v = h[:2]
    _accumulate(h, x)
    return np.sum(v)


class Cell:
    def __init__(self):
        self.derived_variables = {"A": [], "n": 0}

    def forward(self, x, W):
        As = self.derived_variables["A"]
        if len(As) == 0:
            As.append(np.zeros_like(x))
        h = np.tanh(As[-1] @ W + x)
        self.derived_variables["A"].append(h)
        self.derived_variables["n"] += 1
        return h


def lists_in_a_dict_attribute(x, W):
    """numpy-ml's cells: lists held in a dict attribute, appended through an alias and directly."""
    cell = Cell()
    for t in range(3):
        cell.forward(x[t], W)
    return sum(np.sum(a ** 2) for a in cell.derived_variables["A"]) / cell.derived_variables["n"]


def stale_list_alias(x):
    d = {"A": []}
    As = d["A"]
    d["A"].append(x)
    return np.sum(As[0])


def writes_into_arrays_held_in_a_dict(x, W):
    """min-char-rnn's `xs[t][inputs[t]] = 1`, with a differentiated value written (and `+=`) as well."""
    xs, hs = {}, {}
    hs[-1] = np.zeros(3)
    for t in range(3):
        xs[t] = np.zeros(3)
        xs[t][t] = 1.0
        xs[t][(t + 1) % 3] = x[t] * 2.0
        xs[t][0] += np.sin(x[t])
        hs[t] = np.tanh(W @ xs[t] + hs[t - 1])
    return np.sum(hs[2] ** 2)


def alias_of_an_array_written_in_a_dict(x):
    xs = {0: np.zeros(3)}
    a = xs[0]
    xs[0][1] = x[0]
    return np.sum(a * x)


def reads_another_modules_data(x):
    """`other_module.SCALE` (an array, read when the code runs) and a helper using that module's `re`."""
    return np.sum(x * other_module.SCALE) + np.sum(other_module.act(x, "scale=2.5") ** 2)


class Scheduled:
    def __init__(self, w):
        import math  # numpy-ml's optimizers import inside __init__
        from .other_module import SCALE as scale
        self.w = w * math.pi
        self.scale = scale

    def forward(self, x):
        return np.tanh(x * self.w) * self.scale


def imports_inside_functions(x):
    from os import path
    layer = Scheduled(x)
    return np.sum(layer.forward(x) ** 2) if path.sep else 0.0


class TanhAct:
    def __call__(self, z):
        return np.tanh(z)


class ReLUAct:
    def __call__(self, z):
        return np.maximum(z, 0.0)


def make_activation(name):
    """numpy-ml's ActivationInitializer: a string to an object."""
    if name == "relu":
        return ReLUAct()
    return TanhAct()


class Optimizer:
    def __init__(self, lr=0.01):
        self.hyperparameters = {"lr": lr * 1.0}


class NormLayer:
    def __init__(self, W, act="tanh", eps=1e-5):
        self.act_fn = make_activation(act)
        self.optimizer = Optimizer()
        self.eps = eps
        self.parameters = {"W": W}

    @property
    def hyperparameters(self):  # numpy-ml's layers expose settings as a property
        return {"epsilon": self.eps}

    @property
    def scaled_W(self):
        return self.parameters["W"] * 2.0

    def forward(self, x):
        ep = self.hyperparameters["epsilon"]
        z = x @ self.scaled_W
        return self.act_fn((z - z.mean()) / np.sqrt(z.var() + ep))


def pad(x, p):
    if isinstance(p, str):  # "same": works the width out, then calls itself once (not here)
        return pad(x, 1)
    return np.pad(x, p)


def layer_objects_as_numpy_ml_writes_them(x, W):
    """An activation object from a factory in an attribute, properties, `.hyperparameters` on two unrelated
    classes, isinstance on a constant deciding a branch that would recurse, `shape += (...)` on a tuple."""
    layer = NormLayer(W)
    relu = NormLayer(W, act="relu")
    shape = x.shape[:1]
    shape += (x.shape[1],)
    h = layer.forward(np.reshape(x, shape)) + relu.forward(x)
    return np.sum(pad(h, 1) ** 2)


def _egrad(fun):
    def gradfun(x):
        out, pullback = tg.vjp(fun, x)
        return pullback(np.ones_like(out))
    return gradfun


def _tanh(x):
    return np.tanh(x)


_TANH_3 = _egrad(_egrad(_egrad(_tanh)))  # the third derivative, as autograd's tanh.py builds it


def closures_nested(x):
    """The same closure (gradfun) nested in itself is not recursion."""
    return np.sum(_TANH_3(x) * x)


class LazyDense:
    """numpy-ml's layers: parameters made on the first forward call, kept in a dict attribute."""

    def __init__(self, n_out):
        self.n_out = n_out
        self.is_initialized = False
        self.parameters = {}

    def _init_params(self, n_in):
        self.parameters = {"W": np.full((n_in, self.n_out), 0.3), "b": np.zeros((1, self.n_out))}
        self.is_initialized = True

    def _fwd(self, X):
        return np.tanh(X @ self.parameters["W"] + self.parameters["b"])

    def forward(self, X):
        if not self.is_initialized:
            self._init_params(X.shape[1])
        return self._fwd(X)


LAYER = LazyDense(2)
LAYER.forward(np.ones((1, 3)))  # built and initialised once, outside the differentiated functions


def global_layer_forward(X):
    """A layer built outside, its lazy initialisation a branch decided when the code runs."""
    return np.sum(LAYER.forward(X) ** 2)


def global_layer_parameters_set(W, b, X):
    """`LAYER.parameters["W"] = W`: the global layer's dict, with the items replaced."""
    LAYER.parameters["W"] = W
    LAYER.parameters["b"] = b
    return np.sum(LAYER.forward(X) ** 2)


DEFAULTS = {"a": np.array([1.0, -2.0, 0.5]), "b": np.array([0.3, 0.2, 0.1])}


def dicts_copied_and_merged(b, x):
    """`p = dict(DEFAULTS); p["b"] = b` and `{**DEFAULTS, "b": b}`: copies with an entry replaced."""
    p = dict(DEFAULTS)
    p["b"] = b * x
    q = {**p, "a": np.sin(x)}
    return np.sum(p["a"] * p["b"] ** 2) + np.sum(q["a"] * q["b"])


class _Initializer:
    """A weight initializer object, as numpy-ml's layers make one inside `_init_params`."""

    def __init__(self, scale):
        self.scale = scale

    def __call__(self, shape):
        return np.full(shape, self.scale)


class InitializedDense:
    """A lazy layer whose parameters come from an initializer object made in the lazy branch."""

    def __init__(self, n_out):
        self.n_out = n_out
        self.n_in = None
        self.is_initialized = False
        self.parameters = {"W": None}

    def _init_params(self):
        init_weights = _Initializer(0.2)  # made in the branch: its attributes exist only there
        self.parameters = {"W": init_weights((self.n_in, self.n_out))}
        self.is_initialized = True

    def forward(self, X):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        return np.tanh(X @ self.parameters["W"])


DENSE = InitializedDense(2)
DENSE.forward(np.ones((1, 3)))


def lazy_layer_with_an_initializer_object(W, X):
    """An object made inside a branch taken when the code runs (the layer's lazy init) sets attributes."""
    DENSE.parameters["W"] = W
    return np.sum(DENSE.forward(X) ** 2)


def _crop(x, size):
    """numpy-ml's padding helpers: an int widened to a tuple in one branch, then tested for a tuple."""
    if isinstance(size, int):
        size = (size, size)
    if isinstance(size, tuple):
        x = x[size[0]:len(x) - size[1]]
    return x


class _Cropper:
    def __init__(self, size):
        self.size = size


CROPPERS = [_Cropper(1), _Cropper([0, 1])]  # a list is neither an int nor a tuple: that one does not crop


def container_made_in_one_branch_only(x):
    """After `if ...: size = (size, size)`, `size` is a tuple on one path only: `isinstance` is asked when
    the code runs, not decided from the branch that made the tuple."""
    return sum(np.sum(_crop(x, c.size) ** 2) for c in CROPPERS) + np.sum(_crop(x, CROPPERS[1].size) ** 3)


class _Named:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class DescribedLayer:
    """numpy-ml's layers describe their activation by its string (`str(self.act_fn)`) to pick an init."""

    def __init__(self, act):
        self.act_fn = _Named(act)
        self.parameters = {"W": np.full((3, 2), 0.4)}

    def forward(self, X):
        gain = GAINS[str(self.act_fn)]
        return np.tanh(gain * X @ self.parameters["W"])


GAINS = {"tanh": 5.0 / 3.0, "relu": 2.0 ** 0.5}
DESCRIBED = DescribedLayer("tanh")


def other_attributes_of_a_layer_holding_parameters(W, X):
    """Once `.parameters` holds W, `str(self.act_fn)` reads another attribute: no derivative in it."""
    DESCRIBED.parameters["W"] = W
    return np.sum(DESCRIBED.forward(X) ** 2)


def _pad_rows(X, pad, kernel=None):
    """numpy-ml's pad1D: an int or a pair of widths pads; "same" or "causal" works the widths out and calls
    itself once with them (ended when transforming: a tuple is never "same")."""
    p = pad
    if isinstance(p, int):
        p = (p, p)
    if isinstance(p, tuple):
        X_pad = np.pad(X, ((p[0], p[1]), (0, 0)), mode="constant")
    if p in ["same", "causal"] and kernel:
        total = kernel - 1
        p = (total, 0) if p == "causal" else (total // 2, total - total // 2)
        X_pad, p = _pad_rows(X, p)
    return X_pad, p


class RowConv:
    def __init__(self, pad, kernel=3):
        self.pad = pad
        self.kernel = kernel
        self.parameters = {"W": np.linspace(-1.0, 1.0, kernel)}

    def forward(self, X):
        X_pad, _ = _pad_rows(X, self.pad, self.kernel)
        W = self.parameters["W"]
        n = X_pad.shape[0] - self.kernel + 1
        return sum(W[k] * X_pad[k:k + n] for k in range(self.kernel))


SAME_CONV, CAUSAL_CONV, WIDE_CONV = RowConv("same"), RowConv("causal"), RowConv((2, 1))


def recursion_ended_when_transforming(W, X):
    """A helper calling itself once, on a value the first call worked out, under layers whose padding
    setting (read when the code runs) takes either path."""
    SAME_CONV.parameters["W"] = W
    total = np.sum(SAME_CONV.forward(X) ** 2) + np.sum(np.tanh(CAUSAL_CONV.forward(X)))
    return total + np.sum(WIDE_CONV.forward(X) * X[0])


class KeepingLayer(DescribedLayer):
    """A layer that keeps its input (numpy-ml's `self.X.append(X)`): the layer then holds a derivative."""

    def forward(self, X):
        self.last_input = X
        return super().forward(X)


FIRST_DENSE, SECOND_DENSE = DescribedLayer("tanh"), KeepingLayer("relu")
SECOND_DENSE.parameters["W"] = np.full((2, 2), -0.3)


def two_layers_of_one_class(W1, W2, X):
    """An MLP of two global layers of one class, each given its parameters: `self.parameters` in the
    second's forward is not the first's (they are different objects, checked again when the code runs)."""
    FIRST_DENSE.parameters["W"] = W1
    SECOND_DENSE.parameters["W"] = W2
    return np.sum(SECOND_DENSE.forward(FIRST_DENSE.forward(X)) ** 2)


class _Options:
    def __init__(self, first_only):
        self.first_only = first_only


CELL_OPTIONS = _Options(first_only=True)


def conditional_expression_of_a_tuple_or_its_item(x):
    """`out[0] if lstm else out` (numpy-ml's cells return a pair or an array): the result is a tuple on one
    path only, so `isinstance` on it is asked when the code runs, and `+` / `*` are not taken for a tuple's."""
    pair = (np.sin(x), np.cos(x))
    h = pair[0] if CELL_OPTIONS.first_only else pair
    g = CELL_OPTIONS.first_only and pair  # `and` / `or` too: a tuple or a bool
    if isinstance(h, tuple):
        return np.sum(h[0] * h[1])
    return np.sum(h ** 2) + np.sum(g[1] * 2) + np.sum(h * 2)


def _scaled_fill(shape, gain):
    return np.full(shape, 0.1 * gain)


class _WeightInit:
    """numpy-ml's WeightInitializer: the function it calls is picked in a branch on its mode."""

    def __init__(self, act, mode="glorot"):
        self.act, self.mode = act, mode
        if mode == "glorot":
            self._fn = _scaled_fill
        else:
            self._fn = functools.partial(_scaled_fill, gain=1.0)

    def __call__(self, shape):
        if self.mode == "glorot":
            return self._fn(shape, 5.0 / 3.0 if self.act == "tanh" else 1.0)
        return self._fn(shape)


class GatedCell:
    """A recurrent cell as numpy-ml writes one: lazy parameters from two initializer objects, its state in
    a dict of lists, and `flush_gradients` resetting every list in a loop over that dict."""

    def __init__(self, n_out, init="glorot"):
        self.n_out, self.init = n_out, init
        self.is_initialized = False
        self.X = []
        self.parameters = {}
        self.derived_variables = {"A": [], "n_timesteps": 0}

    def _init_params(self, n_in):
        init_gate = _WeightInit("sigmoid", mode=self.init)
        init_act = _WeightInit("tanh", mode=self.init)
        shape = (n_in + self.n_out, self.n_out)
        self.parameters = {"Wg": init_gate(shape), "Wc": init_act(shape)}
        self.is_initialized = True

    def flush_gradients(self):
        self.X = []
        for k, v in self.derived_variables.items():
            self.derived_variables[k] = []
        self.derived_variables["n_timesteps"] = 0

    def forward(self, Xt):
        if not self.is_initialized:
            self._init_params(Xt.shape[1])
        self.derived_variables["n_timesteps"] += 1
        As = self.derived_variables["A"]
        A_prev = As[-1] if len(As) else np.zeros((Xt.shape[0], self.n_out))
        Z = np.hstack([A_prev, Xt])
        At = np.tanh(Z @ self.parameters["Wc"]) / (1 + np.exp(-(Z @ self.parameters["Wg"])))
        self.derived_variables["A"].append(At)
        self.X.append(Xt)
        return At, Z


GATED = GatedCell(2)
GATED.forward(np.ones((1, 3)))


def _run_steps(X):
    """A helper reading the same global cell: one object under two names in generated code."""
    total = 0.0
    for t in range(X.shape[2]):
        At, _ = GATED.forward(X[:, :, t])
        total = total + np.sum(At * np.cos(t))
    return total


def cell_flushed_then_run_by_a_helper(Wg, X):
    GATED.flush_gradients()
    GATED.parameters["Wg"] = Wg
    return _run_steps(X)


class SumLayer:
    """numpy-ml's Add: keeps what it saw in lists it never resets (a layer made once, called many times)."""

    def __init__(self):
        self.X = []
        self.derived_variables = {"sum": []}

    def forward(self, X, retain_derived=True):
        out = X[0].copy()
        for i in range(1, len(X)):
            out += X[i]
        if retain_derived:
            self.X.append(X)
            self.derived_variables["sum"].append(out)
        return np.tanh(out)


SUM_LAYER = SumLayer()


def global_layer_appending_to_its_lists(a, b):
    """`self.X.append(X)` and `self.derived_variables["sum"].append(out)` on a layer made before: its lists,
    with the items added, become the attributes, and what it kept is read back."""
    y = SUM_LAYER.forward([a, b * 2.0])
    return np.sum(y ** 2) + np.sum(SUM_LAYER.derived_variables["sum"][-1] * a) + np.sum(SUM_LAYER.X[-1][1])


class _Schedule:
    def __init__(self, lr=None):
        self.lr = lr

    def __call__(self):
        return self.lr


class _Optimizer:
    def __init__(self, lr=0.01):
        from cases.python_functions import _Schedule  # numpy-ml's OptimizerBase imports here (a cycle)
        self.lr_scheduler = _Schedule(lr=lr)()


class OptimizedLayer:
    def __init__(self, W):
        self.optimizer = _Optimizer()
        self.W = W

    def forward(self, X):
        return np.tanh(X @ self.W) * (self.optimizer.lr_scheduler * 100.0)


def layer_made_with_an_optimizer_inside(W, X):
    """A layer made in the function whose optimizer's __init__ imports the class it makes, then calls it."""
    return np.sum(OptimizedLayer(W).forward(X) ** 2)


class _Sampler:
    """numpy-ml's DiscreteSampler: rejection sampling that calls itself until its draws are all different."""

    def __init__(self, n):
        self.n = n
        self.rng = np.random.default_rng(0)

    def sample(self, k):
        draws = [int(i) for i in self.rng.integers(0, self.n, k)]
        unique = sorted(set(draws))
        while len(draws) != len(unique):
            draws = unique + list(self.sample(len(draws) - len(unique)))
            unique = sorted(set(draws))
        return np.array(draws)


SAMPLER = _Sampler(5)
NEGATIVES = np.array([1, 3])


def recursion_run_as_written_and_results_written_into_arrays(W, X):
    """numpy-ml's NCELoss: the sampler's recursion (ended only when it runs) is called as written, where no
    derivative flows through it; `np.clip(p, lo, hi, p)` and `np.multiply(q, 0.5, out=q)` write into arrays
    the function made, and `np.clip(X, -2, 2, X)` into an argument (a copy, in generated code)."""
    negatives = NEGATIVES
    if negatives is None:  # a global: decided when the code runs
        negatives = SAMPLER.sample(2)
    np.clip(X, -2.0, 2.0, X)
    Z = X @ W[negatives].T
    p = 1 / (1 + np.exp(-Z))
    np.clip(p, 1e-3, 1 - 1e-3, p)
    q = np.exp(Z)
    np.multiply(q, 0.5, out=q)
    return -np.sum(np.log(p)) + np.sum(q)


def ufunc_results_written_through_a_one_tuple_out(x):
    """`np.exp(y, out=(y,))`: a ufunc's `out` as a tuple of its one output (NumPy's own spelling, in its
    documentation), returning that array; into a row too."""
    y = x * 2.0
    np.exp(y, out=(y,))
    M = np.zeros((2, 3))
    r = np.tanh(x, out=(M[1],))
    return np.sum(y * x) + np.sum(M * r)


def text_made_from_differentiated_values(x):
    """A training script's messages: an f-string with a format, `.format`, `%`, `str`, `repr` and `format` of
    differentiated values make text, which has no derivative (its length steers a branch here)."""
    loss = np.sum(x ** 2)
    message = f"loss {loss:.3f} at {x[0]:+.2e}"
    lines = ["step {}: {:.4f}".format(1, loss), "%d: %.3f" % (2, loss), "%.2f" % loss, str(loss), repr(x[1]),
             format(loss, ".1f")]
    scale = 2.0 if len(message) + sum(len(line) for line in lines) > 20 else 3.0
    return loss * scale + np.sum(np.sin(x)) * len(message) + x[2] * len(lines[1])  # (fixed widths: no jumps)


def results_written_into_an_array_other_names_show(x):
    """`out=y` where another name holds the same array (`z = y`) or a view of it (`v = y[:1]`): NumPy changes
    what they show too (as `b = a; a += d` does)."""
    y = x * 2.0
    z = y
    np.exp(y, out=y)
    w = x * 3.0
    v = w[:2]
    np.clip(w, -0.4, 0.4, out=w)
    u = x * 1.5
    first = u[0:1]
    u.sort()
    return np.sum(z * x) + np.sum(y) + np.sum(v ** 2) + np.sum(w) + np.sum(first * u)


def _log_likelihood(params, data, scale=1.0):
    """autograd's hmm_em: called on a list of sequences, it maps itself over them (the list's items are
    known only when the code runs, so the transform cannot tell where the recursion ends)."""
    if isinstance(data, list):
        return sum(map(functools.partial(_log_likelihood, params, scale=scale), data))
    log_start, log_step = params
    log_alpha = log_start
    for y in data:
        log_alpha = _logsumexp(log_alpha[:, None] + log_step, axis=0) + np.log1p(y ** 2)
    return scale * _logsumexp(log_alpha)


def _logsumexp(a, axis=None):
    top = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(a - top), axis=axis))


def _folded(x, depth):
    """A recursion as deep as an argument says: each call's derivative is tapegen's own, made when it runs."""
    if depth <= 0:
        return np.sin(x)
    return _folded(np.tanh(x) * x, depth - 1) + 0.5 * x


def _tree_sum(xs):
    """A recursion on a list's halves, of a list as long as the array it was made from: the cotangent of a
    half is a list of numbers, held sparse by gradient code differentiated again."""
    if len(xs) == 1:
        return xs[0]
    mid = len(xs) // 2
    return np.tanh(_tree_sum(xs[:mid])) + _tree_sum(xs[mid:])


def recursion_ended_when_the_code_runs(log_start, log_step, x):
    """Recursions whose end the transform cannot see: each call runs as written and is differentiated by
    tapegen's own code for the function when the code runs (in every mode, and again for second order)."""
    data = [np.array([0.5, -1.0]), np.array([2.0]), np.array([0.1, 0.2, 0.3])]
    halves = _tree_sum([x[i] for i in range(len(x))])
    return _log_likelihood([log_start, log_step], data, scale=0.5) + np.sum(_folded(x, len(data) + 7) ** 2) + \
        np.sum(halves)


def _scaled_sum(x, y, scale=1.0, power=2):
    return np.sum(np.sin(x) * y ** power) * scale


def _with_arguments(fun, args, kwargs, argnum):
    """A wrapper as autograd's unary_to_nary writes it: the other arguments and keywords kept in its closure."""
    def unary(x):
        a = list(args)
        a[argnum] = x
        return fun(*a, **kwargs)
    return unary


def _with_arguments_at(fun, args, kwargs, argnums):
    def unary(xs):
        a = list(args)
        for i, xi in zip(argnums, xs):
            a[i] = xi
        return fun(*a, **kwargs)
    return unary


SPREAD = (np.array([0.5, -1.0, 2.0]), 1.5)
OPTIONS = {"power": 3}
_AT_0 = _with_arguments(_scaled_sum, (None, np.array([1.0, 2.0, -0.5])), {"scale": 2.0, "power": 3}, 0)
_AT_1 = _with_arguments_at(_scaled_sum, (None, None, 0.5), {}, (0, 1))


def globals_spread_as_arguments(x):
    """`f(*ARGS)`, `f(x, *ARGS[1:])`, `f(..., **OPTIONS)` with a tuple and dict of the module."""
    return _scaled_sum(*SPREAD) * np.sum(x) + _scaled_sum(x, *SPREAD[:1], **OPTIONS)


def closures_spread_as_arguments(x, y):
    """Closures holding the other arguments (`fun(*a, **kwargs)` after `a[argnum] = x`), one argument and two."""
    return _AT_0(x) + _AT_1((x, y))


def _sin_times(x):
    return np.sin(x) * x


def pullback_called_from_the_call(x, v):
    """`tg.vjp(f, x)[1](v)`: the pullback taken from the call's result and called at once, or by index."""
    pulled = tg.vjp(_sin_times, x)
    return np.sum(tg.vjp(_sin_times, x)[1](v) ** 2) + np.sum(pulled[1](v) * x)


def sorted_with_a_key(params, xs):
    """`sorted(d.items(), key=operator.itemgetter(0))` as autograd's tests write it, and `key=np.sum`."""
    import operator
    total = 0.0
    for i, (name, value) in enumerate(sorted(params.items(), key=operator.itemgetter(0), reverse=True)):
        total = total + np.sum(np.sin(value)) * (i + 1.0)
    ranked = sorted(xs, key=np.sum)
    return total + np.sum(np.stack(ranked) * np.arange(1.0, 4.0)[:, None] ** 2)


def items_without_a_derivative(x, df):
    """`a = [x, df]` then `stats.t.cdf(*a)`: only `a[0]` carries a derivative, so t.cdf needs no rule in df;
    `b = list(CONSTANTS); b[0] = x` and a dict item replaced by a constant too."""
    from scipy import stats
    a = [x, df]
    b = list(_T_ARGS)
    b[0] = np.sin(x)
    d = {"x": x, "df": df}
    d["df"] = 4.0
    return np.sum(stats.t.cdf(*a)) + np.sum(stats.t.logpdf(*b)) + np.sum(stats.t.cdf(d["x"], d["df"]))


_T_ARGS = (None, 3.5, 0.2)


# --- functions and objects set inside loops and branches, closures, defaults ------------------------

def functions_set_in_loops_and_branches(W, x):
    """A dict and a tuple of functions made in a loop body, a loop over functions in it, lambdas in a
    branch: each pass or branch calls the ones it set."""
    h = x @ W
    for k in range(2):
        acts = {"tanh": np.tanh, "soft": lambda z: z / (1.0 + z * z)}
        act = acts["soft"]
        h = act(h) + acts["tanh"](h)
        for f in (np.sin, relu):
            h = f(h) * 0.5 + h
    if np.sum(h) > 0.0:
        scale = lambda z: 2.0 * z
        h = scale(h)
    else:
        fs = [np.cos, lambda z: z * 3.0]
        h = fs[1](h) + fs[0](h)
    return np.sum(h ** 2)


def closures_read_names_when_called(x):
    """A lambda or nested def reads the names it closes over when it is called, as Python does: `w` as
    rebound after the lambda was made, `b` assigned after the def."""
    w = x * 2.0
    scaled = lambda z: z * w
    w = np.sin(w)

    def shifted(z):
        return z + w * b
    b = x[0]
    return np.sum(scaled(x)) + np.sum(shifted(x) ** 2)


class Linear:
    def __init__(self, W, act=np.tanh):
        self.W = W
        self.act = act

    def forward(self, h):
        return self.act(h @ self.W)


def layers_in_a_list(W1, W2, x):
    """Objects of one class whose attributes hold arguments, in a list grown by append: looped over and
    indexed, each is the object made (its `.W` known)."""
    layers = [Linear(W1), Linear(W2, act=np.sin)]
    layers.append(Linear(W2.T * 0.5))
    h = x
    for layer in layers:
        h = layer.forward(h)
    return np.sum(h ** 2) + np.sum(layers[0].forward(x))


ACTIVATIONS_OF_ONE_CLASS = [Scaled(0.5), Scaled(-1.5)]


def _with_defaults(p, act=Shifted(Scaled(2.0)), weights=np.array([1.0, -2.0, 0.5])):
    return act(p) * weights


def module_objects_and_object_defaults(x):
    """A module's list of objects of one class, looped over and indexed; a helper whose defaults are an
    object of the user's (called) and an array."""
    h = x
    for act in ACTIVATIONS_OF_ONE_CLASS:
        h = act.fn(h) + h
    return np.sum(h) + np.sum(ACTIVATIONS_OF_ONE_CLASS[1].fn(x)) + np.sum(_with_defaults(x))


def function_chosen_by_a_branch(x):
    if x[0] > 0.0:
        act = lambda z: np.sin(z)
    else:
        act = np.cos
    return np.sum(act(x))


def function_read_before_a_pass_sets_it(x):
    act = np.tanh
    for k in range(2):
        x = act(x)
        act = np.sin
    return np.sum(x)


def list_of_objects_appended_through_another_name(W1, x):
    layers = [Linear(W1)]
    same = layers
    layers.append(Linear(W1.T))
    return sum(np.sum(layer.forward(x)) for layer in same)


def objects_of_another_class_appended_in_a_loop(x):
    """The list holds a Doubler and, from the first pass on, Triplers: its items' class is not one."""
    layers = [Doubler()]
    for k in range(2):
        layers.append(Tripler())
        for layer in layers:
            x = layer.f(x)
    return np.sum(x)


def objects_of_one_class_appended_in_a_loop(x):
    """A list empty before a loop that appends objects of one class: every item is of that class after it."""
    layers = []
    for k in range(3):
        layers.append(Doubler())
    layers = layers + [Doubler()]
    h = x
    for layer in layers:
        h = np.sin(layer.f(h))
    return np.sum(h)


def names_holding_a_function_or_an_array(x):
    """`fs` holds None, an array on one path, then a function each pass: each read sees the one set; a
    frozen distribution made in a loop body is called there."""
    from scipy import stats
    fs = None
    total = 0.0
    for k in range(2):
        if x[0] > 0:
            fs = x * 2.0
            total = total + np.sum(fs)
        fs = np.sin
        x = fs(x)
        d = stats.norm(x[0], 2.0)
        total = total + np.sum(d.logpdf(x))
    return total + np.sum(x)


def function_or_array_after_a_branch(x):
    for k in range(2):
        fs = np.sin
        x = fs(x)
        if x[0] > 0:
            fs = x * 2.0
        x = x + fs
    return np.sum(x)


def keyword_parameters(x, *rest, scale=1.0, **options):
    """`def f(x, *rest, scale=1.0, **options)` differentiated itself: each value of **options an argument of
    its own, named by its keyword (autograd's hessian_vector_product differentiates `(*args, **kwargs)`)."""
    total = np.sum(np.sin(x) * scale)
    for r in rest:
        total = total + np.sum(r ** 2)
    return total * options.get("weight", 1.0) + np.sum(options["bias"] * x)


def starred_displays(x, xs):
    """`[x, *xs, 2 * x]` of a list whose length the function does not fix, and `(*parts[1:], np.sin(x))`."""
    parts = [x, *xs, 2.0 * x]
    more = (*parts[1:], np.sin(x))
    return np.sum(np.stack(parts) ** 2) + np.sum(np.stack(more) * np.arange(1.0, len(more) + 1.0)[:, None])


_OFFSETS = np.arange(3.0)


def small_numpy_idioms(x, W):
    """`np.r_[x, c, 1:4, 0:1:3j]` (slices as the ranges NumPy reads), `dict(pairs, b=...)`, an integer cast
    used as an index (`np.int64(...)`), np.select's conditions and np.pad's widths from a list of arguments."""
    joined = np.r_[x, _OFFSETS, 1:4, 0:1:3j]
    d = dict([("a", x)], b=x * 2.0)
    rows = W[np.int64(np.floor(np.abs(W[:, 0]) * 0.0 + np.array([0.5, 1.5, 0.5])))]
    args = [[x > 0.0, x < -0.5], [x, x ** 2], 0.25]
    chosen = np.select(*args)
    padded = np.pad(W, ((1, 0), (0, 2)))
    return np.sum(joined ** 2) + np.sum(d["a"] * d["b"]) + np.sum(rows ** 2) + np.sum(chosen * x) \
        + np.sum(padded ** 2)


def _outer_and_norm(x):
    return np.sin(np.outer(x, x)) + np.cos(np.dot(x, x))


def jacobian_of_a_jacobian(x):
    """`tg.jacobian(tg.jacobian(f))(x)` inside a differentiated function (autograd's test_jacobian)."""
    return np.sum(np.sin(tg.jacobian(tg.jacobian(_outer_and_norm))(x)))


def late_bound_closures(x):
    """A lambda or def reads what its names hold when it is called, as Python's closures do: `x` rebound
    after the lambda was made, `y` assigned after it; also through a transform of a local def."""
    g = lambda: np.sum(x * 2.0)  # noqa: E731
    x = x + 1.0
    h = lambda: np.sum(y * x)  # noqa: E731
    y = np.sin(x)

    def scaled(v):
        return np.sum(v * x)
    x = x * 3.0
    return g() + h() + np.sum(tg.grad(scaled)(x) * x)


def _t_cdf(x, df):
    from scipy import stats
    return stats.t.cdf(x, df)


_CDF_AT_0 = _with_arguments(_t_cdf, (None, 3.5), {}, 0)


def item_chosen_by_a_closure_int(x):
    """`a[argnum] = x` with argnum an int of the wrapper's closure: the item that moves is known (df needs no
    rule), and the generated code checks argnum is still 0."""
    return np.sum(_CDF_AT_0(x) ** 2)


def _t_cdf_located(x, df, loc):
    from scipy import stats
    return stats.t.cdf(x, df, loc)


_CDF_AT_0_2 = _with_arguments_at(_t_cdf_located, (None, 3.5, None), {}, (0, 2))


def items_chosen_by_a_closure_tuple(x, loc):
    """`for i, xi in zip(argnums, xs): a[i] = xi` with argnums a tuple of the closure: the loop is unrolled, so
    which items move is known (df needs no rule); the generated code checks argnums is still (0, 2)."""
    return np.sum(_CDF_AT_0_2((x, loc)) ** 2)


# --- a function or object chosen on a path decided when the code runs: a dispatch in the code ---------

class Pooling:
    """numpy-ml's Pool2D: the pooling function picked by the mode, then called."""

    def __init__(self, mode):
        self.mode = mode

    def forward(self, X):
        if self.mode == "max":
            pool_fn = np.max
        elif self.mode == "average":
            pool_fn = np.mean
        return pool_fn(X, axis=0)


def pooling_mode_decided_when_the_code_runs(X):
    """`pool_fn` is np.max or np.mean, as the mode (set from the data) says: the call runs whichever it holds."""
    pool = Pooling("max" if np.sum(X) > 0.0 else "average")
    return np.sum(pool.forward(X) ** 2)


def _cubed(z):
    return z ** 3


def functions_chosen_when_the_code_runs(x):
    """Functions, lambdas and local defs chosen in branches, in a loop's passes and by `a if c else b`, then
    called (also by a helper they are passed to), read as a value (`act is not None`) or left unset."""
    def soft(z):
        return z / (1.0 + z * z)
    act = None
    if x[0] > 0.0:
        act = np.tanh
    h = act(x) if act is not None else x
    f = np.sin
    for k in range(3):
        h = f(h) + h  # the function the pass before set (np.sin on the first pass)
        if h[k] > 0.0:
            f = soft
        else:
            f = lambda z: z * 0.5 + _cubed(z)
    g = np.cos if h[1] > 0.0 else _cubed
    return np.sum(f(h)) + np.sum(apply_twice(g, h))


def apply_twice(fn, x):
    return fn(fn(x) * 0.5)


class HalfAct:
    scale = 0.5

    def __init__(self, shift):
        self.shift = shift

    def fn(self, z):
        return z * self.scale + self.shift


def objects_chosen_when_the_code_runs(x):
    """An object of one class or another (by a branch, by `a if c else b`, or replaced in a loop's pass) whose
    method is called: the method of the class it holds when the code runs."""
    act = TanhAct() if np.sum(x) > 0.0 else HalfAct(0.25)
    h = act.fn(x) if isinstance(act, HalfAct) else act(x)
    layer = Doubler()
    total = 0.0
    for k in range(2):
        total = total + np.sum(layer.f(h))
        if h[k] > 0.0:
            layer = Tripler()
    return total + np.sum(layer.f(h))


def function_unset_on_the_path_taken(x):
    if x[0] > 0.0:
        fn = np.sin
    elif x[0] < -1.0:
        fn = np.cos
    return np.sum(fn(x))


def object_or_array_on_the_path_taken(x):
    o = x * 2.0
    if x[0] > 0.0:
        o = Doubler()
    return np.sum(o.f(x))


def function_or_array_read_by_the_next_pass(x):
    f = np.sin
    for k in range(2):
        x = f(x)
        if x[0] > 0:
            f = np.cos
        else:
            f = x * 2.0
    return np.sum(x)


class Activated:
    def __init__(self, act):
        self.act = act

    def forward(self, x):
        return self.act(x) * 2.0


def functions_chosen_held_by_an_object_and_a_list(x):
    """One function or another (chosen when the code runs) given to an object, which calls it from its
    attribute, and held in a list, called through its item and in a loop over the list."""
    act = np.tanh if x[0] > 0.0 else (lambda z: z * np.sin(z))
    layer = Activated(np.cos if x[1] > 0.0 else np.sin)
    fs = [act, np.cos]
    h = fs[0](x) + layer.forward(x)
    for f in fs:
        h = f(h) + h
    return np.sum(h)


# --- a module of layers set up lazily on its first forward pass (numpy-ml's SkipConnection modules) ---

class _Norm:
    """Normalizes over the batch; in training, writes the running mean into its own parameters dict."""

    def __init__(self):
        self.parameters = {"running_mean": None, "scale": 1.5}
        self.trainable = True
        self.is_initialized = False

    def forward(self, X):
        if not self.is_initialized:
            self.parameters["running_mean"] = np.zeros(X.shape[1])
            self.is_initialized = True
        mean = X.mean(axis=0)
        if self.trainable:
            self.parameters["running_mean"] = 0.9 * self.parameters["running_mean"] + 0.1 * mean
        return self.parameters["scale"] * (X - mean)


class _Dense:
    def __init__(self, n_out):
        self.n_out = n_out
        self.parameters = {}
        self.is_initialized = False

    def forward(self, X):
        if not self.is_initialized:
            rows = np.arange(X.shape[1] * self.n_out).reshape(X.shape[1], self.n_out)
            self.parameters = {"W": np.cos(rows) * 0.5}
            self.is_initialized = True
        return np.tanh(X @ self.parameters["W"])


class _SkipBlock:
    def __init__(self):
        self.dense1 = _Dense(4)
        self.norm1 = _Norm()

    def forward(self, X):
        if not hasattr(self, "dense2"):  # its size is only known once X is seen
            self.dense2 = _Dense(X.shape[1])
        return X + self.dense2.forward(self.norm1.forward(self.dense1.forward(X)))


SKIP_BLOCK = _SkipBlock()
SKIP_BLOCK.forward(np.ones((2, 3)))  # set up, as a training loop's first step does


def layers_set_up_on_the_first_forward_pass(X):
    """`hasattr(self, "dense2")` on the module's block, set up before: true, checked again when the code runs;
    the norm layer writes into its parameters dict while the dense layers read theirs (different objects,
    checked too)."""
    return np.sum(SKIP_BLOCK.forward(X) ** 2)


def draws_without_replacement(x):
    """numpy-ml's DiscreteSampler: a list of ints rebuilt in a `while` loop (the gradient code saves each pass's
    list on the tape beside the arrays) and read through `set()`; a gradient of the gradient pops it back as
    the ints it is, with no derivative."""
    samples = [k % 3 for k in range(5)]
    unique = list(set(samples))
    h = x
    while len(samples) != len(unique):
        samples = unique + [len(unique) + len(samples) % 2]
        unique = list(set(samples))
        h = np.sin(h) * 1.5 + x
    return np.sum(h ** 2) * len(unique)


# --- numpy-ml's BidirectionalLSTM: module objects reached by two paths, and outputs put first in a list ---

class _Cell:
    def __init__(self, seed):
        self.parameters = {"W": np.cos(np.arange(9.0) + seed).reshape(3, 3) * 0.5}
        self.gradients = {}
        self.is_initialized = True

    def flush_gradients(self):
        self.gradients = {k: np.zeros_like(v) for k, v in self.parameters.items()}

    def forward(self, xt, h):
        if not self.is_initialized:
            self.gradients = {k: np.zeros_like(v) for k, v in self.parameters.items()}
            self.is_initialized = True
        return np.tanh(xt + h @ self.parameters["W"])


class _Bidirectional:
    def __init__(self):
        self.cell_fwd, self.cell_bwd = _Cell(0.0), _Cell(1.0)

    def forward(self, X):
        h, Y_fwd = np.zeros(3), []
        for t in range(X.shape[0]):
            h = self.cell_fwd.forward(X[t], h)
            Y_fwd.append(h)
        h, Y_bwd = np.zeros(3), []
        for t in reversed(range(X.shape[0])):
            h = self.cell_bwd.forward(X[t], h)
            Y_bwd.insert(0, h)
        return np.stack([np.concatenate([f, b]) for f, b in zip(Y_fwd, Y_bwd)])


BIDIRECTIONAL = _Bidirectional()


def bidirectional_cells_flushed_then_run(X):
    """`BIDIRECTIONAL.cell_fwd.flush_gradients()` here, `self.cell_fwd` in the method: one object reached by
    two paths (checked to be one when the code runs), so what one sets the other reads; `Y_bwd.insert(0, h)`
    puts each output first, as `Y_bwd = [h] + Y_bwd` would."""
    BIDIRECTIONAL.cell_fwd.flush_gradients()
    BIDIRECTIONAL.cell_bwd.flush_gradients()
    return np.sum(np.sin(BIDIRECTIONAL.forward(X)) * np.arange(6.0))


def inserts_into_a_list(x):
    ys = [x[0]]
    for t in range(3):
        ys.insert(t % 2, np.sin(ys[0]) * x[t])
    ys.insert(len(ys), x[1] * 2.0)
    return np.sum(ys[1] * ys[2]) + np.sum(ys[-1] * ys[0])


class _DenseLayer:
    def __init__(self, W, b, act=np.tanh):
        self.parameters = {"W": W, "b": b}
        self.act = act

    def forward(self, X):
        return self.act(X @ self.parameters["W"] + self.parameters["b"])


LAYER_SIZES = [(3, 4), (4, 2)]


def layers_made_by_a_comprehension(W1, b1, W2, b2, X):
    """`[Dense(W, b) for W, b in pairs]` over a sequence of known length (written out, or a module's list):
    the objects one by one, so `layer.forward` in the loop over them reads each one's own parameters."""
    layers = [_DenseLayer(W, b) for W, b in [(W1, b1), (W2, b2)]]
    layers.append(_DenseLayer(W2.T @ W2, b1[:2] * 0.0, act=np.sin))
    out = X
    for layer in layers:
        out = layer.forward(out)
    scales = [_DenseLayer(np.eye(n_out) * 0.5, np.zeros(n_out)) for n_in, n_out in LAYER_SIZES[1:]]
    return np.sum(scales[0].forward(out) ** 2)


class _Recorder:
    """A numpy-ml layer keeping what its forward pass saw (`self.X.append(X)`, `derived_variables[...]`)."""

    def __init__(self, seed):
        self.W = np.cos(np.arange(9.0) + seed).reshape(3, 3)
        self.X = []
        self.derived_variables = {"Z": [], "rows": []}

    def forward(self, X):
        Z = X @ self.W
        self.X.append(X)
        self.derived_variables["Z"].append(Z)
        self.derived_variables["rows"].append(Z.shape[0])
        return np.tanh(Z)


class _LazyRecorder:
    """The same, set up on its first forward pass (`derived_variables` made in that branch)."""

    def __init__(self, seed):
        self.seed = seed
        self.is_initialized = False

    def _init_params(self, n):
        self.W = np.cos(np.arange(n * 3.0) + self.seed).reshape(n, 3)
        self.derived_variables = {"Z": [], "rows": []}
        self.X = []
        self.is_initialized = True

    def forward(self, X):
        if not self.is_initialized:
            self._init_params(X.shape[1])
        Z = X @ self.W
        self.X.append(X)
        self.derived_variables["Z"].append(Z)
        self.derived_variables["rows"].append(Z.shape[0])
        return np.tanh(Z)


class _Block:
    def __init__(self):
        self.first, self.second = _Recorder(0.0), _Recorder(1.0)
        self.third = _LazyRecorder(2.0)

    def forward(self, X):
        self.X_in = X  # (numpy-ml's modules keep their input: the block itself now holds a derivative)
        return self.third.forward(self.second.forward(self.first.forward(X)) + X)


BLOCK = _Block()
BLOCK.forward(np.ones((2, 3)))


def reads_back_what_a_layer_kept(X):
    BLOCK.forward(X)
    return np.sum(BLOCK.third.derived_variables["Z"][-1])


def layers_recording_in_a_module(X):
    """numpy-ml's WavenetResidualModule: sub-layers of a module object append what they saw to their own
    lists; the module reads another sub-layer afterwards (in forward mode too)."""
    return np.sum(BLOCK.forward(X) ** 2) + np.sum(BLOCK.first.derived_variables["Z"][-1])


class _Wrapper:
    """numpy-ml's WrapperBase: unwraps a wrapped wrapper with `hasattr(layer, "_base_layer")`."""

    def __init__(self, layer, scale):
        self._base_layer = layer
        if hasattr(layer, "_base_layer"):
            self._base_layer = layer._base_layer
        self.scale = scale

    def forward(self, X):
        return self._base_layer.forward(X) * self.scale


def wrappers_made_here(W, b, X):
    """`hasattr` on objects made in the function is known from what the function set (checked when the code
    runs): each wrapper's `_base_layer` is the dense layer, the wrapped wrapper unwrapped; and the dict
    comprehension makes one layer per key."""
    inner = _Wrapper(_DenseLayer(W, b), 2.0)
    outer = _Wrapper(inner, 0.5)
    heads = {k: _Wrapper(_DenseLayer(W * 2.0, b), 1.0) for k in ["Q", "K"]}
    sized = {k: _Wrapper(_DenseLayer(W, b * 0.5), 1.5) for k in ["V", "O"]}
    return np.sum(outer.forward(X) ** 2) + np.sum(heads["K"].forward(X)) + np.sum(sized["O"].forward(X) ** 2)


def wrapped_layers_made_in_a_loop(W, X):
    """Objects made in a loop (a comprehension over `enumerate`), each a wrapper holding a layer that holds a
    derivative: `heads["K"].forward(X)` cannot be followed (which object is it?), so it is refused in every
    mode; forward mode once missed the layer inside the wrapper and gave a zero tangent."""
    heads = {k: _Wrapper(_Linear(W * (i + 1.0)), 2.0) for i, k in enumerate(HEAD_KEYS)}
    return np.sum(heads["K"].forward(X))


HEAD_KEYS = ["Q", "K"]  # (a list of the module's: the loop over it stays a loop)


class _Linear:
    def __init__(self, W):
        self.W = W

    def forward(self, X):
        return X @ self.W


def _chosen_by_a_helper(x):
    if x[0] > 0.0:
        return np.sin
    return np.cos


def function_a_helper_returns_from_a_branch(x):
    f = _chosen_by_a_helper(x)
    return np.sum(f(x))


def function_picked_by_a_computed_key(x):
    table = {"a": np.sin, "b": np.cos}
    key = "a" if x[0] > 0.0 else "b"
    return np.sum(table[key](x))


# --- module names rebound between calls: the code is made again (it was made for the objects they held) ------

class _Times:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return x * self.w


class _Plus:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return x + self.w


class _Holder:
    def __init__(self):
        self.sub = _Times(3.0)
        self.act = np.tanh


REBOUND_ACT = np.tanh
REBOUND_LAYER = _Times(2.0)
REBOUND_LAYERS = [_Times(2.0), _Times(0.5)]
REBOUND_MODULE = _Holder()


def _rebound_helper(x):
    return x * 2.0


def uses_module_names(x):
    h = REBOUND_ACT(x) + _rebound_helper(x)
    h = REBOUND_LAYER.f(h) + REBOUND_MODULE.sub.f(h) + REBOUND_MODULE.act(h)
    for layer in REBOUND_LAYERS:
        h = layer.f(h)
    return np.sum(h ** 2)


class LazyDense:
    """numpy-ml's modules: parameters made on the first forward pass, behind `if not self.is_initialized:`."""

    def __init__(self, n_out):
        self.n_out = n_out
        self.is_initialized = False

    def _init_params(self, n_in):
        self.W = np.linspace(-1.0, 1.0, n_in * self.n_out).reshape(n_in, self.n_out)
        self.heads = {k: _Head(gain) for k, gain in zip(["Q", "K"], [1.0, -0.5])}
        self.is_initialized = True

    def forward(self, X):
        if not self.is_initialized:
            self._init_params(X.shape[1])
        Z = X @ self.W
        return np.tanh(self.heads["Q"].forward(Z) + self.heads["K"].forward(Z))


class _Head:
    def __init__(self, gain):
        self.gain = gain
        self.last = None

    def forward(self, Z):
        self.last = Z * self.gain
        return self.last


SET_UP_LAYER = LazyDense(2)
SET_UP_LAYER.forward(np.ones((1, 3)))  # set up before the function is differentiated


def layer_set_up_before_behind_a_flag(X):
    """`if not self.is_initialized:` on a layer set up before: the flag's value now decides the branch (the
    parameters the branch would set are read from the layer), checked before each call."""
    return np.sum(SET_UP_LAYER.forward(X) ** 2)


def dicts_updated(x, W, given):
    """`d.update(other)` and `d.update(k=v)` on a dict built here: each item set, as Python does (`given`'s
    keys are known only when the code runs: its items are set then)."""
    params = {"a": np.sin(x)}
    params.update({"b": W @ x})
    params.update(c=x ** 2)
    extra = {"a": np.cos(x), "d": 2.0 * x}
    params.update(extra)
    total = np.sum(params["a"] * params["b"]) + np.sum(params["c"] * params["d"])
    params.update(given, c=np.tanh(x))
    return total + np.sum(params["a"] * params["e"]) + np.sum(params["c"] * params["b"])


def ufunc_methods(a, b):
    """A ufunc's methods, as NumPy code writes them: `outer` (a kernel's pairwise differences), `reduce`
    (`np.logaddexp.reduce` of log-probabilities) and `accumulate` (a running maximum)."""
    pairwise = np.subtract.outer(a, b[:, 0]) ** 2 + np.sin(np.multiply.outer(a, b))[..., 1]
    log_total = np.logaddexp.reduce(b, axis=1) + np.add.reduce(a) * np.multiply.reduce(b, axis=None)
    running = np.maximum.accumulate(a) + np.add.accumulate(a[::-1])
    return np.sum(np.exp(-pairwise)) + np.sum(log_total) + np.sum(running) * np.sum(np.hypot.reduce(np.abs(b) + 1.0))



SEGMENTS = np.array([0, 3, 3, 5, 9])  # segment starts (one empty: the item at 3 alone)


def ufunc_reduceat(x, m):
    """`reduceat`, segment reductions as grouped statistics code writes them: `np.add.reduceat` (sums over
    sorted groups), `np.maximum.reduceat` along an axis (starts not increasing), `np.multiply.reduceat`."""
    sums = np.add.reduceat(x, SEGMENTS)
    peaks = np.maximum.reduceat(m, [0, 4, 2, 7], axis=1)
    products = np.multiply.reduceat(m[:, :4], np.array([1, 2]), axis=1)
    return np.sum(sums ** 2) + np.sum(np.sin(peaks)) + np.sum(products * np.arange(3.0)[:, None])

PARAMETER_NAMES = ["W", "b"]


def zip_and_enumerate_as_values(W, b, x):
    """`dict(zip(names, params))`, `list(zip(...))` and `list(enumerate(...))` outside a `for` header: the
    lists of tuples they yield."""
    params = dict(zip(PARAMETER_NAMES, [W, b]))
    pairs = list(zip([W, b], [x, x[:2]]))
    total = 0.0
    for k, (p, q) in enumerate(pairs):
        total = total + (k + 1) * np.sum(np.tanh(p * q))
    numbered = list(enumerate([x, 2.0 * x]))
    return total + np.sum(params["W"] ** 2) + np.sum(params["b"] * numbered[1][1][:2]) * numbered[1][0]


def assignment_expressions(x):
    """`:=` in a test, in a comprehension (binding the function's name, as Python does) and in an expression."""
    if (n := np.sum(x ** 2)) > 1.0:
        y = np.sin(x) * n
    else:
        y = x
    total = [(z := np.tanh(v)) * z for v in x]
    return np.sum(y) + sum(total) + (w := np.prod(x)) * w + z


class _KeepingLoss:
    """numpy-ml's NCELoss: set up on its first call, then keeping each call's values in lists of a dict."""

    def __init__(self):
        self.is_initialized = False

    def _init_params(self):
        self.derived_variables = {"y_pred": [], "target": []}
        self.is_initialized = True

    def __call__(self, X, target):
        if not self.is_initialized:
            self._init_params()
        y_pred = np.tanh(X) * 2.0
        self.derived_variables["y_pred"].append(y_pred)
        self.derived_variables["target"].append(target)
        return np.sum(y_pred[target] ** 2)


KEEPING_LOSS = _KeepingLoss()
TARGETS = np.array([0, 2])
KEEPING_LOSS(np.ones(3), TARGETS)


def loss_keeping_its_inputs(X):
    """Appends to the lists of a dict of a loss set up before: the second append (an int array) goes into
    the dict the first one rebuilt, followed the same way (second order through the gradient code too)."""
    return KEEPING_LOSS(X, TARGETS)


class _Projection:
    def __init__(self, gain):
        self.gain = gain
        self.derived_variables = {"Z": []}
        self._wrapper_derived_variables = {"mask": None}

    def forward(self, X):
        Z = X * self.gain
        self._wrapper_derived_variables["mask"] = Z > 0
        return np.tanh(Z)

    @property
    def all_derived_variables(self):
        dv = self.derived_variables.copy()
        if "wrappers" in dv:
            dv["wrappers"].append(self._wrapper_derived_variables)
        else:
            dv["wrappers"] = [self._wrapper_derived_variables]
        return dv


class _Attention:
    """numpy-ml's MultiHeadedAttentionModule, set up before: projections by key, kept results by key."""

    def __init__(self):
        self.is_initialized = False

    def _init_params(self):
        self._dv = {}
        self.projections = {k: _Projection(g) for k, g in zip(["Q", "K", "O"], [1.0, -0.5, 2.0])}
        self.is_initialized = True

    def forward(self, Q, K):
        if not self.is_initialized:
            self._init_params()
        for k, x in zip(["Q", "K"], [Q, K]):
            proj = self.projections[k].forward(x)
            self._dv["{}_proj".format(k)] = proj
        dv = self.derived_variables
        scores = dv["Q_proj"] * dv["K_proj"]
        return self.projections["O"].forward(scores)

    @property
    def derived_variables(self):
        dv = {"Q_proj": None, "K_proj": None,
              "components": {k: self.projections[k].all_derived_variables for k in ["Q", "K"]}}
        dv.update(self._dv)
        return dv


ATTENTION = _Attention()
ATTENTION.forward(np.ones(3), np.ones(3))


def attention_module_set_up_before(Q, K):
    """A loop over literal keys (unrolled: each key known), objects of a layer's dict by key (one object however
    often it is read), `f"{k}_proj"` keys, `d.update(self._dv)`, `d.copy()` of a layer's dict and `"wrappers"
    in dv` decided by its keys."""
    return np.sum(ATTENTION.forward(Q, K) ** 2)


def dict_argument_copied_then_set(params, x):
    """`p = params.copy()` of a dict argument, then `p["W"] = ...`: the copy's own item (a string key: a dict),
    and `.copy()` of a list."""
    p = params.copy()
    p["W"] = p["W"] * 2.0
    q = list(params.values()).copy()
    return np.sum(p["W"] * x) + np.sum(p["b"] ** 2) + np.sum(q[0] * q[1][0])


def functions_taking_functions(x, W):
    """`functools.reduce` (a lambda, np.add, an initial value), `itertools.chain` and `np.apply_along_axis`
    (a number or a 1-d array per slice): the loops they stand for."""
    product = functools.reduce(lambda a, b: a @ b, [W, W.T, np.diag(x)])
    total = functools.reduce(np.add, [x, x ** 2, np.sin(x)], np.ones(3))
    squares = sum(np.sum(p ** 2) for p in itertools.chain([x[:1], x[1:]], [W]))
    norms = np.apply_along_axis(np.linalg.norm, 1, W)
    scaled = np.apply_along_axis(lambda row, s: np.tanh(row) * s, 0, W, 2.0)
    return np.sum(product ** 2) + np.sum(total) + squares + np.sum(norms * x) + np.sum(scaled ** 2)


class _Named:
    def __init__(self):
        self.W = np.array([[0.5, 0.1, 0.0], [0.2, -0.3, 0.4], [0.0, 0.1, 0.6]])

    def forward(self, x, name="W"):
        setattr(self, "last", x)
        return getattr(self, name) @ x + self.last


NAMED = _Named()


def small_python_idioms(x, W):
    """`enumerate(xs, start)` (a loop and an unrolled one), a lambda's default taken where it is written
    (`lambda v, W=W: ...`), `getattr` / `setattr` by a constant name, and `np.vectorize(f)` of one and of
    two arguments."""
    total = 0.0
    for i, v in enumerate(x, start=1):
        total = total + i * v ** 2
    for k, f in enumerate((np.sin, np.tanh), 2):
        total = total + k * np.sum(f(x))
    act = lambda v, W=W: np.tanh(W @ v)
    W = W * 10.0  # (the default is the W of before)
    square = np.vectorize(lambda v: v ** 2)
    product = np.vectorize(lambda u, v: u * np.sin(v))
    return total + np.sum(act(x)) + np.sum(NAMED.forward(x) ** 2) + np.sum(square(x)) + np.sum(product(W, x))


def numpy_functions_written_out(x, v):
    """np.convolve and np.correlate in each mode, np.polyval and np.meshgrid of two arrays: the NumPy calls
    with rules they stand for."""
    total = 0.0
    for mode in ("full", "same", "valid"):
        total = total + np.sum(np.convolve(x, v, mode) ** 2) + np.sum(np.correlate(x, v, mode=mode) * 0.5)
    X, Y = np.meshgrid(x, v)
    I, J = np.meshgrid(x, v ** 2, indexing="ij")
    return total + np.sum(np.polyval(v, x)) + np.sum(np.sin(X) * Y) + np.sum(I * J)


def dict_argument_written_into(params, x):
    """`params["W"] = ...` into a dict argument: written into its copy (the caller's dict is left as it was),
    as a write into an array argument is."""
    params["W"] = params["W"] * 2.0
    params["c"] = np.tanh(params["b"])
    return np.sum(params["W"] * x) + np.sum(params["c"] * params["b"])


def sorted_by_a_lambda(x):
    """`sorted(..., key=lambda ...)`, `max(xs, key=...)`, `min(xs, key=...)`: the keys decide the order only."""
    order = sorted(range(3), key=lambda i: -x[i])
    rows = [x * 1.0, x ** 2, np.sin(x)]
    by_total = lambda r: np.sum(r)
    best, worst = max(rows, key=by_total), min(rows, key=by_total)
    ranked = sorted(rows, key=lambda r: r[0], reverse=True)
    return x[order[0]] * 2.0 + x[order[-1]] + np.sum(best * worst) + np.sum(ranked[0] * np.arange(3.0))


@dataclass
class _Params:
    W: np.ndarray
    scale: float = 1.0


def keys_and_records_worked_out(x):
    """Keys worked out of constants (`"layer_%d" % i`, `f"{k}_W"`, `"{}_b".format(k)`, `{name: v}`),
    `np.where(mask)` of one argument (the indices) and `dataclasses.replace(p, scale=...)`."""
    import dataclasses
    layers = {}
    for i in range(2):
        layers["layer_%d" % i] = x * (i + 1.0)
    name = "layer_" + "1"
    named = {name: np.sin(x)}
    for k in ["q", "k"]:
        layers[f"{k}_W"] = np.tanh(x)
        layers["{}_b".format(k)] = x ** 2
    picked = x[np.where(x > 0)[0]]
    p = _Params(W=x * 2.0)
    q = dataclasses.replace(p, scale=np.sum(x))
    return (np.sum(layers["layer_1"] * named["layer_1"]) + np.sum(layers["q_W"] * layers["k_b"])
            + np.sum(picked ** 2) + np.sum(q.W) * q.scale)


CALLS = 0
LAST_LOSS = None


def counts_its_calls(x):
    """`global CALLS, LAST_LOSS`: the module's names rebound as the code runs (a counter, a loss kept)."""
    global CALLS, LAST_LOSS
    CALLS += 1
    loss = np.sum(np.sin(x) ** 2)
    LAST_LOSS = loss
    return loss * 2.0 + CALLS * 0.0


def more_of_numpy(x, v):
    """Functions followed through the NumPy code they stand for (rules/standing_for.py):
    sliding_window_view (1-d and 2-d windows), np.nanvar / np.nanstd (NaN items skipped), np.diagflat,
    np.ediff1d, np.resize, np.piecewise (functions and numbers, an otherwise case), np.linalg.cond,
    np.polyfit, scipy.signal.lfilter (FIR and IIR), as_strided (im2col), np.float64(x), np.fromiter; np.clip's
    min= / max= keywords."""
    import scipy.signal
    from numpy.lib.stride_tricks import sliding_window_view
    A = np.outer(x, v)
    w = sliding_window_view(x, 2)
    total = np.sum(w[:, 0] * w[:, 1] ** 2) + np.sum(sliding_window_view(A, (2, 2)) ** 2)
    masked = np.where(v > 0.5, np.nan, x)
    total = total + np.nanstd(masked) + np.nanvar(A, axis=0, ddof=1)[1] + np.sum(np.nanvar(A, axis=1, keepdims=True))
    total = total + np.sum(np.diagflat(x) @ np.diagflat(v[:2], 1)) + np.sum(np.ediff1d(x ** 2, to_begin=[1.0], to_end=v[0]) ** 2)
    total = total + np.sum(np.resize(x, (2, 4)) * np.arange(8.0).reshape(2, 4))
    total = total + np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, lambda t: np.sin(t)]))
    total = total + np.sum(np.piecewise(v, [v < 0.5], [lambda t: t ** 3, 2.0]) * x)
    total = total + np.linalg.cond(A + np.eye(3)) + np.sum(np.polyfit(np.linspace(0, 1, 3), x * v, 1) ** 2)
    total = total + np.sum(scipy.signal.lfilter([0.5, 0.3], [1.0, -0.2], x * 2) ** 2)
    total = total + np.sum(scipy.signal.lfilter([0.5, 0.3, 0.1], [2.0], v) * x)
    image = A * np.arange(9.0).reshape(3, 3)
    s0, s1 = image.strides
    cols = np.lib.stride_tricks.as_strided(image, shape=(2, 2, 2, 2), strides=(s0, s1, s0, s1))  # im2col
    total = total + np.sum(cols.reshape(4, 4) @ np.arange(4.0))
    single = np.stack([x, np.where(v > 0.5, np.nan, v)])  # a column with one number: its ddof=1 std is NaN
    total = total + np.nansum(np.nanstd(single, axis=0, ddof=1))
    written = np.zeros(3)
    operator.setitem(written, slice(None), x * v)
    total = total + np.sum(written ** 2) + np.sum(x.clip(0.1) ** 2)
    total = total + np.float64(x[0]) * v[1] + np.sum(np.float64(x * v)) + np.sum(np.fromiter((t ** 2 for t in x), float))
    return total + np.sum(x.clip(min=-0.5) ** 2) + np.sum(np.clip(v, max=0.4) * x)


def numpy_polynomial_series(c, x, w):
    """numpy.polynomial's functions as spectral and fitting code writes them: each family's `val` (a
    Chebyshev expansion, Hermite functions, a Laguerre series of two columns, tensor=False too), `vander`
    and `fit` (weighted, of two columns), differentiated in the coefficients, the points and the weights."""
    from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre
    from numpy.polynomial import polynomial as power
    total = np.sum(chebyshev.chebval(x, c) ** 2) + np.sum(hermite.hermval(x, c) * np.exp(-x ** 2 / 2))
    total = total + np.sum(laguerre.lagval(x, np.outer(c, [1.0, -0.5])) ** 2) + legendre.legval(0.3, c)
    total = total + np.sum(hermite_e.hermeval(x[:2], np.reshape(c[:4], (2, 2)), tensor=False))
    total = total + np.sum(power.polyvander(x, 3) @ c[:4]) + np.sum(legendre.legvander(x, 2) ** 2)
    data = np.stack([np.sin(3 * x), np.cos(x) * c[0]], axis=1)
    return total + np.sum(chebyshev.chebfit(x, data, 2, w=w) ** 2) + np.sum(power.polyfit(x, c[1] * x ** 2, 2) ** 2)

def list_used_as_items_and_as_an_array(x):
    """numpy-ml's GMM E-step: a list of numbers passed whole to logsumexp and np.exp, and walked item by
    item (the two cotangents, an array and the list's, could not be added: an AttributeError)."""
    from scipy.special import logsumexp
    vals = []
    for c in range(2):
        vals.append(np.sum(x * (c + 1)) - np.sum(x ** 2) * c)
    log_denom = logsumexp(vals)
    q = np.exp([v - log_denom for v in vals])
    return np.sum(q * np.array([1.0, 2.0])) + logsumexp(vals) * vals[1]


def _layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps) + b


def _linear(x, w, b):
    return x @ w + b


def _block(x, mlp, ln, scale):
    return x + scale * np.tanh(_linear(_layer_norm(x, **ln), **mlp))


def keywords_from_dict_arguments(x, blocks):
    """picoGPT's style: `block(x, **params, scale=...)` with `params` a dict argument (or a loop's item), whose
    keys are known only when the code runs: bound by the callee's parameter names."""
    for params in blocks:
        x = _block(x, **params, scale=0.5)
    return np.sum(x ** 2)


_GPT = {"blocks": [{"mlp": {"w": np.linspace(-0.5, 0.5, 9).reshape(3, 3), "b": np.full(3, 0.1)},
                    "ln": {"g": np.array([1.1, 0.9, 1.0]), "b": np.array([0.0, 0.2, -0.1])}}],
        "ln_f": {"g": np.array([0.8, 1.2, 1.0]), "b": np.zeros(3)}}


def keywords_from_items_of_dicts(x, params):
    """picoGPT's `mha(x, **block["attn"])`: `**` of an item of a dict (an argument's, the module's, one built
    here), a name's keys or not: read first, then bound as a name's are (by the callee's parameters)."""
    x = _block(x, **_GPT["blocks"][0], scale=0.5)  # the module's
    x = x + _linear(x, **params["mlp"])  # an argument's
    made = {"ln": {"g": params["ln"]["g"] * 2.0, "b": params["ln"]["b"]}}
    x = _layer_norm(x, **made["ln"])  # one built here
    return np.sum(_layer_norm(x, **_GPT["ln_f"]) * x)


def _cast(x, dtype=np.float64, act=np.tanh, kinds=(np.float32, np.float64)):
    table = {"act": act}  # a default function held in a dict, called through it
    return x.astype(dtype) * 2.0 + table["act"](x) + x.astype(kinds[1]) ** 2


class _CastNet:
    """CS231n's FullyConnectedNet: `dtype=np.float64` kept on the object and given to `astype`."""
    def __init__(self, w, dtype=np.float64):
        self.dtype = dtype
        self.params = {"w": w}
        for k, v in self.params.items():
            self.params[k] = v.astype(dtype)

    def loss(self, X):
        X = X.astype(self.dtype)
        return np.sum(np.tanh(X @ self.params["w"]) ** 2)


def classes_and_functions_of_defaults_read_as_values(x, w):
    """A default that is a class or function (`dtype=np.float64`, `act=np.tanh`) read as a value, not
    called: the default itself."""
    return np.sum(_cast(x) ** 2) + _CastNet(w).loss(x.reshape(1, 3) * np.ones((2, 1)))


def _attend(q, k, v):
    return np.tanh(q * k) + v


def star_of_comprehensions_over_displays(x, p):
    """`f(*[params[k] for k in ("Wq", "Wk", "Wv")])`: a comprehension over a display (or a constant tuple)
    has one item per item of it, so `*` of it passes that many arguments."""
    out = _attend(*[p[k] for k in ("q", "k", "v")])
    out = out + _attend(*[x * s for s in [1.0, 2.0, 0.5]])
    return np.sum(out * _attend(*(x ** n for n in (1, 2, 3)))) + np.sum(_attend(*[x[i] for i in (0, 1, 2)]))


_Y_TRAIN = np.array([0, 2, 1])


class _TwoLayer:
    """CS231n's `loss(X, y=None)`: the scores alone without labels, else (loss, grads)."""
    def __init__(self, W):
        self.params = {"W": W}
        self.reg = 0.1

    def loss(self, X, y=None):
        scores = np.tanh(X @ self.params["W"])
        if y is None:
            return scores
        loss, grads = 0, {}
        shifted = scores - np.max(scores, axis=1, keepdims=True)
        log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
        loss = -np.sum(log_probs[np.arange(X.shape[0]), y]) / X.shape[0]
        loss += 0.5 * self.reg * np.sum(self.params["W"] ** 2)
        return loss, grads


def returns_of_two_shapes_picked_by_module_labels(W, X):
    """`y is None` for the module's labels (or None) is known when the function is transformed, so the
    returns of one or two values are those of the branch taken (checked when the code runs)."""
    model = _TwoLayer(W)
    out = model.loss(X, _Y_TRAIN)
    if _Y_TRAIN is None:
        return np.sum(out ** 2)
    loss, _ = out
    return loss + np.sum(model.loss(X) ** 2)


def returns_of_two_shapes_picked_by_argument_labels(W, X, y):
    """The same with the labels an array argument: known not None in code made for its length."""
    loss, grads = _TwoLayer(W).loss(X, y)
    return loss + len(grads)


def scores_or_loss_by_argument_labels(W, X, y=None):
    """`model.loss(X, y)` with `y` an argument that is None (the scores) or labels (loss, grads): the code
    made for None, or for the labels' length, takes the branch known."""
    out = _TwoLayer(W).loss(X, y)
    if y is None:
        return np.sum(out ** 2)
    return out[0]


def _positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, np.newaxis]
    i = np.arange(d_model)[np.newaxis, :]
    angle_rads = pos / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads


def _scaled(a, b, scale=1.0):
    return a * b * scale


class _Gate:
    def __init__(self, w, b, scale):
        self.w, self.b, self.scale = w, b, scale

    def __call__(self, x):
        return np.tanh(x * self.w + self.b) * self.scale


def star_of_a_shape_into_a_helper(x, w):
    """`positional_encoding(*x.shape)`: `*` of a value whose length is known only when the code runs, into
    a helper of yours (or a class's `__init__`): as many items as the parameters it fills (checked when the
    code runs)."""
    x = x + _positional_encoding(*x.shape)
    gate = _Gate(w[0], *w[1:] * 2.0)
    return np.sum(x ** 2) + np.sum(_scaled(*np.tanh(w[:2]), scale=3.0)) + np.sum(_scaled(w[0], *w[1:2])) \
        + np.sum(gate(w[2]))


def _rmsprop(w, dw, config=None):
    """CS231n's optim.py: the config made when None, its defaults set in place, its cache replaced."""
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("decay_rate", 0.99)
    config.setdefault("cache", np.zeros_like(w))
    config["cache"] = config["decay_rate"] * config["cache"] + (1 - config["decay_rate"]) * dw ** 2
    next_w = w - config["learning_rate"] * dw / (np.sqrt(config["cache"]) + 1e-8)
    return next_w, config


def update_rules_setting_defaults_of_their_config(w):
    """The config a caller passes (a dict display made for the call, a dict it holds, one the first call made
    and returned), changed in place by the update rule: `if config is None: config = {}` is skipped for a
    dict, so the parameter is the caller's dict, which the caller sees changed (in a loop too)."""
    v, config = _rmsprop(w, w ** 3 - w)  # made by the rule
    v, config = _rmsprop(v, v ** 3 - v, config)
    u, _ = _rmsprop(w, np.sin(w), {"learning_rate": 0.05})  # a display made for the call alone
    held = {"learning_rate": 0.1}
    for _ in range(2):
        u, returned = _rmsprop(u, u ** 3 - u, held)
    return np.sum(v ** 2) + np.sum(u ** 2) + np.sum(held["cache"]) + np.sum(config["cache"] * returned["cache"])


def update_rule_config_none_before_the_loop(w):
    """A training loop starting from `config = None` and handing the rule the config it returned last pass
    (`w, config = rmsprop(w, dw, config)`): None in the first pass, the dict the rule made after; the loop
    is lowered again knowing it holds a dict where not None (found at `config.setdefault`, in the rule)."""
    config = None
    for _ in range(3):
        w, config = _rmsprop(w, np.tanh(w) + w ** 3, config)
    settings = None
    for _ in range(2):
        if settings is None:
            settings = {}
        settings.update(rate=0.1)
        w = w - settings["rate"] * w ** 3
    return np.sum(w ** 2) + np.sum(config["cache"])


def writes_through_an_item_by_a_computed_index(x):
    """`C[k][np.diag_indices(3)] += reg` (a GMM's covariances regularised one by one): the second index a tuple
    computed when the code runs is `C[k][r, c]`, the diagonal; an index array is `C[k][idx]`, rows."""
    C = np.empty((2, 3, 3))
    diagonal = np.diag_indices(3)
    for k in range(2):
        C[k] = np.outer(x, x) * (k + 1)
        C[k][np.diag_indices(3)] += 0.5
        C[k][diagonal] *= x
        C[k][np.array([0, 2])] = C[k][np.array([0, 2])] * 2.0
    return np.sum(C ** 2)


def rows_filled_into_an_ndarray_constructed_by_shape(y, P):
    """sklearn t-SNE's `grad = np.ndarray((n_samples, n_components), dtype=params.dtype)`, filled row by row:
    np.empty's array, the function's own to write into."""
    Y = y.reshape(3, 2)
    dist = 1.0 / (1.0 + np.sum((Y[:, None] - Y[None]) ** 2, axis=-1))
    grad = np.ndarray((3, 2), dtype=y.dtype)
    for i in range(3):
        grad[i] = np.dot((P[i] - dist[i]) * dist[i], Y[i] - Y)
    return np.sum(grad.ravel() ** 2)


def covariances_regularised_through_flat_of_an_item(X, resp):
    """sklearn's GaussianMixture M-step: `covariances[k].flat[::n_features + 1] += reg_covar`, the diagonal of
    each covariance, written into `covariances` (also `.flat` of an item of a transposed array, and `=`)."""
    n_components, n_features = resp.shape[1], X.shape[1]
    nk = resp.sum(axis=0) + 10 * np.finfo(resp.dtype).eps
    means = np.dot(resp.T, X) / nk[:, np.newaxis]
    covariances = np.empty((n_components, n_features, n_features))
    for k in range(n_components):
        diff = X - means[k]
        covariances[k] = np.dot(resp[:, k] * diff.T, diff) / nk[k]
        covariances[k].flat[:: n_features + 1] += 1e-2 * X[0, 0] ** 2
    turned = np.zeros((n_features, n_features, n_components)).transpose(2, 1, 0)
    for k in range(n_components):
        turned[k] = covariances[k] * 2.0
        turned[k].flat[[0, n_features * n_features - 1]] = means[k, 0]
    return np.sum(np.linalg.slogdet(covariances)[1]) + np.sum(turned ** 2)


def rmsprop_over_model_items_with_buffers_reset(W1, W2):
    """Karpathy's pong: `for k, v in model.items(): ...; model[k] += ...; grad_buffer[k] = np.zeros_like(v)`:
    `v` is the array changed in place, read afterwards for its shape and dtype only."""
    model = {"W1": W1, "W2": W2 * 1.0}
    grad_buffer = {k: np.zeros_like(v) for k, v in model.items()}
    rmsprop_cache = {k: np.zeros_like(v) for k, v in model.items()}
    for t in range(2):
        h = np.maximum(model["W1"] @ np.full(3, 0.5 + t), 0.0)
        p = 1.0 / (1.0 + np.exp(-model["W2"] @ h))
        grad_buffer["W2"] += (1.0 - p) * h
        grad_buffer["W1"] += np.outer((1.0 - p) * model["W2"] * (h > 0), np.full(3, 0.5 + t))
    for k, v in model.items():
        g = grad_buffer[k]
        rmsprop_cache[k] = 0.9 * rmsprop_cache[k] + 0.1 * g ** 2
        model[k] += 1e-2 * g / (np.sqrt(rmsprop_cache[k]) + 1e-5)
        grad_buffer[k] = np.zeros_like(v) + v.shape[0]
    return np.sum(model["W1"] ** 2) + np.sum(model["W2"]) + np.sum(grad_buffer["W2"])


_WEIGHTS = np.array([1.0, 2.0])


def _cosine_of_weighted(x):
    return np.sum(np.cos(x * _WEIGHTS))


def _weights_doubled():
    global _WEIGHTS
    _WEIGHTS = _WEIGHTS * 2.0


def module_weights_rebound_after_being_read(x):
    """`global _WEIGHTS` rebound after being read (here, and in a helper, read after by a helper): the backward
    pass needs the values read, where generated code reads a module's name as it is when the line runs. (Set
    back as it was at the end, so each call starts from the same weights.)"""
    global _WEIGHTS
    a = np.sum(np.sin(x * _WEIGHTS)) + _cosine_of_weighted(x)
    _weights_doubled()
    b = _cosine_of_weighted(x ** 2)
    _WEIGHTS = _WEIGHTS + 1.0
    c = np.sum(np.cos(x * _WEIGHTS))
    _WEIGHTS = (_WEIGHTS - 1.0) / 2.0
    return a + b + c


_RATE = 0.5


def module_rate_decayed_in_a_loop(w):
    """`global _RATE` first set inside a loop: each pass starts from the module's value (the first from the
    one before the call), read before being set; set back at the end."""
    global _RATE
    for step in range(3):
        w = w - _RATE * np.tanh(w)
        _RATE = _RATE * 0.5
    _RATE = 0.5
    return np.sum(w ** 2)


def module_weights_set_then_rebound_by_a_helper(x):
    """Set here (`global`), then rebound by a helper: Python reads the helper's value afterwards, this function's
    own binding would not show it (refused)."""
    global _WEIGHTS
    _WEIGHTS = _WEIGHTS + 1.0
    _weights_doubled()
    out = np.sum(x * _WEIGHTS)
    _WEIGHTS = (_WEIGHTS / 2.0) - 1.0
    return out


def _logged(fn):
    """A decorator passing every argument through: a function passed by keyword goes through **kwargs."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        verbose = kwargs.pop("verbose", False)
        if verbose and "act" in kwargs:
            print(f"{fn.__name__} with {len(kwargs)} keywords")
        return fn(*args, **kwargs)
    return wrapper


@_logged
def _activated(x, act=np.tanh, scale=1.0):
    return act(x) * scale


def function_through_wrapper_keywords(x):
    return np.sum(_activated(x, act=np.sin, scale=2.0)) + np.sum(_activated(x, verbose=False) ** 2) \
        + np.sum(_activated(x, act=np.cos, verbose=True))


def popped_options(x, options):
    opts = dict(options)
    w = opts.pop("w", 1.0)
    b = opts.pop("b")
    z = opts.pop("z", x[0])  # absent: the default
    return np.sum(x * w + b) * z + len(opts)


def popped_from_a_built_dict(x):
    d = {"a": x * 2.0, "b": x ** 2, "c": 3.0}
    a = d.pop("a")
    return np.sum(a * d["b"]) + len(d) + np.sum(d.pop("q", x))


def pops_in_a_loop(x):
    d = {"a": x[0] * 2.0}
    s = 0.0
    for k in range(3):  # the first pass pops "a"; the next ones get the default
        s = s + d.pop("a", x[1]) * x[2]
    return s + len(d)


def updates_in_a_loop(x):
    d = {"a": x[0] * 2.0}
    s = 0.0
    for k in range(3):
        s = s + d["a"] * x[2]
        d.update(a=d["a"] * x[1])  # the next pass reads the new item
    return s


def _pops_scale(x, **kwargs):
    s = 0.0
    for k in range(2):
        s = s + kwargs.pop("scale", 1.0) * x[k]
    return s


def pops_keywords_in_a_loop(x):
    return _pops_scale(x, scale=x[2] ** 2)


def pops_a_missing_key(x):
    d = {"a": x}
    return np.sum(d.pop("missing"))


def reductions_where(X):
    """np.sum, np.mean, np.prod, np.max, np.min, np.var and np.std with where= (and initial=, axis=, keepdims=,
    ddof=), and the first five with initial= (functions and methods): of the entries chosen, as the np.where code each stands for
    (rules/standing_for.py)."""
    x = X[0]
    total = np.sum(x ** 2, where=x > 0) + np.mean(x, where=x < 0.5) + np.prod(X[1], where=X[1] > 0.0, initial=2.0)
    total = total + np.sum(np.max(X, axis=1, where=X < 1.0, initial=-5.0))
    total = total + np.sum(np.min(X, axis=0, where=X > -1.0, initial=5.0, keepdims=True))
    total = total + (x ** 2).sum(where=x > 0) + X.mean(axis=0, where=X < 0.5).sum()  # (the methods too)
    total = total + np.min(x, initial=0.5) + np.max(X, axis=1, initial=-1.0).sum() + np.sum(x, initial=2.0)
    total = total + np.std(X, where=X > 0) + np.sum(np.var(X, axis=1, ddof=1, where=X > -1.0))
    total = total + x.sum(initial=2.0) * X.max(axis=0, initial=0.5).sum() + X[1].prod(initial=0.5)
    return total + np.sum(np.mean(X, axis=1, where=X > 0)) + np.max(x, where=x < 1.5, initial=0.0)


def _scaled_by_default(x, scale=2.0):
    return x * scale


def calls_a_helper_with_a_default(x):
    return np.sum(_scaled_by_default(x) ** 2)


def writes_into_an_item_of_a_slice(x):
    xs = [x[:2] * 1.0, x[1:] * 1.0]
    ys = xs[:1]  # a new list, holding the same arrays as xs
    ys[0][0] = x[2] * 5.0  # NumPy changes xs[0] too
    return np.sum(xs[0] * x[:2])


def writes_into_an_item_of_a_copied_list(x):
    xs = [x[:2] * 1.0, x[1:] * 1.0]
    ys = list(xs)
    xs[1][0] = x[0] ** 2  # ys[1] changes too
    return np.sum(ys[1] * x[1:])


def appends_to_an_item_of_a_slice(x):
    rows = [[x[0], x[1]], [x[2]]]
    top = rows[:1]
    top[0].append(x[2] * 3.0)  # rows[0] is the same list
    return sum(rows[0]) * x[1]


def writes_into_items_copied_with_the_slice(x):
    xs = [x[:2] * 1.0, x[1:] * 1.0]
    ys = [y.copy() for y in xs[:1]]
    ys[0][0] = x[2] * 5.0
    return np.sum(xs[0] * x[:2]) + np.sum(ys[0] * x[1:])


def var_where_fewer_chosen_than_ddof(X):
    """A column with no entry chosen and ddof=1: NumPy's variance there is nan (count - ddof clipped at 0)."""
    chosen = np.array([True, False, True])
    return np.concatenate([np.var(X, axis=0, ddof=1, where=chosen), np.std(X, axis=0, ddof=1, where=chosen)])


class _Cell:  # numpy-ml's RNNCell keeps its activations in a dict of lists, starting from a constant
    def __init__(self):
        self.derived_variables = {"A": [], "wrappers": [0]}

    def step(self, x):
        As = self.derived_variables["A"]
        if len(As) == 0:
            As.append(np.zeros(3))  # a constant into the list (later items carry derivatives)
        a = np.tanh(As[-1] + x)
        self.derived_variables["A"].append(a)
        return a

    def summary(self):
        dv = self.derived_variables.copy()  # numpy-ml's wrappers: a copy's list, appended to
        dv["wrappers"].append({"steps": len(dv["A"])})
        return dv


def cell_steps(x):
    cell = _Cell()
    h = cell.step(x) + cell.step(x * 2.0)
    return np.sum(h ** 2) + len(cell.summary()["wrappers"])


def clipped_through_a_loop_over_names(Wxh, Why, x):
    """min-char-rnn's `for dparam in [dWxh, dWhy]: np.clip(dparam, -5, 5, out=dparam)`: each name's array is
    changed through the loop's target."""
    dWxh, dWhy = np.zeros_like(Wxh), np.zeros_like(Why)
    h = np.tanh(Wxh @ x)
    dWhy += np.outer(np.ones(Why.shape[0]), h) * 3.0
    dWxh += np.outer(1 - h ** 2, x) * 2.0
    for dparam in [dWxh, dWhy]:
        np.clip(dparam, -1.5, 1.5, out=dparam)
    return np.sum(dWxh * Wxh) + np.sum(dWhy ** 2)


def adagrad_through_zipped_lists_of_names(Wxh, Why, x):
    """min-char-rnn's Adagrad on its arguments: `param += ...` and `mem += ...` through `zip` of lists written
    out of names, in a loop of steps."""
    mWxh, mWhy = np.zeros_like(Wxh), np.zeros_like(Why)
    for _ in range(2):
        h = np.tanh(Wxh @ x)
        dWxh, dWhy = np.outer(1 - h ** 2, x) * np.sum(Why), np.outer(np.ones(Why.shape[0]), h)
        for param, dparam, mem in zip([Wxh, Why], [dWxh, dWhy], [mWxh, mWhy]):
            mem += dparam * dparam
            param += -0.1 * dparam / np.sqrt(mem + 1e-8)
    return np.sum(np.tanh(Why @ np.tanh(Wxh @ x)) ** 2)


def _sgd_through_a_loop_over_parameters(W, b, gW, gb):
    for p, g in zip([W, b], [gW, gb]):
        p -= 0.1 * g


def loop_over_names_in_a_helper(w, v):
    """A helper's `for p, g in zip([W, b], [gW, gb]): p -= g`: the caller's arrays change, each its own."""
    W, b = w * 1.0, v * 1.0
    _sgd_through_a_loop_over_parameters(W, b, W ** 2, b ** 3)
    return np.sum(W ** 3) + np.sum(b * w[:2])


def loop_over_names_in_branches_and_passes(a, b):
    """The same name twice, a branch in the body, a loop around, and the target read after the loop."""
    da, db = a * 2, b * 3
    for d in [da, da]:
        d *= a
    for n in range(2):
        for d in (da, db):
            if np.sum(d) > 0:
                d += n * d ** 2 * 0.1
            else:
                d[0] = 3.0 * d[1]
    return np.sum(da ** 2) + np.sum(db * b) + np.sum(d)


def numbers_and_lists_through_a_loop_over_names(a, b):
    """A number is only rebound in the target (Python's `c += v`); a list's item set is the list's."""
    x1, x2, s = float(a[0]), float(a[1]), np.sum(a)
    for c in [x1, x2, s]:
        c += b[0]
    r1, r2 = [a[0], a[1]], [b[0], b[1]]
    for row in [r1, r2]:
        row[0] = row[1] * 3.0
    return x1 * 2 + x2 + s * c + r1[0] * r2[0] + r1[1]


def matrix_factorisation_written_item_by_item(P, Q, R):
    """quuxlabs' matrix factorisation: `P[i][k] = ...` into arrays, the first index an integer (a view's item)."""
    P, Q = P.copy(), Q.copy()
    for _ in range(2):
        for i in range(len(R)):
            for j in range(len(R[i])):
                if R[i][j] > 0:
                    eij = R[i][j] - np.dot(P[i, :], Q[:, j])
                    for k in range(P.shape[1]):
                        P[i][k] = P[i][k] + 0.05 * (2 * eij * Q[k][j] - 0.02 * P[i][k])
                        Q[k][j] += 0.05 * (2 * eij * P[i][k] - 0.02 * Q[k][j])
    T = np.zeros((2, 2, 3))
    T[1][0][2] = P[0][0]
    T[-1][1] = Q[0, :3]
    return np.sum((R > 0) * (R - P @ Q) ** 2) + np.sum(T ** 2)


def pair_forces_written_through_a_slice(pos):
    """An MD force loop: `forces[i + 1:][mask] -= ...`, a write into the view a slice is (NumPy changes
    `forces`), then a row of a slice, a slice of a slice and a tuple with a slice, each read after through
    `forces`, `A`, and a name holding a view of `A` made before the writes."""
    N = pos.shape[0]
    forces = np.zeros_like(pos)
    energy = 0.0
    for i in range(N - 1):
        rij = pos[i] - pos[i + 1:]
        r2 = np.sum(rij ** 2, axis=1)
        mask = r2 < 3.0  # (the pair 0, 3 of the test's point is beyond the cutoff)
        inv6 = (1.0 / r2[mask]) ** 3
        energy += np.sum(4 * (inv6 ** 2 - inv6))
        f = (48 * inv6 ** 2 - 24 * inv6) / r2[mask]
        forces[i] += np.sum(f[:, None] * rij[mask], axis=0)
        forces[i + 1:][mask] -= f[:, None] * rij[mask]
    A = np.outer(pos[0], pos[1])
    B = A[:2]
    A[1:][0] = np.sin(pos[2])
    A[:, 1:][:, 0] *= pos[3, 0]
    A[0, 1:][pos[1, 1:] > 0] = 0.5
    return energy + 0.01 * np.sum(forces ** 2) + np.sum(A * np.arange(9.0).reshape(3, 3)) + np.sum(B ** 2)


def gradient_steps_through_a_loop_over_arguments(W, b, X, y):
    """`for p, g in zip([W, b], [gW, gb]): p -= 0.1 * g` in a loop of steps, `W` an array and `b` a number
    argument: NumPy changes W in place; `p -= ...` on a number only rebinds `p`, so `b` keeps its value."""
    for _ in range(2):
        err = X @ W + b - y
        gW, gb = X.T @ err, np.sum(err)
        for p, g in zip([W, b], [gW, gb]):
            p -= 0.1 * g
    return np.sum((X @ W + b - y) ** 2) + b


class _MaybeBiased:
    """A layer whose bias is optional: set in `__init__` only when given, read back by `getattr(self, "b", None)`."""

    def __init__(self, W, b=None):
        self.W = W
        if b is not None:
            self.b = b

    def __call__(self, x):
        out = x @ self.W
        if getattr(self, "b", None) is not None:
            out = out + self.b
        return out


BIASED, UNBIASED = _MaybeBiased(np.eye(3) * 0.5, np.ones(3)), _MaybeBiased(np.eye(3) * 2.0)


def attributes_read_with_a_default(x, b):
    """`getattr(obj, name, default)`: of a module's layer (with or without the attribute), of one made here, and
    of a module (`getattr(np, "trapz", None)`, where NumPy 2 has none)."""
    bare = _MaybeBiased(np.eye(3) * 0.3)
    integrate = getattr(np, "no_such_function", None) or np.sum
    return np.sum(BIASED(x) ** 2 + UNBIASED(x) * bare(x) * b) + integrate(x * getattr(np, "pi", 3.0))


def sorted_in_place(x, M):
    """`a.sort()` on an array made here, an argument (its copy) and a helper's (its caller's array): the name
    holds the sorted array, as NumPy sorts in place; `np.putmask` with one value."""
    a = x * 2.0
    a.sort()
    M.sort(axis=0)
    b = np.exp(x)
    _sorted(b)
    np.putmask(b, b > 1.0, 0.5)
    return np.sum(a * np.arange(3.0)) + np.sum(M * np.arange(6.0).reshape(2, 3)) + np.sum(b * x)


def _sorted(a):
    a.sort()


def _batchnorm_forward(x, gamma, beta, bn_param):
    """cs231n's batchnorm_forward: the running averages written into the `bn_param` dict it is given."""
    eps, momentum = bn_param.get("eps", 1e-5), bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    running_var = bn_param.get("running_var", np.zeros(x.shape[1]))
    mu, var = x.mean(axis=0), x.var(axis=0)
    out = gamma * (x - mu) / np.sqrt(var + eps) + beta
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mu
    bn_param["running_var"] = momentum * running_var + (1 - momentum) * var
    return out


class _BatchNormNet:
    def __init__(self):
        self.bn_params = [{"mode": "train"}]


BN_NET = _BatchNormNet()


def batchnorm_keeping_running_averages(x, gamma):
    """A model made before the function keeps its batch-norm state in a list of dicts: the helper's writes into
    `self.bn_params[0]` are made into it, as Python makes them (they were lost: the model never saw them), and
    into a dict made here, which the caller reads back."""
    bn_param = {"mode": "train"}
    out = _batchnorm_forward(x, gamma, 0.1, BN_NET.bn_params[0])
    again = _batchnorm_forward(x * 2.0, gamma, 0.0, bn_param)
    return np.sum(out ** 3) + np.sum(again * bn_param["running_mean"])


def running_average_read_back(x, gamma):
    """Refused: the running mean, written into the model's dict carrying a derivative, read back out of it."""
    _batchnorm_forward(x, gamma, 0.0, BN_NET.bn_params[0])
    return np.sum(BN_NET.bn_params[0]["running_mean"] * x)


def parts_of_arrays_set(x):
    """`z.real = v`, `z.imag = v` write into `z` in place (its real or imaginary part; of a real array, all of it):
    the derivative of the value written was lost (a wrong derivative, no error)."""
    z = x * (1 + 1j)
    z.real = x ** 2
    w = x * (2 - 1j)
    w.imag = np.sin(x)
    a = x * 2.0
    a.real = x ** 3
    return np.sum(np.abs(z) ** 2 + np.abs(w)) + np.sum(a * x)


def parts_of_array_slices_set(x):
    """`z[:2].real = v`, `z[1:].imag = v` write into `z`'s items (the attribute was set on a view tapegen's code did
    not follow: 4.05 where 5.61 is right, no error); in a loop too."""
    z = x * (1 + 1j)
    z[:2].real = x[:2] ** 2
    w = x * (2 - 1j)
    w[1:].imag = np.sin(x[1:])
    a = x * 2.0
    a[1:].real = np.cos(x[1:])
    for i in range(2):
        z[i:i + 1].imag = z[i:i + 1].real * x[i]
    return np.sum(np.abs(z) ** 2 + np.abs(w)) + np.sum(a * x)


def _subtracted_at(a, x):
    np.subtract.at(a, [0, 1, 0], x[:3])


def subtracted_at_by_a_helper(x):
    """np.subtract.at (np.add.at) by a helper into its caller's array: NumPy changes the caller's (tapegen's code
    rebound the helper's name only: 7.97 where Python gives 6.78, no error)."""
    a = x * 2.0
    _subtracted_at(a, x)
    return np.sum(a ** 2)


def picked_by_itemgetter_and_attrgetter(x):
    """`operator.itemgetter(1)` and `attrgetter("w")` as keys and as functions: the lambdas they stand for."""
    import operator
    pairs = [(x[0], 3.0), (x[1] * 2.0, 1.0), (x[2], 2.0)]
    ordered = sorted(pairs, key=operator.itemgetter(1))
    top = max(pairs, key=operator.itemgetter(1))[0]
    firsts = list(map(operator.itemgetter(0), pairs))
    get = operator.itemgetter(0, 2)
    a, c = get(x)
    Rec = namedtuple("Rec", "w b")
    records = [Rec(x[0], 1.0), Rec(x[1], 0.5)]
    lightest = min(records, key=operator.attrgetter("b"))
    return ordered[0][0] * 10.0 + top + firsts[1] * firsts[2] + a * c + lightest.w ** 2


def _sgd(params, grads, lr):
    """d2l's `sgd`: each parameter changed in place through the loop's target."""
    for param, grad in zip(params, grads):
        param -= lr * grad


class _SGD:
    def __init__(self, params, lr):
        self.params = params
        self.lr = lr

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p -= self.lr * g


def steps_through_lists_held_in_names(W, b, X, y):
    """`for p, g in zip(params, grads): p -= lr * g` over lists held in a name or an attribute (in a helper, a
    method, and inline with `enumerate`, `[:] = ` and a display of gradients): NumPy changes each list's array
    in place, which the list shows."""
    params = [W.copy(), b.copy()]
    for _ in range(2):
        err = X @ params[0] + params[1] - y
        grads = [X.T @ err, err.sum(0)]
        for g in grads:
            g *= 0.5
        _sgd(params, grads, 0.1)
    for i, p in enumerate(params):
        p *= 1.0 + 0.5 * i
    for p, g in zip(params, [W, b]):
        p[:] = p - 0.05 * g
    opt = _SGD([W * 1.0, b * 1.0], lr=0.1)
    err = X @ opt.params[0] + opt.params[1] - y
    opt.step([X.T @ err, err.sum(0)])
    return np.sum((X @ params[0] + params[1] - y) ** 2) + np.sum(opt.params[0] ** 2) + np.sum(opt.params[1])


def _batchnorm(x, gamma, bn_param):
    """cs231n's batchnorm_forward: the running mean kept in the dict its caller passed."""
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    mean = x.mean(axis=0)
    out = gamma * (x - mean) / np.sqrt(x.var(axis=0) + 1e-5)
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mean
    return out


def _scale_all(params, grads):
    for k in params:
        params[k] = params[k] - 0.1 * grads[k]


def helpers_changing_their_callers_dict(x, gamma):
    """A helper setting an item of the dict its caller passed (`bn_param["running_mean"] = ...`, also in a loop
    over its keys): the caller's dict shows it. (The loop's case read the caller's dict unchanged on b0742a1.)"""
    bn_param = {"mode": "train"}
    out = _batchnorm(x, gamma, bn_param)
    out = _batchnorm(out * 2.0, gamma, bn_param)
    params = {"a": x * 1.0, "b": gamma * 2.0}
    _scale_all(params, {"a": x, "b": gamma})
    return np.sum(out ** 3) + np.sum(bn_param["running_mean"] ** 2) + np.sum(params["a"] * params["b"][0])


def numpy_attributes_decided_when_transforming(y):
    """`hasattr(np, "trapz")` and `getattr(np, "trapezoid", None) or np.trapz` are decided when transforming
    (NumPy's version is in the cache's key): the branch not taken names a function NumPy may not have."""
    V = y ** 2
    area = np.trapz(V) if hasattr(np, "trapz") else np.trapezoid(V)
    trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")
    if not hasattr(np, "no_such_function"):
        area = area + trapezoid(np.exp(y))
    return area


def number_in_a_list_changed_through_the_loop(x):
    params = [x * 1.0, 2.0]
    for p in params:
        p -= 0.5
    return np.sum(params[0]) * params[1]


def list_held_by_an_attribute_changed_by_a_helper(x):
    opt = _SGD([x * 1.0], lr=0.1)
    _sgd(opt.params, [x], 0.1)
    return np.sum(opt.params[0] ** 2)


def item_of_a_list_another_name_holds_changed_through_the_loop(x):
    w = x * 1.0
    params = [w]
    for p in params:
        p -= 0.5
    return np.sum(w * x)


def helper_changing_its_callers_dict_in_a_loop(x, gamma):
    """`for k in params: params[k] = ...` in a helper, over its caller's dict: b0742a1 read the caller's dict
    unchanged afterwards (a wrong value and gradient)."""
    params = {"a": x * 1.0, "b": gamma * 2.0}
    _scale_all(params, {"a": x, "b": gamma})
    return np.sum(params["a"] * params["b"][0])


def dict_item_of_a_list_changed_by_a_helper(x):
    bn_params = [{"mode": "train", "running_mean": 0.0} for _ in range(2)]
    out = _batchnorm(x[None, :] * np.ones((2, 1)), x, bn_params[1])
    return np.sum(out) + np.sum(bn_params[1]["running_mean"] ** 2)


class _Net:
    def __init__(self):
        self.bn_params = [{"mode": "train", "running_mean": 0.0}]


def dict_item_of_an_attribute_changed_by_a_helper(x):
    net = _Net()
    out = _batchnorm(x[None, :] * np.ones((2, 1)), x, net.bn_params[0])
    return np.sum(out) + np.sum(net.bn_params[0]["running_mean"] ** 2)


_LABELS = np.array([0, 2, 1, 2])


def _softmax_loss(x, y):
    """cs231n's softmax_loss: the loss and its hand-written gradient `dx`, written into a copy."""
    shifted = x - np.max(x, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = np.exp(log_probs)
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


def written_into_after_an_early_return(x, y=_LABELS):
    """cs231n's `loss(X, y=None)`: `if y is None: return scores` before arrays are made and written into.
    Second order refused the gradient code's own restoring write on b0742a1 (`dx` unset on the returning path
    made it not an array of its own)."""
    scores = np.tanh(x)
    if y is None:
        return scores
    loss, dscores = _softmax_loss(scores, y)
    return loss + 0.1 * np.sum(dscores * scores)


def dict_read_out_of_a_dict_then_changed(x):
    """`p = d["inner"]; p["rm"] = v`, and the same of a list's dict: Python changes the dict `d["inner"]` is.
    b0742a1 read `d["inner"]` unchanged afterwards (a wrong value and gradient)."""
    d = {"inner": {"rm": 0.0}}
    p = d["inner"]
    p["rm"] = x * 2.0
    ps = [{"rm": 0.0}, {"rm": 1.0}]
    q = ps[1]
    q["rm"] = np.sin(x)
    return np.sum(d["inner"]["rm"] ** 2) + np.sum(ps[1]["rm"] * x) + ps[0]["rm"]


def dict_read_out_of_a_list_changed_in_a_loop(x):
    ps = [{"rm": 0.0} for _ in range(2)]
    for i in range(2):
        p = ps[i]
        p["rm"] = x * i
    return np.sum(ps[1]["rm"] * x)


def _step_strictly(params, grads, lr):
    for p, g in zip(params, grads, strict=True):
        p -= lr * g


def zips_with_strict(x, W):
    """`zip(..., strict=True)`, as linters (ruff's B905) ask for: in a loop, a comprehension, `dict(zip(...))`,
    `zip(*pairs)` and an optimiser's step through its caller's lists. It was refused ("no derivative rule for
    zip()")."""
    s = 0.0
    for a, w in zip(x, [1.0, 2.0, 3.0], strict=True):
        s = s + a * w
    s = s + sum(a * r for a, r in zip(x, W, strict=True))
    named = dict(zip(["a", "b", "c"], x, strict=True))
    for u, v in zip(*[(x[0], x[1]), (2.0, 3.0)], strict=True):
        s = s + u * v
    params = [W * 1.0, x * 2.0]
    _step_strictly(params, [params[0] * 0.5, params[1] * 0.1], 0.1)
    return s * named["c"] + np.sum(params[0] ** 2) + np.sum(params[1] ** 3)


def lambdas_made_by_a_comprehension_read_its_last_item(x, W):
    """`[lambda v: v * k for k in ...]`: each function reads `k` when called, the comprehension's last item in
    Python (the classic late-binding surprise, run as written); `k=k` binds each its own. It was refused ("name
    `k` is not defined")."""
    late = [lambda v: v * k for k in range(1, 4)]
    Ws = [W[0], W[1] * 2.0]
    rows = [lambda v: v @ w for w in Ws]
    bound = [lambda v, k=k: v ** k for k in range(1, 3)]
    return np.sum(late[0](x) + rows[0](x)) + sum(np.sum(f(x)) for f in bound)


def _doubled(g):
    @functools.wraps(g)
    def inner(*args):
        return g(*args) * 2.0
    return inner


def _applied_twice(g):
    def inner(v):
        return g(g(v))
    return inner


def decorated_local_functions(x):
    """`@deco def h(...)` inside the function: `h = deco(h)` after the def, innermost decorator first, as Python
    does (a decorator of the user's, stacked ones, `@np.vectorize`, `@functools.lru_cache`, `@functools.wraps`
    inside a decorator). It was refused ("a decorated nested function is not supported")."""
    @_doubled
    def h(v):
        return np.sin(v)

    @_doubled
    @_applied_twice
    def k(v):
        return v * 1.5 + np.cos(v)

    @np.vectorize
    def piecewise(v):
        return v * v if v > 0.5 else -v

    @functools.lru_cache(maxsize=None)
    def scale(n):
        return 1.0 / (n + 1)

    return np.sum(h(x)) + np.sum(k(x) * scale(2)) + np.sum(piecewise(x)) * scale(0)


def lists_of_functions_joined_and_repeated(x):
    """`fs + [np.tanh]`, `[np.sin] * 2 + [lambda ...]`, `(np.sin,) + (np.cos,)`, `fs += [g]`: still known one by one,
    so each call is its item's. They were calls of objects run as written (refused), and `gs = fs; fs += [g]`
    left `gs` without `g` (a wrong value, no error; now refused)."""
    fs = [np.sin, np.cos]
    gs = fs + [np.tanh]
    hs = [np.sin] * 2 + [lambda v: v * 3.0]
    ts = (np.sin,) + (np.cos, np.tanh)
    fs += [np.arctan]
    return sum(np.sum(f(x)) for f in gs) + sum(np.sum(h(x) * (k + 1)) for k, h in enumerate(hs)) + \
        sum(np.sum(t(x)) for t in ts) + np.sum(fs[2](x) * 2.0)


def _inplace_tanh(X):
    np.tanh(X, out=X)


def _inplace_square(X):
    X *= X


def _inplace_identity(X):
    """sklearn's: leaves X as it is."""


IN_PLACE_ACTIVATIONS = {"tanh": _inplace_tanh, "square": _inplace_square, "identity": _inplace_identity}


class _InPlaceMLP:
    def __init__(self, activation="tanh"):
        self.activation = activation
        self.out_activation_ = "identity"


def activations_picked_by_a_key_the_code_computes(W1, W2, x, output="square"):
    """sklearn's MLP: `ACTIVATIONS[self.activation](X)` changes X in place (`np.tanh(X, out=X)`), by a key the
    code reads from an attribute or a default. On 5e8d915 the call ran as written, its change unseen: a wrong
    derivative with no error."""
    net = _InPlaceMLP("tanh")
    h = x @ W1
    hidden = IN_PLACE_ACTIVATIONS[net.activation]
    hidden(h)
    out = h @ W2
    IN_PLACE_ACTIVATIONS[net.out_activation_](out)
    IN_PLACE_ACTIVATIONS[output](out)
    return np.sum(out)


def _pick_in_place(k):
    if k > 0.5:
        return _inplace_tanh
    return _inplace_square


def function_a_helper_returns_given_an_array_used_after(x, k=1.0):
    h = x * 2.0
    _pick_in_place(k)(h)
    return np.sum(h)


def function_item_of_an_argument_given_an_array_used_after(x, fns=(_inplace_tanh,), i=0):
    h = x * 2.0
    fns[i](h)
    return np.sum(h)


def _inplace_logistic(X):
    np.divide(1.0, 1.0 + np.exp(-X), out=X)


IN_PLACE_ACTIVATIONS["logistic"] = _inplace_logistic


class _PreallocatedMLP:
    """sklearn's MLP: `_forward_pass` fills a list made beforehand (`activations[i + 1] = ...`), then changes
    its items in place through functions picked by the names an attribute holds."""

    def __init__(self, coefs, intercepts, activation="tanh", out_activation="logistic"):
        self.coefs_ = coefs
        self.intercepts_ = intercepts
        self.n_layers_ = len(coefs) + 1
        self.activation = activation
        self.out_activation_ = out_activation

    def _forward_pass(self, activations):
        hidden_activation = IN_PLACE_ACTIVATIONS[self.activation]
        for i in range(self.n_layers_ - 1):
            activations[i + 1] = np.dot(activations[i], self.coefs_[i])
            activations[i + 1] += self.intercepts_[i]
            if (i + 1) != (self.n_layers_ - 1):
                hidden_activation(activations[i + 1])
        output_activation = IN_PLACE_ACTIVATIONS[self.out_activation_]
        output_activation(activations[i + 1])
        return activations


def items_of_a_list_changed_in_place_by_helpers(W1, W2, x):
    """A helper changing in place an array its caller passed as a list's item (`f(acts[i + 1])`, sklearn's
    `hidden_activation(activations[i + 1])`): the list's item is the changed array, in a loop, a branch and a
    dispatch. Refused on 5e8d915 ("`activations` was changed in place ... in a function it was passed to")."""
    net = _PreallocatedMLP([W1, W2], [np.zeros(3), np.full(2, 0.1)])
    activations = [x] + [None] * (net.n_layers_ - 1)
    activations = net._forward_pass(activations)
    d = {"h": x * 2.0}
    _inplace_tanh(d["h"])
    return np.sum(activations[-1] ** 2) + np.sum(activations[1]) + np.sum(d["h"] * x)


def _array_item_changed_by_a_helper_seen_by_a_name(x):
    a = [x * 2.0, x]
    h = a[0]
    _inplace_tanh(a[0])
    return np.sum(h)


def _array_item_changed_by_a_helper_held_twice(x):
    h = x * 2.0
    a = [h, h]
    _inplace_tanh(a[0])
    return np.sum(a[1])


def _array_item_changed_by_a_helper_seen_through_a_view(x):
    a = [x * 2.0]
    v = a[0][:1]
    _inplace_tanh(a[0])
    return np.sum(v) + np.sum(a[0])


class _LazyMomentum:
    """An optimiser making its state on its first step (`if not self.m: self.m = [...]`), then changing it
    item by item."""

    def __init__(self, beta=0.9):
        self.beta = beta
        self.m = []

    def step(self, params, grads):
        if not self.m:
            self.m = [np.zeros_like(p) for p in params]
        for i in range(len(params)):
            self.m[i] = self.beta * self.m[i] + grads[i]
        return [p - 0.1 * m for p, m in zip(params, self.m)]


@dataclass
class _DataclassAdam:
    lr: float = 0.1
    b1: float = 0.9
    m: list = field(default_factory=list)
    t: int = 0

    def step(self, params: list, grads: list) -> list:
        if not self.m:
            self.m = [np.zeros_like(p) for p in params]
        self.t += 1
        out = []
        for i, (p, g) in enumerate(zip(params, grads)):
            self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * g
            out.append(p - self.lr * self.m[i] / (1 - self.b1 ** self.t))
        return out


def optimiser_state_made_on_the_first_step_in_a_loop(w, x):
    """The step called in a loop: the loop carries `opt.m`, which the step's branch sets. On 5e8d915 each pass
    read the empty list from before the loop (a wrong value, with no error), and the dataclass's
    `field(default_factory=list)` left its objects opaque (refused); `list()` was refused too."""
    history = list()
    for opt in (_LazyMomentum(), _DataclassAdam(lr=0.05)):
        params = [w, np.zeros(1)]
        for _ in range(3):
            r = x @ params[0] + params[1] - 1.0
            params = opt.step(params, [x.T @ r, np.sum(r, keepdims=True)])
        history.append(np.sum((x @ params[0] + params[1] - 1.0) ** 2))
    return history[0] + history[1]


def state_a_method_sets_in_a_branch_read_in_the_next_pass(w):
    """`opt.m`, set by the step's `if not self.m:` branch, read by the next pass's step. On 5e8d915 the loop did
    not carry it: every pass read the empty list from before the loop (value 0.0 where Python gives 1.45)."""
    opt = _LazyMomentum()
    params = [w, w * 2]
    for _ in range(2):
        params = opt.step(params, [p * 1.0 for p in params])
    return np.sum(params[0] ** 2)


def _d2l_sgd(params, grads, lr, batch_size):
    """d2l's `sgd`: each parameter changed in place."""
    for param, grad in zip(params, grads):
        param[:] = param - lr * grad / batch_size


def _decayed_sgd(params, grads, lr):
    _d2l_sgd(params, grads, lr, 1)
    for k in range(len(params)):
        params[k] *= 0.99


def steps_on_a_display_of_names(w, x, y):
    """d2l's `sgd([w, b], grads, lr, batch_size)` in its training loop: NumPy changes the arrays `w` and `b` hold.
    Refused on 5e8d915 ("`w` holds the same ndarray")."""
    w = w.copy()
    b = np.zeros(1)
    for _ in range(2):
        err = x @ w + b - y
        _d2l_sgd([w, b], [x.T @ err, err.sum(0)], 0.1, len(y))
        _decayed_sgd([w, b], [x.T @ err, err.sum(0)], 0.05)
    return np.sum((x @ w + b - y) ** 2)


def _replacing_sgd(params, grads, lr):
    for k in range(len(params)):
        params[k] = params[k] - lr * grads[k]


def _a_display_whose_items_a_helper_replaces(x):
    w, b = x * 1.0, x * 2.0
    _replacing_sgd([w, b], [x, x], 0.1)
    return np.sum(w * b)


def _a_display_of_names_one_of_which_another_name_holds(x):
    w = x * 1.0
    w2 = w
    b = x * 2.0
    _d2l_sgd([w, b], [x, x], 0.1, 1)
    return np.sum(w2 * b)


def sets_of_labels_and_keys(x, labels=(0, 2, 2, 1)):
    """Sets of labels, keys and shapes (`{k for k in ...}`, `{a, b}` of computed values): a set comprehension
    and a set display of computed values were refused (no order to differentiate through), although nothing
    carrying a derivative goes into them. One that would is refused (set's NoRuleError)."""
    classes = {int(c) for c in labels}
    names = {name.upper() for name in ("w", "b", "w")}
    dims = {x.shape[0], len(labels)}
    total = 0.0
    for c in sorted(classes):
        total = total + x[c] * c
    return total * len(names) * ("W" in names) + np.sum(x) * len(dims)


def arrays_two_names_hold_changed_in_place(x):
    """`b = a; a += d`: NumPy changes the array both names hold, so `b` reads the new value (a number is only
    rebound in `a`, as Python does); `prev = h` in a loop, then `h += v`: `prev` holds the new value where it
    held that very array when the code runs. Both were refused (an error when the code ran)."""
    a = x * 1.0
    b = a
    a += x ** 2
    n = 1.0
    m = n
    n += np.sum(x)
    c = x * 2.0
    keep = c
    for _ in range(3):
        c *= 1.5 + np.sin(x)
    h = x * 1.0
    for k in range(2):
        prev = h
        h += np.tanh(prev)
        h = h * 0.5
    return np.sum(b * x) + m * n + np.sum(keep * x) + np.sum(h * prev)


class _DenseForMomentum:
    def __init__(self, W):
        self.weights = W

    def forward(self, inputs):
        self.output = np.tanh(inputs @ self.weights)
        return self.output


class _SGDWithMomentum:  # nnfs's optimiser: its state made on a layer the first time it sees it
    def __init__(self, learning_rate=0.1, momentum=0.5):
        self.learning_rate, self.momentum = learning_rate, momentum

    def update_params(self, layer, dweights):
        if not hasattr(layer, "weight_momentums"):
            layer.weight_momentums = np.zeros_like(layer.weights)
        updates = self.momentum * layer.weight_momentums - self.learning_rate * dweights
        layer.weight_momentums = updates
        layer.weights = layer.weights + updates


def state_made_where_hasattr_says_it_is_missing(W, X):
    """nnfs's `if not hasattr(layer, "weight_momentums"): layer.weight_momentums = ...` in a training loop: false
    on the first pass, true after. tapegen took it as true (the attribute carried through the loop) and raised
    when the code ran; it is now tested when the code runs."""
    layer, optimizer = _DenseForMomentum(W), _SGDWithMomentum()
    total = 0.0
    for _ in range(3):
        out = layer.forward(X)
        total = total + np.sum(out ** 2)
        optimizer.update_params(layer, X.T @ out * 0.1)
    return total + np.sum(layer.weights ** 2)


def _augmented_sgd(params, grads, lr):
    for p, g in zip(params, grads):
        p -= lr * g


def steps_on_a_tuple_display_of_names(w, x, y):
    """`sgd((w, b), grads, lr)` with a tuple of names, the helper doing `p -= lr * g` for each: NumPy changes the
    arrays `w` and `b` hold, as with a list (the tuple was refused when the code ran: `p` held elsewhere)."""
    w = w.copy()
    b = np.zeros(1)
    for _ in range(2):
        err = x @ w + b - y
        _augmented_sgd((w, b), (x.T @ err, err.sum(0)), 0.1)
        _d2l_sgd((w, b), [x.T @ err, err.sum(0)], 0.05, len(y))
    return np.sum((x @ w + b - y) ** 2)


def items_of_a_list_other_names_hold_changed_in_place(x):
    """`h = hs[0]; hs[0] += v` and `params = [W1, b1]` changed through the list: NumPy changes the arrays the
    other names hold; they hold the new values after (both refused when the code ran)."""
    hs = [x * 1.0, x * 2.0]
    h = hs[0]
    hs[0] += np.sin(x)
    W1, b1 = x * 3.0, x[:1] * 1.0
    params = [W1, b1]
    for p in params:
        p *= 0.5
    return np.sum(h * x) + np.sum(W1 * b1) + np.sum(hs[1])


def closures_made_by_a_local_function_read_names_when_called(x):
    """A function a local function makes (a decorator's wrapper, a factory's lambda) reads the names of the
    function around both when it is called, as Python's closure cells do: `scale` rebound after `@deco` (they
    read it as it was when the wrapper was made: a wrong value and gradient with no error on 481258e)."""
    scale = x * 2.0

    def deco(g):
        def wrapper(v):
            return g(v) * scale
        return wrapper

    @deco
    def wavy(v):
        return np.sin(v)

    def factory(k):
        return lambda v: v * scale + k

    shifted = factory(x[0])
    scale = scale + x ** 2
    return np.sum(wavy(x)) + np.sum(shifted(x) * x)
