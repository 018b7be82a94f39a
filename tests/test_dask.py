"""Dask: data-parallel gradients on a LocalCluster, gradients of dask arrays, pickling across processes.

The oracles are tapegen's full-batch gradient and a hand-written logistic-regression
gradient in NumPy. Cluster tests share one LocalCluster (two worker processes,
loopback only). Tests marked `strict xfail` need a core change described in
docs/dask.md; they fail loudly (XPASS) once it lands, so the marks come off then.

Skipped as a whole when Dask is not installed (`pip install ".[dask]"`).
"""
import json
import logging
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
from dask.delayed import Delayed  # noqa: E402

import tapegen as tg  # noqa: E402
import tapegen.dask as tgd  # noqa: E402

REPO = Path(tg.__file__).resolve().parent.parent
NEEDS_CONFORM_FIX = "needs runtime.conform to keep duck arrays (docs/dask.md, 'Changes the core needs')"
NEEDS_KINK_FIX = "needs the rules' finite-sum checks to skip duck arrays (docs/dask.md)"
NEEDS_PICKLE_FIX = "needs api.py to pickle by reference / carry source (docs/dask.md)"


# --- the model and its independent gradient ------------------------------------------------------

def logistic_loss(params, X, y):
    """Summed logistic loss: the shards' losses and gradients add up to the full batch's."""
    z = X @ params["w"] + params["b"]
    return np.sum(np.logaddexp(0.0, z) - y * z)


def logistic_loss_wb(w, b, X, y, n):
    """The mean loss over all `n` examples, with w and b as separate arguments."""
    z = X @ w + b
    return np.sum(np.logaddexp(0.0, z) - y * z) / n


def logistic_mean(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def sqrt_loss(w, X):
    z = X @ w
    return np.sum(np.sqrt(z * z + 1.0) + np.log(z * z + 1.0))


def hand_gradient(w, b, X, y):
    """d/dw, d/db of the summed logistic loss, by hand: (sigmoid(z) - y) pulled back through z."""
    residual = 1.0 / (1.0 + np.exp(-(X @ w + b))) - y
    return X.T @ residual, float(np.sum(residual))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(203, 4))
    y = (rng.random(203) < 1.0 / (1.0 + np.exp(-X @ np.array([1.0, -2.0, 0.5, 0.0])))).astype(float)
    params = {"w": rng.normal(size=4) * 0.3, "b": 0.2}
    return X, y, params


