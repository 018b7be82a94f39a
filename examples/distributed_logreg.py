"""Logistic regression trained on a dataset split across a Dask cluster, with tapegen's gradients.

Each step sends the parameters to the workers, every worker runs tapegen's
generated gradient (plain NumPy) on the shards it holds, and Dask adds the
shards' gradients up in a tree: data-parallel full-batch gradient descent.

    pip install "tapegen[dask]"
    python examples/distributed_logreg.py                # a LocalCluster: 2 worker processes on 127.0.0.1
    python examples/distributed_logreg.py --scheduler tcp://scheduler:8786   # a real cluster

On a real cluster (`Client("tcp://scheduler:8786")`, started with `dask scheduler`
and `dask worker tcp://scheduler:8786` on each machine), install numpy and tapegen
on every worker. tapegen derives the gradient from the loss's source, so keep the
loss in a module the workers can import (`client.upload_file("model.py")` sends
one); a loss defined in a script or notebook travels by value with cloudpickle.
"""
import argparse
import logging
import time

import numpy as np
from distributed import Client, LocalCluster

import tapegen.dask as tgd


def loss(params, X, y, n):
    """Mean logistic loss over all n examples; each shard contributes its share."""
    z = X @ params["w"] + params["b"]
    return np.sum(np.logaddexp(0.0, z) - y * z) / n


def make_data(rows=40_000, features=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features))
    true_w = rng.normal(size=features)
    y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-(X @ true_w - 0.5)))).astype(float)
    return X, y


def train(client, X, y, epochs=12, shards=8, learning_rate=2.0):
    n = len(y)
    data = [(Xs, ys, n) for Xs, ys in tgd.split(X, y, count=shards)]
    data = tgd.scatter(client, data)  # sent once: each step ships only the parameters
    params = {"w": np.zeros(X.shape[1]), "b": 0.0}
    for epoch in range(1, epochs + 1):
        value, grads = tgd.value_and_grad_sum(loss, params, data, client=client)
        print(f"epoch {epoch:2d}  loss {value:.6f}  |grad| {np.linalg.norm(grads['w']):.4f}", flush=True)
        params = {k: params[k] - learning_rate * grads[k] for k in params}
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="address of a running scheduler, e.g. tcp://scheduler:8786")
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()
    X, y = make_data()
    start = time.perf_counter()
    if args.scheduler:
        with Client(args.scheduler) as client:
            params = train(client, X, y, args.epochs)
    else:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, memory_limit="512MiB", silence_logs=logging.ERROR) as cluster, \
                Client(cluster) as client:
            params = train(client, X, y, args.epochs)
    accuracy = np.mean(((X @ params["w"] + params["b"]) > 0) == (y > 0.5))
    print(f"training accuracy {accuracy:.3f}  ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
