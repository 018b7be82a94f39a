"""Objects of the user's classes: bound methods differentiated for their object (what its attributes hold,
functions and objects, known when transforming and checked before each call), callable objects, and
classes of installed packages followed like the user's own."""
import sys
import textwrap

import numpy as np
import pytest

import tapegen as tg
from cases import object_models as om
from conftest import numeric_vjp
from modes import check_modes

RNG = np.random.default_rng(3)
W1, W2 = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 3))
X = np.array([0.3, -0.7, 1.2])


def _fd_grad(f, x):
    return numeric_vjp(f, (x,), 0, 1.0)


@pytest.mark.parametrize("act", [np.tanh, om.relu, lambda z: z ** 3], ids=["ufunc", "function", "lambda"])
def test_a_bound_method_calling_a_function_its_object_holds(act):
    model = om.MLP(W1, W2, act)
    np.testing.assert_allclose(tg.grad(model.loss)(X), _fd_grad(model.loss, X), rtol=1e-6, atol=1e-8)
    check_modes(model.loss, X.copy())


def test_a_function_attribute_replaced_between_calls_has_the_code_made_again():
    model = om.MLP(W1, W2)
    gradient = tg.grad(model.loss)
    gradient(X)
    model.act = np.sin
    np.testing.assert_allclose(gradient(X), _fd_grad(model.loss, X), rtol=1e-6, atol=1e-8)


def test_two_objects_of_one_class_get_their_own_code():
    tanh_model, sin_model = om.MLP(W1, W2, np.tanh), om.MLP(W1, W2, np.sin)
    for model in (tanh_model, sin_model, tanh_model):
        np.testing.assert_allclose(tg.grad(model.loss)(X), _fd_grad(model.loss, X), rtol=1e-6, atol=1e-8)


def test_a_callable_object_is_differentiated_through_its_call():
    model = om.MLP(W1, W2, np.sin)
    np.testing.assert_allclose(tg.grad(model)(X), _fd_grad(model, X), rtol=1e-6, atol=1e-8)
    out, tangent = tg.jvp(model, (X,), (np.ones(3),))
    assert np.isclose(out, model(X))
    np.testing.assert_allclose(tangent, _fd_grad(model, X).sum(), rtol=1e-6)


@pytest.mark.parametrize("how", ["bound", "closure"])
def test_layers_of_one_class_with_their_own_activations_in_a_list_attribute(how):
    seq = om.Sequential([om.Layer(W1, np.tanh), om.Layer(W2, np.sin)])
    f = seq.loss if how == "bound" else (lambda x: seq.loss(x))
    gradient = tg.grad(f)
    np.testing.assert_allclose(gradient(X), _fd_grad(f, X), rtol=1e-6, atol=1e-8)
    seq.layers[1].act = np.cos  # an item's function replaced, a layer added, a layer replaced: made again
    np.testing.assert_allclose(gradient(X), _fd_grad(f, X), rtol=1e-6, atol=1e-8)
    seq.layers.append(om.Layer(np.eye(2), np.tanh))
    np.testing.assert_allclose(gradient(X), _fd_grad(f, X), rtol=1e-6, atol=1e-8)
    seq.layers[2] = om.Layer(np.ones((2, 2)), om.relu)
    np.testing.assert_allclose(gradient(X), _fd_grad(f, X), rtol=1e-6, atol=1e-8)


def test_a_list_of_functions_and_a_lambda_in_attributes():
    stack = om.Stack()
    check_modes(stack.f, X.copy())


def test_the_code_made_for_an_object_is_forgotten_with_it():
    import gc
    import weakref

    from tapegen import pipeline
    model = om.MLP(W1, W2, np.sin)
    tg.grad(model.loss)(X)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None
    held = [k for cache in pipeline._CACHES.values() for k in cache if isinstance(k, tuple)
            and any(isinstance(part, pipeline.Receiver) for part in k)]
    assert all(part.obj is not None for k in held for part in k if isinstance(part, pipeline.Receiver))