@pytest.fixture(scope="module")
def client():
    """Two worker processes on 127.0.0.1, no dashboard; not the default scheduler, so
    `dask.compute` elsewhere in this file stays local."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, memory_limit="512MiB",
                                  silence_logs=logging.ERROR) as cluster:
        with distributed.Client(cluster, set_as_default=False) as client:
            yield client


def assert_tree_close(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for key in expected:
            assert_tree_close(actual[key], expected[key])
    elif isinstance(expected, tuple):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_tree_close(a, e)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


# --- data-parallel gradients ---------------------------------------------------------------------

def test_full_gradient_matches_the_hand_written_one(data):
    X, y, params = data
    dw, db = hand_gradient(params["w"], params["b"], X, y)
    assert_tree_close(tg.grad(logistic_loss)(params, X, y), {"w": dw, "b": db})


@pytest.mark.slow
@pytest.mark.parametrize("on", ["delayed", "client"])
@pytest.mark.parametrize("count, split_every", [(1, 8), (4, 8), (7, 2)], ids=["1-shard", "4-shards", "7-shards-tree2"])
def test_shard_gradients_sum_to_the_full_gradient(data, request, on, count, split_every):
    X, y, params = data
    client = request.getfixturevalue("client") if on == "client" else None
    shards = tgd.split(X, y, count=count)
    if client is not None:
        shards = tgd.scatter(client, shards)
    value, grads = tgd.value_and_grad_sum(logistic_loss, params, shards, client=client, split_every=split_every)
    full_value, full_grads = tg.value_and_grad(logistic_loss)(params, X, y)
    dw, db = hand_gradient(params["w"], params["b"], X, y)
    assert_tree_close(grads, full_grads)
    assert_tree_close(grads, {"w": dw, "b": db})
    np.testing.assert_allclose(value, full_value, rtol=1e-12)
    assert_tree_close(tgd.grad_sum(logistic_loss, params, shards, client=client), full_grads)


@pytest.mark.slow
@pytest.mark.parametrize("on", ["delayed", "client"])
def test_tuple_wrt_and_a_mean_loss_over_shards(data, request, on):
    X, y, params = data
    client = request.getfixturevalue("client") if on == "client" else None
    n = len(y)
    shards = [(Xs, ys, n) for Xs, ys in tgd.split(X, y, count=3)]
    dw, db = tgd.grad_sum(logistic_loss_wb, (params["w"], params["b"]), shards, client=client, wrt=(0, 1))
    hand_w, hand_b = hand_gradient(params["w"], params["b"], X, y)
    np.testing.assert_allclose(dw, hand_w / n, rtol=1e-10)
    assert isinstance(db, float)
    np.testing.assert_allclose(db, hand_b / n, rtol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("on", ["delayed", "client"])
def test_blocks_of_dask_arrays_are_shards(data, request, on):
    X, y, params = data
    client = request.getfixturevalue("client") if on == "client" else None
    Xd, yd = da.from_array(X, chunks=(50, 2)), da.from_array(y, chunks=70)
    shards = tgd.blocks(Xd, yd)
    assert len(shards) == 5 and all(s[0].shape[0] == s[1].shape[0] for s in dask.compute(shards)[0])
    grads = tgd.grad_sum(logistic_loss, params, shards, client=client)
    assert_tree_close(grads, tg.grad(logistic_loss)(params, X, y))


@pytest.mark.slow
def test_compute_false_gives_a_future_or_a_delayed(data, client):
    X, y, params = data
    shards = tgd.split(X, y, count=2)
    future = tgd.grad_sum(logistic_loss, params, shards, client=client, compute=False)
    assert isinstance(future, distributed.Future)
    lazy = tgd.grad_sum(logistic_loss, params, shards, compute=False)
    assert isinstance(lazy, Delayed)
    assert_tree_close(future.result(), lazy.compute())


def test_no_shards_and_mismatched_wrt_are_errors(data):
    X, y, params = data
    with pytest.raises(tg.TapegenError, match="at least one shard"):
        tgd.grad_sum(logistic_loss, params, [])
    with pytest.raises(tg.TapegenError, match="must be a tuple of 2"):
        tgd.grad_sum(logistic_loss_wb, params["w"], [(X, y, 1)], wrt=(0, 1))


def test_add_trees_sums_leaf_by_leaf():
    total = tgd.add_trees({"w": np.ones(2), "b": (1.0, [2.0])}, {"w": np.ones(2), "b": (3.0, [4.0])},
                          {"w": np.ones(2), "b": (5.0, [6.0])})
    assert_tree_close(total, {"w": np.full(2, 3.0), "b": (9.0, [12.0])})


# --- a cluster running tapegen's gradient functions ----------------------------------------------

@pytest.mark.slow
def test_client_submit_runs_tg_grad_on_a_worker_process(data, client):
    X, y, params = data
    w = params["w"]
    future = client.submit(tg.grad(logistic_mean), w, X[:50], y[:50])
    np.testing.assert_allclose(future.result(), tg.grad(logistic_mean)(w, X[:50], y[:50]), rtol=1e-12)
    value, grads = client.submit(tg.value_and_grad(logistic_loss), params, X, y).result()
    assert_tree_close(grads, {"w": hand_gradient(w, params["b"], X, y)[0], "b": hand_gradient(w, params["b"], X, y)[1]})
    worker_pids = set(client.run(os.getpid).values())
    assert os.getpid() not in worker_pids and len(worker_pids) == 2


# --- gradients of dask arrays --------------------------------------------------------------------

class ComputeCounter(dask.callbacks.Callback):
    """Counts graph executions on a local scheduler: a lazy gradient runs none."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def lazy_gradient(f, *args, **kwargs):
    with dask.config.set(scheduler="sync"), ComputeCounter() as counter:
        result = tg.grad(f, **kwargs)(*args)
    return result, counter.count


def test_dask_array_gradient_is_lazy_and_equals_the_numpy_one(data):
    X, y, params = data
    w = params["w"]
    Xd, yd, wd = da.from_array(X, chunks=(40, 4)), da.from_array(y, chunks=40), da.from_array(w, chunks=2)
    g, computes = lazy_gradient(logistic_mean, wd, Xd, yd)
    assert isinstance(g, da.Array) and computes == 0
    assert g.dtype == np.float64 and g.shape == w.shape
    np.testing.assert_allclose(g.compute(), tg.grad(logistic_mean)(w, X, y), rtol=1e-12)
    np.testing.assert_allclose(g.compute(), hand_gradient(w, 0.0, X, y)[0] / len(y), rtol=1e-10)


