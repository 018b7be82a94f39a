"""scipy.spatial.distance: cdist, pdist, squareform and the two-vector distances, against central differences.

Reverse, forward and second order (of sum(sin(...))) through `check_modes`, in both inputs of cdist
and of the two-vector functions, for every metric the rules cover. At a distance of 0 (cdist(X, X)'s
diagonal) the rules give the zero subgradient, which is the true derivative of a kernel of cdist(X, X):
checked against differences of the kernel and against the same kernel written with NumPy. SciPy takes
no complex inputs here (ValueError: Unsupported dtype complex128), so there are no complex rows.
"""
import numpy as np
import pytest

import tapegen as tg
from modes import check_modes
from rule_rows import Row

distance = pytest.importorskip("scipy.spatial.distance")

RNG = np.random.default_rng(13)
XA, XB, X = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
U, V = RNG.standard_normal(4), RNG.standard_normal(4)
METRICS = [("sqeuclidean", {}), ("euclidean", {}), ("cityblock", {}), ("minkowski", {"p": 3}),
           ("minkowski", {"p": 1.5}), ("minkowski", {}), ("chebyshev", {}), ("cosine", {}), ("correlation", {}),
           ("cos", {}), ("cblock", {})]
PAIRS = ["euclidean", "sqeuclidean", "cityblock", "cosine", "chebyshev", "minkowski", "correlation"]


def _label(metric, options):
    return metric + "".join(f"-{k}{v}" for k, v in options.items())


def _rows():
    for metric, options in METRICS:
        cdist = (lambda m, o: lambda a, b: distance.cdist(a, b, m, **o))(metric, options)
        pdist = (lambda m, o: lambda x: distance.pdist(x, metric=m, **o))(metric, options)
        yield Row(f"cdist-{_label(metric, options)}-(4,3)x(5,3)-float64", cdist, (XA, XB), (0, 1),
                  covers=(distance.cdist,))
        yield Row(f"pdist-{_label(metric, options)}-(5,2)-float64", pdist, (X,), covers=(distance.pdist,))
    for name in PAIRS:
        fn = getattr(distance, name)
        yield Row(f"{name}-(4,)x(4,)-float64", (lambda fn: lambda u, v: fn(u, v))(fn), (U, V), (0, 1), covers=(fn,))
    yield Row("minkowski-p3-(4,)x(4,)-float64", lambda u, v: distance.minkowski(u, v, 3), (U, V), (0, 1),
              covers=(distance.minkowski,))
    yield Row("squareform-tomatrix-(6,)-float64", lambda v: distance.squareform(v), (RNG.standard_normal(6),),
              covers=(distance.squareform,))
    yield Row("squareform-tovector-(4,4)-float64", lambda m: distance.squareform(m, checks=False),
              (RNG.standard_normal((4, 4)),), covers=(distance.squareform,))
    yield Row("squareform-force-tomatrix-(3,)-float64", lambda v: distance.squareform(v, force="tomatrix"),
              (RNG.standard_normal(3),), covers=(distance.squareform,))
    yield Row("squareform-force-tovector-(3,3)-float64",
              lambda m: distance.squareform(m, force="tovector", checks=False), (RNG.standard_normal((3, 3)),),
              covers=(distance.squareform,))


ROWS = list(_rows())


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_reverse_and_forward(row):
    check_modes(row.fn, *row.args, order2=False)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_second_order(row):
    fn = row.fn
    check_modes(lambda *args: np.sum(np.sin(fn(*args))), *row.args)


W = RNG.standard_normal((5, 5))


@pytest.mark.parametrize("metric,options", METRICS, ids=[_label(*m) for m in METRICS])
def test_a_kernel_of_cdist_of_x_with_itself_has_its_derivatives_at_the_zero_diagonal(metric, options):
    """cdist(X, X)[i, i] is 0 for every X: the rules' zero there is the true derivative, at every order."""
    check_modes(lambda x: np.sum(W * np.exp(-distance.cdist(x, x, metric, **options))), X)
    check_modes(lambda x: np.sum(W * np.exp(-distance.squareform(distance.pdist(x, metric, **options)))), X)


def test_euclidean_kernel_matches_the_numpy_code_it_stands_for():
    """The same derivatives as np.sqrt of a sum of squares under tapegen (sqrt'(0) = 0), diagonal included."""
    def with_scipy(x, scale):
        return np.sum(W * np.exp(-distance.cdist(x, x) / scale))

    def with_numpy(x, scale):
        return np.sum(W * np.exp(-np.sqrt(np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)) / scale))

    for wrt in (0, 1):
        np.testing.assert_allclose(tg.grad(with_scipy, wrt=wrt)(X, 0.7), tg.grad(with_numpy, wrt=wrt)(X, 0.7),
                                   rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tg.hessian(with_scipy)(X, 0.7), tg.hessian(with_numpy)(X, 0.7), rtol=1e-9, atol=1e-10)
    assert np.all(np.isfinite(tg.hessian(with_scipy)(X, 0.7)))


def test_a_gaussian_process_likelihood_in_its_lengthscale_and_inputs():
    y = RNG.standard_normal(5)

    def nll(x, log_scale):
        r2 = distance.squareform(distance.pdist(x / np.exp(log_scale), "sqeuclidean"))
        k = np.exp(-0.5 * r2) + 0.1 * np.eye(5)
        return 0.5 * y @ np.linalg.solve(k, y) + 0.5 * np.linalg.slogdet(k)[1]
    check_modes(nll, X, 0.3)


def test_a_zero_distance_between_two_different_inputs_gets_the_zero_subgradient():
    a = XA.copy()
    b = np.vstack([a[1], XB[1:]])  # a[1] == b[0]: a cone of the Euclidean distance, subgradient 0
    grads = tg.grad(lambda a, b: np.sum(distance.cdist(a, b)), wrt=(0, 1))(a, b)
    expected = tg.grad(lambda a, b: np.sum(np.sqrt(np.sum((a[:, None] - b[None]) ** 2, axis=-1))), wrt=(0, 1))(a, b)
    for got, want in zip(grads, expected):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("call, words", [
    (lambda x: distance.cdist(x, x, "mahalanobis"), "metrics"),
    (lambda x: distance.cdist(x, x, distance.euclidean), "named by a string"),
    (lambda x: distance.cdist(x, x, "euclidean", w=np.ones(2)), "without w="),
    (lambda x: distance.pdist(x, "minkowski", p=0.5), "p >= 1"),
], ids=["mahalanobis", "callable-metric", "weights", "minkowski-p-below-1"])
def test_what_the_rules_do_not_cover_is_refused(call, words):
    for transform in (tg.grad, lambda f: lambda x: tg.jvp(f, (x,), (np.ones_like(x),))):
        with pytest.raises(tg.TapegenError, match=words):
            transform(lambda x: np.sum(call(x)))(X)


def test_the_minkowski_power_carries_no_derivative():
    with pytest.raises(tg.NoRuleError, match="'p'"):
        tg.grad(lambda p: np.sum(distance.pdist(X, "minkowski", p=p)))(3.0)
