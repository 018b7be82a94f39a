"""Data-parallel gradients on Dask: per-shard gradients, summed by a tree reduction that Dask schedules.

tapegen's gradient of `f` is an ordinary NumPy function that pickles, so a Dask
cluster runs it as it runs any other function: nothing here schedules, retries or
moves data by hand. With a `distributed.Client`, each shard's `(value, gradient)`
is a future from `client.map` and the sums are futures from `client.submit`, a
tree `split_every` wide (the all-reduce of data-parallel training, done as
Dask's own tree reductions are). Without one, the same tree is built from
`dask.delayed` calls and run by `dask.compute` (threads by default).

For a loss that is a sum over examples, the sum of the shards' gradients is the
full-batch gradient. For a mean, divide by the total count inside `f` (pass it
as an argument) so the shards' parts add up to the full mean.

    import tapegen.dask as tgd
    shards = tgd.scatter(client, tgd.split(X, y, count=8))      # once: data stays on the workers
    loss, grads = tgd.value_and_grad_sum(loss_fn, params, shards, client=client)   # each step

Dask is optional: `pip install tapegen[dask]`. Importing `tapegen` never imports
this module or Dask.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from ..api import value_and_grad
from ..errors import TapegenError

try:
    import dask
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("tapegen.dask needs Dask: pip install 'tapegen[dask]'") from exc

__all__ = ["grad_sum", "value_and_grad_sum", "split", "scatter", "blocks", "add_trees"]


def grad_sum(f, params, shards, client=None, wrt=0, *, split_every=8, compute=True):
    """The sum over `shards` of the gradient of `f(params, *shard)` with respect to `params`.

    Args:
        f: a scalar-valued NumPy function, plain or `@tapegen.differentiate`d, called as
            `f(params, *shard)` (or `f(*params, *shard)` when `wrt` is a tuple).
        params: the value(s) differentiated: an array, a float, or a pytree (dict/list/tuple of
            arrays); a tuple with one item per `wrt` entry when `wrt` is a tuple.
        shards: an iterable of tuples, one per shard, holding the rest of `f`'s arguments. Items
            may be arrays, `distributed` futures (see `scatter`), or `dask.delayed` values (see
            `blocks`); a bare array is a one-item shard.
        client: a `distributed.Client`, or None for `dask.compute` with the current scheduler.
        wrt: which arguments of `f` `params` are, as in `tapegen.grad` (default: the first).
        split_every: how many partial sums one reduction task adds.
        compute: False returns the un-computed result (a `Future` with a client, else a `Delayed`).

    Returns:
        The summed gradient, with the structure, shapes and dtypes of `params`.

    Raises:
        TapegenError: there are no shards, or `params` does not match a tuple `wrt`.

    Example:
        >>> import numpy as np, tapegen.dask as tgd
        >>> def loss(w, X, y):
        ...     return np.sum((X @ w - y) ** 2)
        >>> X, y = np.ones((4, 2)), np.zeros(4)
        >>> tgd.grad_sum(loss, np.ones(2), tgd.split(X, y, count=2))      # doctest: +SKIP
        array([16., 16.])
    """
    total = value_and_grad_sum(f, params, shards, client, wrt, split_every=split_every, compute=False)
    picked = client.submit(operator.itemgetter(1), total) if client is not None else total[1]
    return _finish(picked, compute, client)


def value_and_grad_sum(f, params, shards, client=None, wrt=0, *, split_every=8, compute=True):
    """`(sum of f's values, sum of its gradients)` over `shards`: one pass per shard for both.

    Takes the arguments of `grad_sum`, which see.

    Example:
        >>> loss_total, grads = value_and_grad_sum(loss, params, shards, client=client)  # doctest: +SKIP
    """
    shards = [shard if isinstance(shard, tuple) else (shard,) for shard in shards]
    if not shards:
        raise TapegenError("grad_sum needs at least one shard", hint="pass a list of (X, y) tuples, e.g. split(X, y, count=4)")
    gradient = value_and_grad(f, wrt=wrt)
    leading = _leading_arguments(params, wrt)
    if client is not None:
        total = _on_client(client, gradient, leading, shards, split_every)
    else:
        total = _delayed(gradient, leading, shards, split_every)
    return _finish(total, compute, client)


def _leading_arguments(params, wrt):
    """`params` as the tuple of `f`'s leading arguments."""
    if not isinstance(wrt, (tuple, list)):
        return (params,)
    if not isinstance(params, tuple) or len(params) != len(wrt):
        raise TapegenError(f"wrt={wrt!r} names {len(wrt)} arguments, so params must be a tuple of {len(wrt)} "
                           "values, f's leading arguments", hint="or pass one pytree (a dict) as params with wrt=0")
    return params