def test_dask_gradient_with_a_pytree_of_dask_arrays(data):
    X, y, params = data
    lazy = {"w": da.from_array(params["w"], chunks=2), "b": da.from_array(np.array(params["b"]))}
    g, computes = lazy_gradient(logistic_loss, lazy, da.from_array(X, chunks=(40, 4)), da.from_array(y, chunks=40))
    assert computes == 0 and all(isinstance(v, da.Array) for v in g.values())
    dw, db = hand_gradient(params["w"], params["b"], X, y)
    np.testing.assert_allclose(g["w"].compute(), dw, rtol=1e-10)
    np.testing.assert_allclose(g["b"].compute(), db, rtol=1e-10)


def test_numpy_parameters_with_dask_data_give_a_lazy_gradient(data):
    X, y, params = data
    g, computes = lazy_gradient(logistic_loss, params, da.from_array(X, chunks=(40, 4)), da.from_array(y, chunks=40))
    assert computes == 0 and isinstance(g["w"], da.Array) and isinstance(g["b"], da.Array)
    dw, db = hand_gradient(params["w"], params["b"], X, y)
    np.testing.assert_allclose(dask.compute(g)[0]["w"], dw, rtol=1e-10)


def test_numpy_parameters_with_dask_data_give_the_numpy_gradient(data):
    X, y, params = data
    g = tg.grad(logistic_loss)(params, da.from_array(X, chunks=(40, 4)), da.from_array(y, chunks=40))
    g = dask.compute(g)[0]
    dw, db = hand_gradient(params["w"], params["b"], X, y)
    np.testing.assert_allclose(g["w"], dw, rtol=1e-10)
    np.testing.assert_allclose(g["b"], db, rtol=1e-10)


def test_sqrt_and_log_gradients_stay_lazy(data):
    X, _, params = data
    wd, Xd = da.from_array(params["w"], chunks=2), da.from_array(X, chunks=(40, 4))
    g, computes = lazy_gradient(sqrt_loss, wd, Xd)
    assert computes == 0
    np.testing.assert_allclose(g.compute(), tg.grad(sqrt_loss)(params["w"], X), rtol=1e-10)


# --- pickling into another process ---------------------------------------------------------------

MODEL = '''
import numpy as np
import tapegen as tg

def loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)

@tg.differentiate
def decorated(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)
'''

LOAD = '''
import json, pickle, sys
import numpy as np
fn = pickle.load(open(sys.argv[1], "rb"))
w, X, y = np.array([0.5, -1.0]), np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]), np.array([1.0, 0.0, 1.0])
out = fn(w, X, y)
value, grad = out if isinstance(out, tuple) else (None, out)
print(json.dumps({"type": type(fn).__name__, "value": None if value is None else float(value),
                  "grad": np.asarray(grad).tolist(), "tapegen_loaded": "tapegen" in sys.modules}))
'''
W, X3, Y3 = np.array([0.5, -1.0]), np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]), np.array([1.0, 0.0, 1.0])


def run_python(args, cwd, extra_path=()):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, extra_path), str(REPO)]))
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def load_elsewhere(path, tmp_path, extra_path=()):
    """Unpickle the callable in `path` in a fresh process (plain pickle) and call it on W, X3, Y3."""
    (tmp_path / "load.py").write_text(LOAD)
    return json.loads(run_python([str(tmp_path / "load.py"), str(path)], cwd=tmp_path, extra_path=extra_path))


@pytest.fixture
def model(tmp_path, monkeypatch):
    package = tmp_path / "importable"
    package.mkdir()
    (package / "dask_test_model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(package))
    import dask_test_model
    yield dask_test_model
    sys.modules.pop("dask_test_model", None)


def expected(f, with_value=False):
    value, grad = tg.value_and_grad(f)(W, X3, Y3)
    return {"value": float(value) if with_value else None, "grad": grad.tolist()}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["grad", "value_and_grad"])
