"""Models written as classes, differentiated through their bound methods (tests/test_objects.py)."""
import numpy as np


def relu(z):
    return np.maximum(z, 0.0)


class MLP:
    """An activation function kept in an attribute (`self.act = np.tanh`), as from-scratch code does."""

    def __init__(self, W1, W2, act=np.tanh):
        self.W1, self.W2 = W1, W2
        self.act = act

    def loss(self, x):
        h = self.act(self.W1 @ x)
        return np.sum((self.W2 @ h) ** 2)

    def __call__(self, x):
        return self.loss(x)


class Layer:
    def __init__(self, W, act):
        self.W, self.act = W, act

    def forward(self, x):
        return self.act(self.W @ x)


class Sequential:
    """Layers of one class, each with its own activation, in a list attribute."""

    def __init__(self, layers):
        self.layers = layers

    def loss(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return np.sum(x ** 2)


class Stack:
    """A list of functions in an attribute, and a lambda in another."""

    def __init__(self):
        self.acts = [np.tanh, np.sin]
        self.scale = lambda z: 2.0 * z

    def f(self, x):
        for a in self.acts:
            x = a(x)
        return np.sum(self.scale(x))


# --- classes that change how their objects are read -------------------------------------------------------
import functools  # noqa: E402
from collections import namedtuple  # noqa: E402


class Namespace:
    """Attributes served by __getattr__ from a dict (an AttrDict-style parameter holder)."""

    def __init__(self, params):
        self._p = params

    def __getattr__(self, name):
        return self._p[name]


def namespace_attributes(x):
    p = Namespace({"w": x, "s": 3.0})
    return np.sum(np.sin(p.w) * p.s)


class Store:
    def __init__(self):
        self._d = {}

    def __getitem__(self, key):
        return self._d[key]

    def __setitem__(self, key, value):
        self._d[key] = value


def store_items(x):
    s = Store()
    s["a"] = x ** 2
    s["a"] += np.sin(x)
    return np.sum(s["a"] * x)


class Scaled:
    def __init__(self, x, n):
        self.x, self.n = x, n

    def __iter__(self):
        for k in range(self.n):
            yield self.x * (k + 1)


def iterate_a_generator_class(x):
    total = 0.0
    for v in Scaled(x, 3):
        total = total + np.sum(np.tanh(v))
    return total


Cfg = namedtuple("Cfg", "T scale")
CFG = Cfg(T=2.0, scale=5.0)


class Steps:
    def __init__(self):
        self.T = 3


STEPS = Steps()


def attribute_named_T(x):
    """`cfg.T`, `m.T` of a record or an object: the attribute, not a transpose."""
    s = np.sum(x / CFG.T)
    for t in range(STEPS.T):
        s = s + x[t] ** 2
    return s


class Cached:
    def __init__(self, x):
        self.x = x

    @functools.cached_property
    def sq(self):
        return self.x ** 2


def reads_a_cached_property(x):
    return np.sum(Cached(x).sq)


class Doubled:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        return getattr(obj, self.name) * 2.0

    def __set__(self, obj, value):
        setattr(obj, self.name, value)


class WithDescriptor:
    w = Doubled()

    def __init__(self, w):
        self.w = w


def reads_a_descriptor(x):
    return np.sum(WithDescriptor(x).w ** 2)


class Module:
    def __init__(self):
        object.__setattr__(self, "_params", {})

    def __setattr__(self, name, value):
        self._params[name] = value
        object.__setattr__(self, name, value)


class Linear(Module):
    def __init__(self, W):
        super().__init__()
        self.W = W


def sets_through_setattr(x):
    m = Linear(x * 2.0)
    return np.sum(m.W ** 2) + np.sum(m._params["W"])


class Plain:
    def __init__(self, x):
        self.w = x


def reads_dunder_dict(x):
    return np.sum(Plain(x).__dict__["w"] ** 2)


class Wrapped:
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a


def converts_with_dunder_array(x):
    return np.sum(np.asarray(Wrapped(x)) ** 2)


class Listed:
    def __init__(self, x):
        self.items = [x[:2], x[2]]

    def __iter__(self):
        return iter(self.items)


def iterates_a_returned_iterator(x):
    s = 0.0
    for v in Listed(x):
        s = s + np.sum(v ** 2)
    return s


# --- writing into an array an attribute holds -----------------------------------------------------------
class Responsibilities:
    """numpy-ml's GMM E-step: `self.Q[i, :] = q_i` row by row."""

    def __init__(self, n):
        self.Q = np.zeros((n, 2))

    def e_step(self, x):
        for i in range(self.Q.shape[0]):
            self.Q[i, :] = np.tanh(x[:2] * (i + 1))
        self.Q[0] += x[2] ** 2
        return np.sum(self.Q ** 2)


HELD = Responsibilities(3)


def writes_rows_of_an_attribute_made_here(x):
    return Responsibilities(3).e_step(x)


def writes_rows_of_an_attribute_held_before(x):
    return HELD.e_step(x)


def reads_an_attribute_array_before_writing_into_it(x):
    Q = HELD.Q
    HELD.Q[1, :] = x[:2]
    return np.sum(Q * 2.0)


# --- dicts of layers, objects as defaults, a sparse branch not taken --------------------------------------
from collections import OrderedDict  # noqa: E402

LAYER_DICT = {"fc1": Layer(W1 := np.array([[1.0, 0.5, 0.0], [0.2, 0.3, -0.4], [0.1, 0.0, 0.9]]), np.tanh),
              "fc2": Layer(W1.T, np.sin)}


class Encoder:
    """numpy-ml's VAE: an OrderedDict of layers walked with .items() and .values()."""

    def __init__(self):
        self.encoder = OrderedDict()
        self.encoder["a"] = Layer(W1, np.tanh)
        self.encoder["b"] = Layer(W1 * 0.5, np.cos)

    def forward(self, x):
        out = x
        for k, layer in self.encoder.items():
            out = layer.forward(out)
        for layer in self.encoder.values():
            out = out + layer.forward(x)
        return np.sum(out)


ENCODER = Encoder()


def walks_a_dict_of_layers(x):
    out = x
    for name, layer in LAYER_DICT.items():
        out = layer.forward(out)
    return np.sum(out ** 2)


def walks_an_objects_ordered_dict(x):
    return ENCODER.forward(x)


def takes_an_object_as_default(x, m=Layer(W1, np.sin)):
    return np.sum(m.forward(x) ** 2)


def column_norm(X):
    """numpy-ml's factorization helper: a branch for sparse input."""
    import scipy.sparse as sps
    if sps.issparse(X):
        return np.asarray(np.sqrt(X.multiply(X).sum(axis=0)))[0]
    return np.sqrt(np.sum(X * X, axis=0))


def calls_a_helper_with_a_sparse_branch(x):
    return np.sum(column_norm(np.outer(x, x) + 1.0))


# --- methods as values -------------------------------------------------------------------------------------
class Net:
    """`self.act = self._relu if kind == "relu" else self._tanh`: a bound method kept in an attribute."""

    def __init__(self, kind="relu"):
        self.W = W1
        self.act = self._relu if kind == "relu" else self._tanh

    def _relu(self, z):
        return np.maximum(z, 0.0)

    def _tanh(self, z):
        return np.tanh(z)

    def loss(self, x):
        return np.sum(self.act(self.W @ x) ** 2)


NET = Net("tanh")


def calls_a_method_an_attribute_holds(x):
    return NET.loss(x) + Net("tanh").loss(x * 2.0)


class Doubler:
    def __init__(self, W):
        self.W = W

    @classmethod
    def create(cls, n):
        return cls(np.eye(n) * 2.0)

    def __call__(self, x):
        return self.W @ x


def makes_an_object_through_a_classmethod(x):
    return np.sum(Doubler.create(3)(x) ** 2)


def uses_a_simple_namespace(x):
    from types import SimpleNamespace
    p = SimpleNamespace(w=x, b=2.0)
    p.w = p.w * 3
    p.c = np.sin(p.w)
    return np.sum(p.c * p.b)


def takes_a_method_by_name(x):
    n = Net("relu")
    f = getattr(n, "_tanh")
    return np.sum(f(x))


def _make_scaler(k):
    return lambda z: z * k


def builds_lists_of_functions(x):
    fs = [lambda z, k=k: z * (k + 1) for k in range(3)]
    gs = [_make_scaler(k) for k in (1.0, 2.0)]
    return sum(np.sum(f(x) ** 2) for f in fs) + sum(np.sum(np.sin(g(x))) for g in gs)


class Chain:
    """A Sequential whose __iter__ is `return iter(self.layers)`."""

    def __init__(self, layers):
        self.layers = layers

    def __iter__(self):
        return iter(self.layers)

    def forward(self, x):
        for layer in self:
            x = layer.forward(x)
        return x


CHAIN = Chain([Layer(W1, np.tanh), Layer(W1.T, np.sin)])


def iterates_a_chain_of_layers(x):
    made = Chain([Layer(W1 * 0.5, np.cos), Layer(W1, np.tanh)])
    return np.sum(CHAIN.forward(x) ** 2) + np.sum(made.forward(x))


class Reversed:
    def __init__(self, x):
        self.items = [x[:2], x[2]]

    def __iter__(self):
        return reversed(self.items)


def iterates_an_iterator_it_cannot_follow(x):
    return sum(np.sum(v ** 2) for v in Reversed(x))


class Config:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class Configured:
    def __init__(self, W, **options):
        self.W = W
        self.__dict__.update(options)

    def loss(self, x):
        return np.sum(np.tanh(self.W @ x) * self.scale) + self.bias


def sets_attributes_through_dict_update(x):
    c = Config(w=x, s=3.0)
    m = Configured(np.outer(x, x), scale=2.0, bias=x[0])
    return np.sum(c.w * c.s) + m.loss(x)


# --- names read from another module, a class, or a method: changed between calls -----------------------
from cases import config_values  # noqa: E402


class Scaled2:
    factor = 2.0

    def act(self, z):
        return np.tanh(z)

    def loss(self, x):
        return np.sum(self.act(x) * Scaled2.factor * config_values.SCALE)


SCALED = Scaled2()


def reads_settings_and_a_method(x):
    return SCALED.loss(x)


class ClassLevelActivation:
    act = np.tanh  # a ufunc in the class body: not a method, called as it is

    def f(self, x):
        return np.sum(self.act(x) ** 2)


from types import SimpleNamespace as _Namespace  # noqa: E402

SETTINGS = _Namespace(act=np.sin, k=2.0)


def functions_in_class_bodies_and_namespaces(x):
    return ClassLevelActivation().f(x) + np.sum(SETTINGS.act(x) * SETTINGS.k)


# --- a class held in an attribute, its functions called through it (Nielsen's network2.py) ------------------
class CrossEntropyCost:
    @staticmethod
    def fn(a, y):
        return np.sum(np.nan_to_num(-y * np.log(a) - (1 - y) * np.log(1 - a)))

    @staticmethod
    def delta(z, a, y):
        return a - y


class QuadraticCost:
    @classmethod
    def fn(cls, a, y):
        return cls.scale * np.linalg.norm(a - y) ** 2

    scale = 0.5

    def delta(z, a, y):  # a plain function of the class, called through it without an object
        return (a - y) * z


class CostNet:
    """`self.cost = cost` of a default `cost=CrossEntropyCost`, then `self.cost.fn(a, y)`: network2.py's."""

    def __init__(self, W, cost=CrossEntropyCost):
        self.W = W
        self.cost = cost

    def total_cost(self, x, y):
        a = 1.0 / (1.0 + np.exp(-(self.W @ x)))
        return self.cost.fn(a, y) + np.sum((self.cost).delta(x, a, y) ** 2)


COST_NET = CostNet(W1, cost=QuadraticCost)
TARGET = np.array([0.2, 0.9, 0.4])


def calls_a_staticmethod_through_a_class_an_attribute_holds(x):
    return CostNet(W1).total_cost(x, TARGET)


def calls_a_classmethod_through_a_class_an_attribute_holds(x):
    net = CostNet(W1 * 0.5, QuadraticCost)
    return net.total_cost(x, TARGET) + COST_NET.total_cost(x * 2.0, TARGET)


# --- copies of an optimizer, one per parameter (ML-From-Scratch's `self.W_opt = copy.copy(optimizer)`) --------
class Adagrad:
    def __init__(self, learning_rate=0.01):
        self.learning_rate = learning_rate
        self.G = None
        self.eps = 1e-8

    def update(self, w, grad_wrt_w):
        if self.G is None:
            self.G = np.zeros(np.shape(w))
        self.G += np.power(grad_wrt_w, 2)
        return w - self.learning_rate * grad_wrt_w / np.sqrt(self.G + self.eps)


OPTIMIZER = Adagrad(learning_rate=0.05)


def steps_with_copies_of_an_optimizer(x):
    import copy
    proto = Adagrad(learning_rate=0.1)
    W_opt, b_opt = copy.copy(proto), copy.deepcopy(proto)
    w, b = x, x[:2] * 0.5
    for _ in range(2):
        w = W_opt.update(w, w ** 3 - 1.0)
        b = b_opt.update(b, np.sin(b) + w[:2])
    return np.sum(w ** 2) + np.sum(b ** 2) + np.sum(W_opt.G)


def steps_with_a_copy_of_a_module_optimizer(x):
    import copy
    opt = copy.copy(OPTIMIZER)
    w = opt.update(x, x ** 2)
    return np.sum(opt.update(w, np.cos(w)) ** 2)


def copies_an_optimizer_holding_an_array(x):
    import copy
    proto = Adagrad(learning_rate=0.1)
    proto.G = np.ones(3)
    opt = copy.copy(proto)  # shares proto.G, which opt.update changes in place
    opt.update(x, x * 2.0)
    return np.sum(proto.G * x)


# --- a function attribute set on a lambda an object holds (ML-From-Scratch's regression.py) -----------------
class LinearRegression:
    def __init__(self):
        self.regularization = lambda x: 0
        self.regularization.grad = lambda x: 0

    def predict(self, X):
        return X @ self.w


class RidgeLike:
    def __init__(self, alpha):
        self.regularization = lambda w: alpha * 0.5 * w @ w
        self.regularization.grad = lambda w: alpha * w


def fits_a_regression_made_here(x):
    model = LinearRegression()
    model.w = x
    y_pred = model.predict(np.outer(np.arange(1.0, 4.0), x))
    return np.mean(0.5 * (1.0 - y_pred) ** 2 + model.regularization(x))


def calls_a_function_attribute(x):
    model = RidgeLike(0.3)
    return np.sum(model.regularization.grad(x) ** 2) + model.regularization(x)


# --- layers appended to a list, linked to each other (nnfs.io's Model: add, finalize, forward) -------------
class LinkedInput:
    def forward(self, inputs):
        self.output = inputs


class LinkedDense:
    def __init__(self, weights):
        self.weights = weights

    def forward(self, inputs):
        self.output = np.dot(inputs, self.weights)


class LinkedTanh:
    def forward(self, inputs):
        self.output = np.tanh(inputs)


class LinkedModel:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def finalize(self):
        self.input_layer = LinkedInput()
        layer_count = len(self.layers)
        self.trainable_layers = []
        for i in range(layer_count):
            if i == 0:
                self.layers[i].prev = self.input_layer
                self.layers[i].next = self.layers[i + 1]
            elif i < layer_count - 1:
                self.layers[i].prev = self.layers[i - 1]
                self.layers[i].next = self.layers[i + 1]
            else:
                self.layers[i].prev = self.layers[i - 1]
                self.layers[i].next = None
                self.output_layer_activation = self.layers[i]
            if hasattr(self.layers[i], "weights"):
                self.trainable_layers.append(self.layers[i])

    def forward(self, X):
        self.input_layer.forward(X)
        for layer in self.layers:
            layer.forward(layer.prev.output)
        return layer.output


def runs_a_linked_model(W):
    model = LinkedModel()
    model.add(LinkedDense(W[:, :3]))
    model.add(LinkedTanh())
    model.add(LinkedDense(W[:, 1:]))
    model.finalize()
    out = model.forward(np.outer(np.arange(1.0, 3.0), W[0]))
    reg = sum(np.sum(layer.weights ** 2) for layer in model.trainable_layers)
    return np.sum(out ** 2) + 0.1 * reg + np.sum(model.layers[0].output) + np.sum(model.layers[1].prev.output)


def walks_layers_of_one_class_appended(W):
    layers = []
    layers.append(LinkedDense(W))
    layers.append(LinkedDense(W.T * 2.0))
    x = np.arange(1.0, 4.0)
    for layer in layers:
        layer.forward(x)
        x = np.tanh(layer.output)
    layers[0].forward(x)
    return np.sum(x) + np.sum(layers[0].output ** 2) + np.sum(layers[-1].output)