def _on_client(client, gradient, leading, shards, split_every):
    """Per-shard futures from `client.map`, summed by `client.submit` in a tree."""
    shared = client.scatter(list(leading), broadcast=True)  # the parameters, sent once to every worker
    shards = [_as_futures(client, shard) for shard in shards]
    columns = [[value] * len(shards) for value in shared] + [list(column) for column in zip(*shards)]
    parts = client.map(gradient, *columns)
    return _tree(parts, functools.partial(client.submit, add_trees), split_every)


def _as_futures(client, shard):
    """Dask collections in a shard (e.g. `blocks` of a dask array) become futures; other items stay."""
    return tuple(client.compute(item) if dask.is_dask_collection(item) else item for item in shard)


def _delayed(gradient, leading, shards, split_every):
    """The same tree as `dask.delayed` calls, for `dask.compute` with no client."""
    shared = [dask.delayed(value, traverse=False) for value in leading]
    call = dask.delayed(gradient, pure=True)
    parts = [call(*shared, *shard) for shard in shards]
    return _tree(parts, dask.delayed(add_trees, pure=True), split_every)


def _tree(parts, combine, split_every):
    """Reduce `parts` by `combine` on groups of up to `split_every`, until one remains."""
    if split_every < 2:
        raise TapegenError(f"split_every={split_every}: a reduction step adds at least 2 parts")
    while len(parts) > 1:
        parts = [combine(*group) if len(group) > 1 else group[0]
                 for group in (parts[i:i + split_every] for i in range(0, len(parts), split_every))]
    return parts[0]


def _finish(result, compute, client):
    if not compute:
        return result
    return result.result() if client is not None else dask.compute(result)[0]


def add_trees(*trees):
    """The leaf-by-leaf sum of pytrees of one structure (dicts, lists, tuples of arrays and numbers).

    Example:
        >>> add_trees({"w": np.ones(2), "b": 1.0}, {"w": np.ones(2), "b": 2.0})
        {'w': array([2., 2.]), 'b': 3.0}
    """
    first = trees[0]
    if isinstance(first, dict):
        return type(first)((key, add_trees(*(tree[key] for tree in trees))) for key in first)
    if isinstance(first, (list, tuple)):
        return type(first)(add_trees(*items) for items in zip(*trees))
    return functools.reduce(operator.add, trees)


# --- shards ------------------------------------------------------------------------------------


def split(*arrays, count):
    """Split arrays by rows (axis 0) into `count` shards: a list of tuples `(X_i, y_i, ...)`.

    Example:
        >>> [tuple(a.shape for a in s) for s in split(np.zeros((5, 2)), np.zeros(5), count=2)]
        [((3, 2), (3,)), ((2, 2), (2,))]
    """
    lengths = {np.shape(a)[0] for a in arrays}
    if len(lengths) != 1:
        raise TapegenError(f"split needs arrays with one number of rows; got {sorted(lengths)}")
    return list(zip(*(np.array_split(np.asarray(a), count) for a in arrays)))


def scatter(client, shards):
    """Send shards to the cluster's workers once: a list of tuples of futures, for `grad_sum`.

    Each array becomes its own future, so a step ships only the parameters.
    """
    shards = [shard if isinstance(shard, tuple) else (shard,) for shard in shards]
    flat = client.scatter([item for shard in shards for item in shard])
    out, start = [], 0
    for shard in shards:
        out.append(tuple(flat[start:start + len(shard)]))
        start += len(shard)
    return out


def blocks(*arrays):
    """Shards from dask arrays: one `(X_block, y_block, ...)` of `dask.delayed` values per row chunk.

    The arrays are rechunked to the first one's row chunks and to one chunk along
    every other axis, so each shard holds whole rows.

    Example:
        >>> import dask.array as da
        >>> X = da.ones((6, 2), chunks=(2, 2)); y = da.zeros(6, chunks=3)
        >>> len(blocks(X, y))
        3
    """
    rows = arrays[0].chunks[0]
    parts = []
    for a in arrays:
        a = a.rechunk((rows,) + tuple(-1 for _ in a.shape[1:]))
        parts.append(list(a.to_delayed().ravel()))
    return list(zip(*parts))