_PACKAGE = '''
import numpy as np


class Dense:
    def __init__(self, W, act="tanh"):
        self.W = W
        self.act_fn = Tanh() if act == "tanh" else Sine()

    def forward(self, X):
        return self.act_fn(X @ self.W)


class Tanh:
    def __call__(self, z):
        return np.tanh(z)


class Sine:
    def __call__(self, z):
        return np.sin(z)


def describe(W):
    match W:
        case np.ndarray(ndim=2):
            return f"{W.shape}"
    return "?"


def scaled(x):
    match x:
        case np.ndarray():
            return 2.0 * x
    return x
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A package installed into a site-packages directory (as `pip install` puts numpy-ml)."""
    site = tmp_path / "lib" / "site-packages"
    (site / "installed_layers").mkdir(parents=True)
    (site / "installed_layers" / "__init__.py").write_text(textwrap.dedent(_PACKAGE))
    monkeypatch.syspath_prepend(str(site))
    import installed_layers
    yield installed_layers
    sys.modules.pop("installed_layers", None)


def test_an_installed_packages_classes_are_followed_like_the_users(installed):
    W = RNG.normal(size=(3, 2))
    for act in ("tanh", "sine"):
        layer = installed.Dense(W, act)
        f = lambda X: np.sum(layer.forward(X) ** 2)  # noqa: E731
        Xb = RNG.normal(size=(4, 3))
        np.testing.assert_allclose(tg.grad(f)(Xb), numeric_vjp(f, (Xb,), 0, 1.0), rtol=1e-6, atol=1e-8)
        _, tangent = tg.jvp(layer.forward, (Xb,), (np.ones_like(Xb),))
        np.testing.assert_allclose(tangent, (layer.forward(Xb + 1e-6) - layer.forward(Xb - 1e-6)) / 2e-6, rtol=1e-6)


def test_an_installed_function_tapegen_cannot_follow_is_called_as_it_is(installed):
    W = RNG.normal(size=(3, 2))

    def f(W):
        label = installed.describe(W)  # a class pattern tapegen does not follow; not differentiated: runs as it is
        return np.sum(np.tanh(W)) if label else 0.0
    np.testing.assert_allclose(tg.grad(f)(W), 1 - np.tanh(W) ** 2)

    def g(W):
        return np.sum(installed.scaled(W))  # differentiated: refused, naming the function
    with pytest.raises(tg.TapegenError, match="scaled"):
        tg.grad(g)(W)


@pytest.mark.parametrize("f", [om.namespace_attributes, om.store_items, om.iterate_a_generator_class,
                               om.iterates_a_chain_of_layers, om.iterates_a_returned_iterator, om.attribute_named_T],
                         ids=lambda f: f.__name__)
def test_classes_serving_items_attributes_and_iteration_are_followed(f):
    """__getattr__, __getitem__ / __setitem__ and a generator __iter__ are the user's methods, inlined; an
    attribute named `T` of an object or record is that attribute (it was taken for a transpose)."""
    check_modes(f, X.copy())


@pytest.mark.parametrize("f, says", [
    (om.reads_a_cached_property, "cached_property"),
    (om.reads_a_descriptor, "Doubled"),
    (om.sets_through_setattr, "__setattr__"),
    (om.reads_dunder_dict, "__dict__"),
    (om.converts_with_dunder_array, "__array__"),
    (om.iterates_an_iterator_it_cannot_follow, "generator"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_objects_read_in_ways_tapegen_cannot_follow_are_refused_not_differentiated_wrong(f, says):
    """Each of these gave a wrong value or gradient without a word (a descriptor's value, the gradient of an
    attribute read through __dict__ or __array__ dropped)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.grad(f)(X)
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.jvp(f, (X,), (X,))


@pytest.mark.parametrize("f", [om.writes_rows_of_an_attribute_made_here, om.writes_rows_of_an_attribute_held_before],
                         ids=lambda f: f.__name__)
def test_writing_into_an_array_an_attribute_holds(f):
    """`self.Q[i, :] = q` crashed (the array was taken for a dict); an array the object held before the call
    is written into a copy, which the attribute then holds."""
    check_modes(f, X.copy())


def test_a_value_read_from_an_attribute_before_its_array_is_written_into_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="held before"):
        tg.grad(om.reads_an_attribute_array_before_writing_into_it)(X)


@pytest.mark.parametrize("f", [om.walks_a_dict_of_layers, om.walks_an_objects_ordered_dict,
                               om.takes_an_object_as_default, om.calls_a_helper_with_a_sparse_branch],
                         ids=lambda f: f.__name__)
def test_dicts_of_layers_default_objects_and_a_sparse_branch_not_taken(f):
    """Each was a NoRuleError: a layer taken out of a dict's items had no known class; an object default
    was not known; `scipy.sparse.issparse(X)` of a value computed here (dense) left the sparse branch in."""
    check_modes(f, X.copy())


def test_a_layer_added_to_a_dict_has_the_code_made_again():
    gradient = tg.grad(om.walks_an_objects_ordered_dict)
    gradient(X)
    om.ENCODER.encoder["c"] = om.Layer(om.W1, np.sin)
    try:
        np.testing.assert_allclose(gradient(X), _fd_grad(om.walks_an_objects_ordered_dict, X), rtol=1e-6, atol=1e-8)
    finally:
        del om.ENCODER.encoder["c"]


@pytest.mark.parametrize("f", [om.calls_a_method_an_attribute_holds, om.makes_an_object_through_a_classmethod],
                         ids=lambda f: f.__name__)
def test_methods_kept_as_values_and_classmethod_constructors(f):
    check_modes(f, X.copy())


@pytest.mark.parametrize("f", [om.uses_a_simple_namespace, om.takes_a_method_by_name, om.builds_lists_of_functions,
                               om.sets_attributes_through_dict_update, om.functions_in_class_bodies_and_namespaces],
                         ids=lambda f: f.__name__)
def test_namespaces_methods_by_name_and_lists_of_functions(f):
    """SimpleNamespace(w=x) was a NoRuleError; getattr(obj, "name") of a method, and a comprehension of
    lambdas (or of functions a factory returns), were refused."""
    check_modes(f, X.copy())


@pytest.mark.parametrize("f", [om.calls_a_staticmethod_through_a_class_an_attribute_holds,
                               om.calls_a_classmethod_through_a_class_an_attribute_holds], ids=lambda f: f.__name__)
def test_functions_of_a_class_an_attribute_holds(f):
    """network2.py's `self.cost.fn(a, y)` with `self.cost = cost` a class (a staticmethod, a classmethod, a
    plain function of the class) was a NoRuleError naming `.fn()`."""
    check_modes(f, X.copy())


def test_a_class_an_attribute_holds_rebound_between_calls_has_the_code_made_again():
    gradient = tg.grad(om.calls_a_classmethod_through_a_class_an_attribute_holds)
    gradient(X)
    om.COST_NET.cost = om.CrossEntropyCost
    try:
        np.testing.assert_allclose(gradient(X), _fd_grad(om.calls_a_classmethod_through_a_class_an_attribute_holds, X),
                                   rtol=1e-6, atol=1e-8)
    finally:
        om.COST_NET.cost = om.QuadraticCost


@pytest.mark.parametrize("f", [om.steps_with_copies_of_an_optimizer, om.steps_with_a_copy_of_a_module_optimizer],
                         ids=lambda f: f.__name__)
def test_copies_of_an_object_are_objects_of_its_class(f):
    """`copy.copy(optimizer)` was run as an opaque call, so `W_opt.update(w, g)` was taken for a dict's update
    and refused as changing `W_opt` in place."""
    check_modes(f, X.copy())
    assert om.OPTIMIZER.G is None  # (the module's optimizer is not changed by its copy's updates)


def test_a_copy_sharing_an_array_with_its_original_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="as a whole"):
        tg.grad(om.copies_an_optimizer_holding_an_array)(X.copy())


@pytest.mark.parametrize("f", [om.fits_a_regression_made_here, om.calls_a_function_attribute],
                         ids=lambda f: f.__name__)
def test_an_attribute_set_on_a_lambda_made_here(f):
    """`self.regularization.grad = lambda x: 0` (ML-From-Scratch's LinearRegression) was refused as reading a
    lambda made in the function as a value."""
    check_modes(f, X.copy())


def test_a_namespace_read_whole_is_refused():
    def f(x):
        from types import SimpleNamespace
        return np.sum(vars(SimpleNamespace(w=x))["w"])
    with pytest.raises(tg.UnsupportedSyntaxError, match="as a whole"):
        tg.grad(f)(X)


def test_an_objects_array_written_into_keeps_the_write_after_the_call():
    """`self.mu[1] += v` in a bound method: the backward pass put back what the write overwrote in the array
    the object then held, so every call started from the array as it was before the first."""
    class Accumulating:
        def __init__(self):
            self.mu = np.ones(3)

        def f(self, x):
            self.mu[1] += np.sum(x ** 2)
            return np.sum(self.mu ** 3)
    mine, plain = Accumulating(), Accumulating()
    gradient = tg.value_and_grad(mine.f)
    for _ in range(3):
        value, _ = gradient(X)
        assert np.isclose(value, plain.f(X))
        np.testing.assert_allclose(mine.mu, plain.mu)


class _Acc:
    def __init__(self, n):
        self.mu = np.zeros(n)


class _Plain:
    pass


def _writes_through_a_list_item(x):
    a = _Acc(3)
    items = [a]
    items[0].mu[0] = x[0] * 2
    return np.sum(a.mu ** 2)


def _writes_into_an_argument_through_an_attribute(x):
    a = _Plain()
    a.mu = x
    a.mu[0] = 5.0
    return np.sum(a.mu ** 2) + np.sum(x)


@pytest.mark.parametrize("f, says", [(_writes_through_a_list_item, "which object"),
                                     (_writes_into_an_argument_through_an_attribute, "holds too")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_writes_into_attribute_arrays_tapegen_cannot_tie_to_one_object_are_refused(f, says):
    """Each gave a wrong value or gradient (the write lost, or the argument left unwritten)."""
    with pytest.raises(tg.UnsupportedSyntaxError, match=says):
        tg.grad(f)(X.copy())


class _Momentum:
    """An optimizer keeping its state in an attribute: `self.v = self.v + g`."""

    def __init__(self):
        self.v = 0.0

    def step(self, w, g):
        self.v = self.v + g
        return w - 0.1 * self.v


def _steps_through_a_list_item_in_a_loop(w, n):
    optimizers = []
    for _ in range(n):  # (a list whose items tapegen cannot know one by one)
        optimizers.append(_Momentum())
    for _ in range(2):
        w = optimizers[0].step(w, w ** 3 - 1.0)
    return np.sum(w ** 2)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_attribute_set_in_a_loop_on_a_list_item_and_read_in_the_next_pass_is_refused(mode):
    """The pass after the first reads `.v` of `optimizers[0]`, set to a value carrying a derivative in the
    pass before: reverse mode refused it; forward mode took its tangent as zero (a wrong JVP)."""
    with pytest.raises(tg.NoRuleError, match="cannot tie"):
        if mode == "grad":
            tg.grad(_steps_through_a_list_item_in_a_loop)(X.copy(), 1)
        else:
            tg.jvp(_steps_through_a_list_item_in_a_loop, (X.copy(), 1), (np.ones(3), None))


def _sets_through_a_list_item_reads_through_the_name(x):
    m = _Momentum()
    held = [m]
    held[0].v = x * 2.0
    return np.sum(m.v ** 2)


def _sets_through_a_dict_item_reads_through_the_name(x):
    m = _Momentum()
    held = {"m": m}
    held["m"].v = np.sin(x)
    return np.sum(m.v * x)


def _steps_optimizers_of_a_display(w):
    optimizers = [_Momentum(), _Momentum()]
    for _ in range(2):
        w = optimizers[0].step(w, w ** 3 - 1.0)
    w = optimizers[1].step(w, np.sin(w))
    for opt in optimizers:
        w = opt.step(w, w ** 2)
    return np.sum(w ** 2)


def _steps_optimizers_of_a_dict(w):
    optimizers = {"W": _Momentum(), "b": _Momentum()}
    for _ in range(2):
        w = optimizers["W"].step(w, w ** 3 - 1.0)
        w = optimizers["b"].step(w, np.cos(w))
    return np.sum(w ** 2)


def _steps_optimizers_in_nested_loops(w):
    optimizers = [_Momentum(), _Momentum()]
    for _ in range(2):
        for opt in optimizers:  # (was an InternalError: `opt` read before it was defined)
            w = opt.step(w, w ** 3 - 1.0)
    return np.sum(w ** 2)


@pytest.mark.parametrize("f", [_steps_optimizers_of_a_display, _steps_optimizers_of_a_dict,
                               _steps_optimizers_in_nested_loops,
                               _sets_through_a_list_item_reads_through_the_name,
                               _sets_through_a_dict_item_reads_through_the_name], ids=lambda f: f.__name__)
def test_objects_made_here_in_a_display_are_known_item_by_item(f):
    """`[M(), M()]`, `{"W": M(), ...}`, `[m]`: each item is the object it was made as, so state set on it
    through the item (`self.v = ...`) is followed. Grad refused these (`.v` read through a name it could
    not tie to the object); jvp took `.v` of the pass before as a zero tangent, or `m.v` as what
    `__init__` set."""
    check_modes(f, X.copy())


def _sets_through_an_item_of_a_list_built_when_the_code_runs(x, n):
    m = _Momentum()
    held = []
    for _ in range(n):
        held.append(m)
    held[0].v = x * 2.0
    return np.sum(m.v ** 2)


def _sets_a_number_through_such_an_item(x, n):
    m = _Momentum()
    held = []
    for _ in range(n):
        held.append(m)
    held[0].v = 3.0
    return np.sum(x * m.v)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_attribute_set_through_an_item_and_read_through_the_objects_name_is_refused(mode):
    """`held[0].v = x * 2.0`, then `m.v`, `held` a list of `m` built in a loop run `n` times: tapegen read `m.v` as
    what `__init__` set (0.0), a wrong value and a zero gradient."""
    f = _sets_through_an_item_of_a_list_built_when_the_code_runs
    with pytest.raises(tg.UnsupportedSyntaxError, match="another name's object"):
        if mode == "grad":
            tg.value_and_grad(f)(X.copy(), 2)
        else:
            tg.jvp(f, (X.copy(), 2), (np.ones(3), None))


def test_a_number_set_through_an_item_is_read_through_the_objects_name():
    """(was read as the 0.0 `__init__` set: the gradient 0 * x instead of 3.0)"""
    check_modes(_sets_a_number_through_such_an_item, X.copy(), 2)


def test_settings_class_attributes_and_methods_changed_between_calls_have_the_code_made_again(monkeypatch):
    """A number of another module (`config.SCALE`), a class attribute, a method replaced on the class or
    shadowed on the object: each change was not seen (the code made for the first value ran on)."""
    from cases import config_values
    gradient = tg.grad(om.reads_settings_and_a_method)
    changes = [lambda: monkeypatch.setattr(config_values, "SCALE", 5.0),
               lambda: monkeypatch.setattr(om.Scaled2, "factor", 3.0),
               lambda: monkeypatch.setattr(om.Scaled2, "act", lambda self, z: np.sin(z)),
               lambda: monkeypatch.setattr(om.SCALED, "act", lambda z: z ** 3, raising=False)]
    for change in [lambda: None] + changes:
        change()
        np.testing.assert_allclose(gradient(X), _fd_grad(om.reads_settings_and_a_method, X), rtol=1e-6, atol=1e-8)


class _Halved:
    """A property with a setter: `h.w = v` stores v / 2 in `_w`, and `h.w` reads twice `_w`."""

    def __init__(self, w):
        self.w = w  # through the setter

    @property
    def w(self):
        return self._w * 2

    @w.setter
    def w(self, v):
        self._w = v / 2


class _ReadOnly:
    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w


def _set_through_a_property(x):
    h = _Halved(x[0])
    a = h.w * x[1]
    h.w = x[2] ** 2
    h.w += x[0]
    return a + h.w * h._w


def _set_a_property_without_a_setter(x):
    r = _ReadOnly(x[0])
    r.w = x[1]
    return r.w


def test_a_property_set_runs_its_setter():
    """`h.w = v` set a plain attribute `w` in tapegen's reading (the setter not run, `_w` unchanged)."""
    check_modes(_set_through_a_property, X.copy())


def _property_set_in_a_loop(x):
    h = _Halved(x[0])
    for k in range(3):
        h.w = h.w * x[1] + k
    return h.w * h._w


def _property_set_in_a_while_loop_and_a_branch(x):
    h = _Halved(x[0])
    k = 0
    while k < 2:
        h.w = h.w * x[k]
        k += 1
    if x[2] > 0:
        h.w = h.w + x[2] ** 2
    return h.w * x[1]


class _Stepper(_Halved):
    def steps(self, v):
        for _ in range(2):
            self.w = self.w * v
        return self.w


def _property_set_on_self_in_a_loop(x):
    return _Stepper(x[0]).steps(x[1]) * x[2]


@pytest.mark.parametrize("f", [_property_set_in_a_loop, _property_set_in_a_while_loop_and_a_branch,
                               _property_set_on_self_in_a_loop], ids=lambda f: f.__name__)
def test_a_property_set_in_a_loop_or_branch_is_read_back_through_its_getter(f):
    """`h.w = v` in a loop or branch carried `h.w` as a plain attribute: read back afterwards it was the value
    the loop started from (h.w before the loop, for the setter's `_w` was never read), with no error."""
    for x in (X, -X):
        check_modes(f, x.copy())


def test_a_property_without_a_setter_set_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError, match="property without a setter"):
        tg.grad(_set_a_property_without_a_setter)(X.copy())


class _Ops:
    """Operators, items, iteration, a property and __getattr__, each a method the class may have replaced."""

    def __init__(self, v):
        self.v = v

    def __mul__(self, k):
        return _Ops(self.v * k)

    def __neg__(self):
        return _Ops(-self.v)

    def __iadd__(self, other):
        self.v = self.v + other.v
        return self

    def __getitem__(self, k):
        return self.v[k] * 2.0

    def __iter__(self):
        for a in self.v:
            yield a * 2.0

    @property
    def doubled(self):
        return self.v * 2.0

    def __getattr__(self, name):
        return self.v * 3.0


def _through_special_methods(x):
    a = _Ops(x) * 2.0
    a += -_Ops(x ** 2)
    b = _Ops(x)
    return np.sum(a.v ** 3) + a[0] * a[1] + sum(b) + np.sum(a.doubled * a.tripled)


def _halve(self, k):
    return _Ops(self.v * k / 2)


def _bump(self, other):
    self.v = self.v - other.v * 2
    return self


def _items(self):
    for a in self.v:
        yield a ** 2


@pytest.mark.parametrize("name, replacement", [
    ("__mul__", _halve), ("__neg__", lambda self: _Ops(self.v * 3.0)), ("__iadd__", _bump),
    ("__getitem__", lambda self, k: self.v[k] * 5.0), ("__iter__", _items),
    ("doubled", property(lambda self: self.v * 5.0)), ("__getattr__", lambda self, name: self.v ** 2)])
def test_a_special_method_or_property_replaced_on_the_class_has_the_code_made_again(monkeypatch, name, replacement):
    """Python looks an operator's method (and an item's, iteration's, a property's, __getattr__'s) up on the
    class as it runs: the code made for the first one ran on after the class's was replaced (its value and
    gradient, with no error)."""
    gradient = tg.value_and_grad(_through_special_methods)
    gradient(X)
    monkeypatch.setattr(_Ops, name, replacement)
    value, grad = gradient(X)
    np.testing.assert_allclose(value, _through_special_methods(X), rtol=1e-12)
    np.testing.assert_allclose(grad, _fd_grad(_through_special_methods, X), rtol=1e-6, atol=1e-8)


class _Forwarding:
    """A callable object answering any other name through __getattr__ (a proxy, a config object)."""

    def __init__(self, scale):
        self.scale = scale

    def __call__(self, z):
        return np.tanh(z) * self.scale

    def __getattr__(self, name):
        return self.scale * 2.0


_FORWARDING = _Forwarding(np.array([1.0, 2.0, 3.0]))


def _calls_a_forwarding_object(x):
    return np.sum(_FORWARDING(x) ** 2)


def test_a_callable_object_answering_every_name_through_getattr_is_called_through_its_call():
    """tapegen asked the object for its own markers (`__tapegen_compose__`, autograd's `_is_autograd_primitive`)
    with getattr, which ran its __getattr__: an array came back, and the transform raised TypeError."""
    check_modes(_calls_a_forwarding_object, X.copy())


class _Scale:
    def __init__(self, w):
        self.w = w

    def __call__(self, h):
        return np.tanh(h * self.w)


def _attributes_set_through_a_loop_target_then_called(x):
    layers = [_Scale(2.0), _Scale(0.5)]
    for layer in layers:
        layer.w = layer.w * x[0]
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h)


def test_an_attribute_set_through_a_loop_target_is_not_carried_from_before_the_loop():
    """`for layer in layers: layer.w = ...` carried `layer.w` from before the loop, where `layer` is not yet
    bound: the IR check failed inside tapegen (InternalError). Then refused (which object's `.w` a pass reads was
    not known when transforming); now `layers`, a display of objects made here, is known item by item, the loop
    unrolled, each pass the object it is."""
    check_modes(_attributes_set_through_a_loop_target_then_called, X.copy())


def _attributes_set_through_a_loop_target_of_a_list_built_when_the_code_runs(x, n):
    layers = []
    for k in range(n):
        layers.append(_Scale(2.0 - k))
    for layer in layers:
        layer.w = layer.w * x[0]
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h)


def test_an_attribute_set_through_a_loop_target_of_a_list_known_only_when_the_code_runs_is_refused():
    with pytest.raises(tg.UnsupportedSyntaxError):
        tg.grad(_attributes_set_through_a_loop_target_of_a_list_built_when_the_code_runs)(X.copy(), 2)


class _Gaussian:
    """A small library's value type: operators and methods return new objects."""

    def __init__(self, mu, var):
        self.mu, self.var = mu, var

    def __add__(self, other):
        return _Gaussian(self.mu + other.mu, self.var + other.var)

    def scaled(self, k):
        return _Gaussian(self.mu * k, self.var * k ** 2)


def _shifted(g, v):
    return _Gaussian(g.mu * v + 1.0, g.var * v)


def _summed_in_a_loop(x):
    acc = _Gaussian(x * 0.0, x * 0.0 + 1.0)
    for k in range(3):
        acc = acc + _Gaussian(x ** k, x * 0.0 + 0.5)
    return np.sum(acc.mu * acc.var)


def _stepped_by_a_helper_and_a_method_in_loops(x):
    acc = _Gaussian(x, x * 0.0 + 1.0)
    k = 0
    while k < 2:
        acc = _shifted(acc, x)
        k += 1
    for _ in range(2):
        acc = acc.scaled(x[0])
    return np.sum(acc.mu + acc.var)


def _added_in_a_branch(x):
    acc = _Gaussian(x, x * 0.0 + 1.0)
    if x[0] > 0:
        acc = acc + _Gaussian(x ** 2, x)
    return np.sum(acc.mu * acc.var)


def _rebound_to_another_object_in_a_loop(x):
    a, b = _Gaussian(x, x), _Gaussian(x * 2.0, x)
    for _ in range(2):
        a, b = b, a + b
    c = _Gaussian(x, x ** 2)
    for _ in range(2):
        c = b
    return np.sum(a.mu * b.var + b.mu * c.var)


@pytest.mark.parametrize("f", [_summed_in_a_loop, _stepped_by_a_helper_and_a_method_in_loops, _added_in_a_branch,
                               _rebound_to_another_object_in_a_loop], ids=lambda f: f.__name__)
def test_an_object_a_call_makes_bound_in_a_loop_or_branch_keeps_its_attributes(f):
    """`acc = acc + G(...)` (or a helper's, a method's new object, or another object) bound in a loop or branch:
    its attributes were read as those of the object from before the loop (a value of 0.0 where Python gives
    6.6, with no error)."""
    for x in (X, -X):
        check_modes(f, x.copy())


def _picked_by_a_conditional_expression_in_a_loop(x):
    acc = _Gaussian(x, x * 0.0 + 1.0)
    for k in range(3):
        acc = acc.scaled(x[0]) if k % 2 == 0 else _Gaussian(acc.mu * 2.0, acc.var)
    return np.sum(acc.mu * acc.var)


def test_an_object_picked_by_a_conditional_expression_in_a_loop_is_refused_not_read_stale():
    """Its attributes (set on one path or the other) were read as those from before the loop: 0.0 where Python
    gives 6.6. Which object it is is known only when the code runs, as outside a loop: refused."""
    with pytest.raises(tg.UnsupportedSyntaxError, match="may be the `.mu` this function set"):
        tg.grad(_picked_by_a_conditional_expression_in_a_loop)(X.copy())


@pytest.mark.parametrize("f", [om.runs_a_linked_model, om.walks_layers_of_one_class_appended])
def test_layers_appended_to_a_list_are_each_the_object_they_are(f):
    """nnfs.io's Model: layers appended to `self.layers`, linked by `self.layers[i].prev = self.layers[i - 1]`
    in a `for i in range(len(...))` loop with `if i == 0` / `elif i < layer_count - 1`, then
    `layer.forward(layer.prev.output)`; and a list of layers of one class appended, walked and indexed. Each was
    refused (`layer.prev` / `self.weights` "may be the ... this function set on another name's object")."""
    check_modes(f, np.array([[0.3, -0.7, 1.2], [0.5, 0.1, -0.4], [0.2, 0.9, -0.6]]))


class _Holds:
    """numpy-ml's layers and wrappers: a dict in an attribute, properties returning a fresh dict or the
    wrapped layer's dict."""

    def __init__(self):
        self.w = 2.0
        self._d = {"k": 1.0}
        self.xs = [1.0]

    @property
    def fresh(self):
        return {"a": self.w}

    @property
    def d(self):
        return self._d


class _Wraps:
    """numpy-ml's `Dropout(FullyConnected(..))`: `.parameters` reads the wrapped layer's dict."""

    def __init__(self, base):
        self._base = base

    @property
    def d(self):
        return self._base._d

    def mark(self):
        self._base.fresh["wrappers"] = [1]  # (`WrapperBase._init_params`: into the dict a property made)


def _item_set_through_a_name_for_an_attributes_dict(x):
    h = _Holds()
    d = h._d
    d["k"] = x * 2.0
    return np.sum(h._d["k"] ** 2)


def _item_set_through_a_name_for_an_attributes_list(x):
    h = _Holds()
    xs = h.xs
    xs[0] = x * 2.0
    return np.sum(h.xs[0] ** 2)


def _dict_updated_through_a_name_for_an_attributes_dict(x):
    h = _Holds()
    d = h._d
    d.update({"k": x * 2.0})
    return np.sum(h._d["k"] ** 2)


class _AdaGrad:
    """numpy-ml's AdaGrad: `C = self.cache`, items set through `C`, then `self.cache = C` (`sets_back`)."""
    sets_back = True

    def __init__(self):
        self.cache = {}

    def update(self, param, grad, name):
        C = self.cache
        if name not in C:
            C[name] = np.zeros_like(grad)
        C[name] += grad ** 2
        if self.sets_back:
            self.cache = C
        return param - 0.1 * grad / (np.sqrt(C[name]) + 1e-7)


class _AdaGradNotSetBack(_AdaGrad):
    sets_back = False


def _two_adagrad_steps(w):
    opt = _AdaGrad()
    w1 = opt.update(w, np.tanh(w), "w")
    return np.sum(opt.update(w1, w1 * w, "w") ** 2)


def _two_adagrad_steps_not_set_back(w):
    opt = _AdaGradNotSetBack()
    w1 = opt.update(w, np.tanh(w), "w")
    return np.sum(opt.update(w1, w1 * w, "w") ** 2)


class _SGD:
    """numpy-ml's SGD: `C = self.cache`, an item set through `C`, then one set through `self.cache` (`C` not
    read again)."""

    def __init__(self):
        self.cache = {}

    def update(self, param, grad, name):
        C = self.cache
        if name not in C:
            C[name] = np.zeros_like(grad)
        update = 0.9 * C[name] + 0.1 * grad
        self.cache[name] = update
        return param - update


def _two_sgd_steps(w):
    opt = _SGD()
    w1 = opt.update(w, np.tanh(w), "w")
    return np.sum(opt.update(w1, w1 * w, "w") ** 2)


class _Adam:
    """numpy-ml's Adam: a dict per parameter in `self.cache`, its items set through `C = self.cache`."""

    def __init__(self):
        self.cache = {}

    def update(self, param, grad, name):
        C = self.cache
        if name not in C:
            C[name] = {"t": 0, "mean": np.zeros_like(grad)}
        t = C[name]["t"] + 1
        mean = C[name]["mean"]
        C[name]["t"] = t
        C[name]["mean"] = 0.9 * mean + 0.1 * grad
        self.cache = C
        return param - 0.1 * C[name]["mean"] / (1 - 0.9 ** t)


def _two_adam_steps(w):
    opt = _Adam()
    w1 = opt.update(w, np.tanh(w), "w")
    return np.sum(opt.update(w1, w1 * w, "w") ** 2)


@pytest.mark.parametrize("f", [_item_set_through_a_name_for_an_attributes_dict,
                               _item_set_through_a_name_for_an_attributes_list,
                               _dict_updated_through_a_name_for_an_attributes_dict,
                               _two_adagrad_steps, _two_adagrad_steps_not_set_back, _two_sgd_steps,
                               _two_adam_steps])
def test_a_change_through_a_name_for_an_attributes_dict_is_made_in_the_attribute_too(f):
    """`d = h._d; d["k"] = x * 2.0; h._d["k"]`: Python changes the one dict; tapegen's change made a new dict
    only `d` held, so `h._d["k"]` read the old item: the value 1.0 and gradient 0 instead of 8 and 8x (numpy-ml's
    AdaGrad without its `self.cache = C`: the second step read the cache as __init__ made it). The SGD pair was
    refused (`self.cache[k] = v` "would also change `C`", which is never read again); the Adam pair when the code
    ran (`C[name]["mean"] = ...` made the name and the attribute two new dicts, so `self` held the item too)."""
    check_modes(f, X.copy())


def _item_set_into_a_property_made_dict(x):
    h = _Holds()
    h.fresh["a"] = x * 5.0  # into the dict the getter made: gone with it, as in Python
    _Wraps(h).mark()
    return np.sum(x * h.w * h.fresh["a"])


def _item_set_through_a_property_returning_an_attributes_dict(x):
    h = _Holds()
    h.d["k"] = x * 3.0
    return np.sum(h._d["k"] ** 2)


def _item_set_through_a_wrappers_property(x):
    h = _Holds()
    wrapped = _Wraps(h)
    wrapped.d["k"] = np.sin(x)
    wrapped.d["k"] *= x
    return np.sum(h._d["k"] * wrapped.d["k"] + h.d["k"])


@pytest.mark.parametrize("f", [_item_set_into_a_property_made_dict,
                               _item_set_through_a_property_returning_an_attributes_dict,
                               _item_set_through_a_wrappers_property])
def test_an_item_set_through_a_property_changes_the_dict_its_getter_returns(f):
    """`self.hyperparameters["wrappers"] = [hp]` (numpy-ml's wrappers, a property without a setter) was lowered as
    setting the attribute, an AttributeError in tapegen's code; `wrapper.parameters["W"] = W` (a property
    returning the wrapped layer's dict) too."""
    check_modes(f, X.copy())


class _RBF:
    def __init__(self, sigma=1.0):
        self.sigma = sigma

    def __call__(self, X):
        return np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / self.sigma ** 2)


def _kernel_from(spec):
    """numpy-ml's KernelInitializer: the class called with keywords parsed when the code runs (as written)."""
    import re
    kwargs = dict([(k, float(v)) for k, v in re.findall(r"(\w+)=([^,)]*)", spec)])
    return _RBF(**kwargs)


class _GP:
    def __init__(self, spec):
        self.kernel = _kernel_from(spec)
        self.parameters = {}

    def fit(self, X, y):
        self.parameters["y"] = y
        self.parameters["K"] = self.kernel(X) + 0.1 * np.eye(len(X))

    def log_likelihood(self):
        y = self.parameters["y"]
        return -0.5 * y @ np.linalg.solve(self.parameters["K"], y)


def _gp_log_likelihood(y):
    gp = _GP("RBF(sigma=0.7)")
    gp.fit(np.linspace(-1.0, 1.0, 3), y)
    return gp.log_likelihood()


def test_an_object_run_as_written_called_through_an_attribute_is_not_its_holder_read_whole():
    """`self.kernel(X)`, the kernel an object tapegen runs as written (numpy-ml's GPRegression with a kernel
    string): refused as reading the GP object "as a whole (through `.kernel`)"; it calls the kernel only."""
    check_modes(_gp_log_likelihood, X.copy())


class _Store:
    def __init__(self):
        self.cache = {}
        self.rows = []


def _changed_through_a_name_for_an_attribute(x):
    s = _Store()
    d = s.cache
    d["k"] = x * 2.0  # a key it did not have (a KeyError in the generated code on 980730e)
    s.rows = [x, x]
    rows = s.rows
    rows[0] = np.sin(x)
    s.cache = {"k": x, "j": x * 3.0}
    c = s.cache
    c["k"] = c["k"] * x
    return np.sum(s.cache["k"] * s.rows[0]) + np.sum(d["k"] * s.cache["j"]) + np.sum(s.rows[1])


def test_a_dict_or_list_an_attribute_holds_changed_through_another_name():
    """`d = s.cache; d["k"] = v` (or `rows = s.rows; rows[0] = v`): Python changes the object's dict or list, which
    s.cache then shows. 980730e rebound `d` only: s.cache read as it was, a KeyError where the key was new, a
    wrong value and gradient with no error where it replaced one."""
    check_modes(_changed_through_a_name_for_an_attribute, np.array([0.3, -0.8, 1.2]))


class _Tanh:
    @staticmethod
    def fn(z):
        return np.tanh(z)

    @classmethod
    def grad(cls, z):
        return 1.0 - cls.fn(z) ** 2


class _Unit:
    act = _Tanh  # a class the class's body names, read through its objects

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return self.act.fn(self.w * x) + self.act.grad(x)


_MODULE_UNIT = _Unit(np.array([0.5, -1.5, 2.0]))


def _calls_through_a_class_attribute_holding_a_class(x):
    return np.sum(_Unit(x)(x) ** 2) + np.sum(_MODULE_UNIT(x))


def test_a_function_of_a_class_a_class_attribute_holds_called_through_an_object():
    """`act = Tanh` in a class's body, then `self.act.fn(z)` (a staticmethod, or classmethod, of that class): the
    class's function, as Python calls it (a NoRuleError naming .fn() on 980730e, where only an attribute the
    object set was followed)."""
    check_modes(_calls_through_a_class_attribute_holding_a_class, np.array([0.3, -0.8, 1.2]))


class _Projection:
    def __init__(self, w):
        self.w = w
        self.seen = None

    def __call__(self, x):
        self.seen = x
        return x * self.w


class _Heads:
    """numpy-ml's MultiHeadedAttentionModule: `self.projections = {k: Dropout(FullyConnected(...)) for k in
    ["Q", "K", "V", "O"]}`, a dict comprehension of layers kept in an attribute."""

    def __init__(self, w):
        self.projections = {k: _Projection(w) for k in ["Q", "K"]}

    def forward(self, x):
        return self.projections["Q"](x) + np.sin(self.projections["K"](x))


def test_a_dict_comprehension_of_objects_kept_in_an_attribute_matches_finite_differences():
    """(an internal error once layers of one class were known item by item: the dict reached `setattr` unmade)"""
    check_modes(lambda x: np.sum(_Heads(x).forward(x) ** 2), X.copy())


class _CacheOf:
    def __init__(self):
        self.d = {}


def _attribute_dict_changed_through_a_name_in_a_loop(x):
    a = _CacheOf()
    d = a.d
    for t in range(2):
        d[t] = x * (t + 2.0)
    return np.sum(a.d[0] * a.d[1])


def _attribute_dict_changed_through_a_name_in_a_branch(x):
    a = _CacheOf()
    a.d = {"k": x}
    d = a.d
    if x[0] > 0:
        d["k"] = x * 2.0
    return np.sum(a.d["k"] * x)


@pytest.mark.parametrize("f", [_attribute_dict_changed_through_a_name_in_a_loop,
                               _attribute_dict_changed_through_a_name_in_a_branch], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["first_positive", "first_negative"])
def test_an_attributes_dict_changed_through_a_name_in_a_loop_or_branch(f, x):
    """(adv18 and nml18 each made such a change in the attribute too; merged, the loop raised KeyError in the
    generated code and the branch gave a wrong value and gradient, until only adv18's way ran in constructs)"""
    check_modes(f, x.copy())