def test_plain_pickle_of_an_importable_function_round_trips(model, tmp_path, kind):
    transform = getattr(tg, kind)
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(transform(model.loss)))
    out = load_elsewhere(path, tmp_path, extra_path=[tmp_path / "importable"])
    assert out["type"] == "GradFunction"
    want = expected(model.loss, with_value=kind == "value_and_grad")
    np.testing.assert_allclose(out["grad"], want["grad"], rtol=1e-12)
    if kind == "value_and_grad":
        assert out["value"] == pytest.approx(want["value"], rel=1e-12)
    else:
        assert out["value"] is None


@pytest.mark.slow
def test_plain_pickle_of_a_decorated_importable_function_round_trips(model, tmp_path):
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(tg.grad(model.decorated)))
    out = load_elsewhere(path, tmp_path, extra_path=[tmp_path / "importable"])
    np.testing.assert_allclose(out["grad"], expected(model.loss)["grad"], rtol=1e-12)


MAIN_SCRIPT = '''
import sys
import cloudpickle, numpy as np
import tapegen as tg

def main_loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)

with open(sys.argv[1], "wb") as f:
    cloudpickle.dump(tg.value_and_grad(main_loss), f)
'''


def pickle_from_main(tmp_path, where):
    """Run a script defining its loss in __main__; it cloudpickles tg.value_and_grad(loss) to a file."""
    where.mkdir(exist_ok=True)
    (where / "train.py").write_text(MAIN_SCRIPT)
    path = tmp_path / "main.pkl"
    run_python([str(where / "train.py"), str(path)], cwd=where)
    return path


@pytest.mark.slow
def test_cloudpickle_of_a_function_in_main_round_trips(tmp_path):
    path = pickle_from_main(tmp_path, tmp_path / "script")
    out = load_elsewhere(path, tmp_path)
    want = expected(logistic_mean, with_value=True)
    np.testing.assert_allclose(out["grad"], want["grad"], rtol=1e-12)
    assert out["value"] == pytest.approx(want["value"])


@pytest.mark.slow
def test_cloudpickle_from_main_works_where_the_script_is_absent(tmp_path):
    """A remote worker has neither the script nor the notebook cell the loss came from."""
    path = pickle_from_main(tmp_path, tmp_path / "script")
    (tmp_path / "script" / "train.py").unlink()
    out = load_elsewhere(path, tmp_path)
    np.testing.assert_allclose(out["grad"], expected(logistic_mean)["grad"], rtol=1e-12)


@pytest.mark.slow
def test_an_exported_module_pickles_by_reference_and_by_value(model, tmp_path):
    export = pytest.importorskip("tapegen.export")
    exported = tmp_path / "exported"
    exported.mkdir()
    (exported / "loss_gradient.py").write_text(export.export(model.loss))
    code = textwrap.dedent(f'''
        import pickle, sys, cloudpickle
        sys.path.insert(0, {str(exported)!r})
        import loss_gradient
        pickle.dump(loss_gradient.grad, open({str(tmp_path / "ref.pkl")!r}, "wb"))
        cloudpickle.register_pickle_by_value(loss_gradient)
        cloudpickle.dump(loss_gradient.value_and_grad, open({str(tmp_path / "value.pkl")!r}, "wb"))
    ''')
    run_python(["-c", code], cwd=tmp_path)
    by_reference = load_elsewhere(tmp_path / "ref.pkl", tmp_path, extra_path=[exported])
    np.testing.assert_allclose(by_reference["grad"], expected(model.loss)["grad"], rtol=1e-12)
    by_value = load_elsewhere(tmp_path / "value.pkl", tmp_path)  # the module is not on this process's path
    assert not by_value["tapegen_loaded"]
    want = expected(model.loss, with_value=True)
    np.testing.assert_allclose(by_value["grad"], want["grad"], rtol=1e-12)
    assert by_value["value"] == pytest.approx(want["value"], rel=1e-12)


@pytest.mark.slow
def test_importing_tapegen_does_not_import_dask(tmp_path):
    out = run_python(["-c", "import sys, tapegen; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                            "('dask', 'distributed', 'cloudpickle')))"], cwd=tmp_path)
    assert out.strip() == "[]"


# --- the example ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_distributed_example_trains(tmp_path):
    example = Path(__file__).resolve().parent.parent / "examples" / "distributed_logreg.py"
    out = run_python([str(example)], cwd=tmp_path)
    losses = [float(line.split("loss")[1].split()[0]) for line in out.splitlines() if line.startswith("epoch")]
    assert len(losses) >= 5 and losses[-1] < 0.8 * losses[0]
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:]))
