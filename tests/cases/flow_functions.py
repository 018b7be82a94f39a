"""Real-looking functions with loops, branches and array assignment (issue 3's corpus)."""
import contextlib
import threading

import numpy as np


def rnn(W, U, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(h @ W + x @ U)
    return np.sum(h ** 2)


def rnn_states(W, xs):
    T = len(xs)
    hs = np.zeros((T + 1, W.shape[0]))
    for t in range(T):
        hs[t + 1] = np.tanh(hs[t] @ W + xs[t])
    return np.sum(hs[1:] ** 2)


def piecewise(x):
    if x > 1.0:
        y = x ** 2
    elif x > -1.0:
        y = np.sin(x)
    else:
        y = -x
    return y * 3.0


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x


def dp_table(w):
    n = len(w)
    A = np.zeros((n, n))
    for i in range(n):
        A[i, 0] = w[i]
        A[0, i] = w[i] * 2.0
    for i in range(1, n):
        for j in range(1, n):
            A[i, j] = np.maximum(A[i - 1, j], A[i, j - 1]) + w[i] * w[j]
    return A[n - 1, n - 1]


def early_return(x, limit):
    total = 0.0
    for v in x:
        if total > limit:
            return total * 2.0
        total = total + np.sin(v)
    return total


def skips(x):
    total = 0.0
    for i, v in enumerate(x):
        if v < 0:
            continue
        if i > 4:
            break
        total += v * v * i
    return total


def zipped(a, b):
    s = 0.0
    for p, q in zip(a, b):
        s = s + p * np.exp(q)
    return s


def masked(x):
    y = x * 1.0
    y[y < 0] = 0.0
    y[:, 0] *= 3.0
    return np.sum(y ** 2)


def accumulate_in_place(x, n):
    acc = np.zeros_like(x)
    for k in range(n):
        acc += np.sin(x * k)
    return np.sum(acc)


def swap_loop(a, b):
    for _ in range(3):
        a, b = b, a * b
    return a + b


def branch_reassigns_argument(x):
    if np.sum(x) > 0:
        x = x * 2.0
    return np.sum(x ** 2)


def many_steps(x):
    for _ in range(2000):
        x = x * 0.999 + 0.001
    return x


def dense(W, b, x):
    return np.tanh(x @ W + b)


def mse(pred, y):
    diff = pred - y
    return np.mean(diff ** 2)


def two_layer_loss(params, x, y):
    h = dense(params["W1"], params["b1"], x)
    out = dense(params["W2"], params["b2"], h)
    return mse(out, y)


def make_step(scale):
    def step(w, x):
        return np.sum(np.sin(w * x) * scale)
    return step


def uses_closure_helper(w, x):
    helper = make_step(2.0)
    return helper(w, x)


def with_nested_def(x, y):
    def inner(a, b=2.0):
        return a * b + y
    g = lambda v: v ** 2
    return np.sum(inner(x) * g(x))


def divmod_like(x):
    q, r = split_pair(x)
    return np.sum(q * r)


def split_pair(x):
    return x * 2.0, np.sin(x)


def factorial_like(x, n):
    if n <= 1:
        return x
    return x * factorial_like(x, n - 1)


def prints_along_the_way(x):
    y = np.sin(x)
    print("intermediate", np.round(y, 3))
    return np.sum(y)


def collect_and_stack(W, xs):
    states = []
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + x)
        states.append(h)
    return np.sum(np.stack(states) ** 2)


def list_to_array(a, b):
    values = [a * 2.0, np.sin(b)]
    values.append(a * b)
    return np.sum(np.array(values) ** 2)


def dict_and_tuple_literals(x, y):
    params = {"scale": x, "shift": y}
    pair = (x, y)
    return np.sum(params["scale"] * pair[1] + params["shift"])


def short_circuit(x, limit):
    if x > 0 and x < limit:
        y = x * 2.0
    else:
        y = x
    z = y if y > 1.0 else y ** 3
    w = (x > 5.0) or (x < -5.0)
    return z + w


def optional_argument(x, scale=None, mode="sum"):
    if scale is not None and mode in ("sum", "mean"):
        x = x * scale
    return np.sum(x ** 2) if mode == "sum" else np.mean(x ** 2)


def indexes_a_tuple_display(a):
    return np.sum((a, 2.0 * a)[1] * a)


SCALE = 2.0


def reads_a_module_constant(x):
    return np.sum(x * SCALE)


def loop_name_reused(x):
    """`t` set by the first loop's body (a loop over a list is a loop over positions) and the target of the
    second: the backward pass of the first must see each pass's `t` again."""
    h = x[0]
    for t in [2, 0, 1]:
        h = np.tanh(h * x[t])
    for t in range(5):
        h = h + np.sin(h) * 0.1
    return np.sum(h * x[t - 3])


def loop_names_reused_nested(x):
    h = x[0]
    for t in reversed(range(3)):
        for t2 in range(2):
            h = np.tanh(h * x[t] + t2)
    s = 0.0
    for t in range(2):
        for t2 in reversed(range(3)):
            s = s + np.sum(h * x[t2]) * t
    return s


def loop_target_set_before_and_after(x):
    t = 2
    h = x[t] * 2.0
    for t in range(3):
        h = np.sin(h) * x[t]
    t = t - 1
    return np.sum(h * x[t])


def loop_name_reused_with_ints_saved(x):
    """Each pass of the first loop saves an int besides `t`: a pop with no push used to hand one to the other."""
    h = 1.0
    for t in [3, 0, 2, 1]:
        k = (t + 1) % 4
        h = h * x[k] + x[t]
    for t in range(2):
        h = h * 1.5
    return h


def search_else(x, limit):
    """`for ... else`: the else runs when no `break` left the loop."""
    total = 0.0
    for i in range(3):
        if x[i] > limit:
            total = total + x[i] ** 2
            break
        total = total + np.sin(x[i])
    else:
        total = total * 3.0
    return total


def while_else(x, limit):
    h = x
    k = 0
    while k < 4:
        h = np.tanh(h) * 1.5
        if np.sum(h) > limit:
            break
        k += 1
    else:
        h = h * 2.0
    return np.sum(h ** 2)


def nested_loop_else(x, limit):
    """The inner loop's `break` does not skip the outer loop's else; a `break` in the inner loop's else
    leaves the outer loop (and skips its else)."""
    acc = 0.0
    for i in range(3):
        for j in range(2):
            if x[j] * i > limit:
                break
            acc = acc + x[i] * x[j]
        else:
            if acc > 2 * limit:
                break
    else:
        acc = acc * 10.0
    return acc


def return_skips_else(x, limit):
    for i in range(3):
        if x[i] > limit:
            return x[i] * 2.0
    else:
        return np.sum(x ** 3)


_WEIGHTS = np.array([0.5, 0.3, 0.2])


def index_set_before_and_in_a_loop(a):
    """numpy-ml's HMM: `ot = Obs[0]` before the loop, `ot = Obs[t]` in it (the code deleted it twice)."""
    k = 0
    s = a * _WEIGHTS[k]
    for t in range(1, 3):
        k = t
        s = s + a * _WEIGHTS[k]
    return s


def fresh_array_written_then_rebound_in_a_loop(q):
    """`g[1:] -= ...; g -= ...` on a fresh array each pass: at second order tapegen refused its own gradient
    code (`g[1:] = tape_pop(recorded, g)` into the array the tape gave back)."""
    for _ in range(2):
        g = np.zeros(3)
        g[1:] -= q[1:]
        g -= q
        q = q * g + q
    return np.sum(q ** 2)


def set_in_the_body_read_in_the_next_pass(x):
    """`prev` is first set in the loop body and read (from the pass before) in later passes, `keep` set on
    even passes and read on odd ones: the IR check failed (an internal error)."""
    s = 0.0
    for k in range(4):
        if k > 0:
            s = s + np.sum(prev * x)
        prev = x * (k + 1)
        if k % 2 == 0:
            keep = x * k
        else:
            s = s + np.sum(keep ** 2)
    return s


_NMF_W = np.array([[1.0, 0.5], [0.2, 0.3]])


def _nmf_update(H):
    """numpy-ml's NMF._update_H: writes into its argument; `H.T @ w` makes a view used up in its statement."""
    for k in range(2):
        H[k, :] += _NMF_W[:, k] - H.T @ _NMF_W[:, k]
        H[k, :] = np.clip(H[k, :], 0.01, np.inf)
    return H


def helper_writes_into_a_copy_it_is_passed(x):
    H0 = np.stack([x, 2 * x])
    return np.sum(_nmf_update(H0.copy()) ** 2)


class _Timer:
    """A context manager of the user's: its __enter__ and __exit__ are inlined."""

    def __enter__(self):
        import time
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        import time
        self.elapsed = time.perf_counter() - self.t0
        return False


_LOCK = threading.Lock()


def inside_context_managers(x):
    with _Timer() as t:
        y = np.tanh(x) ** 2
    with contextlib.nullcontext("fwd") as s, np.errstate(divide="ignore"), _LOCK:
        y = y + np.sin(x) * len(s)
    with _Timer():
        return np.sum(y) + 0.0 * (t.elapsed > 0)


def nonlocal_accumulators(x):
    """`nonlocal` in local defs: called directly, in a loop, and in a comprehension."""
    total, calls = 0.0, 0

    def add(v):
        nonlocal total, calls
        total = total + np.sum(v ** 2)
        calls += 1
    add(x)
    add(np.sin(x))
    acc = x[0]

    def step(v):
        nonlocal acc
        acc = acc * v + 1.0
    for v in x:
        step(v)
    running = 0.0

    def bump(v):
        nonlocal running
        running = running + v
        return running
    deep = 0.0

    def outer():
        def inner():
            nonlocal deep
            deep = deep + np.sum(x ** 3)
        inner()
        inner()
    outer()
    return total * calls + acc + np.sum(np.array([bump(v) for v in x])) + deep


def _calls_it(f, v):
    return f(v)


def nonlocal_def_called_elsewhere(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    _calls_it(add, np.sum(x))
    return total


def alias_made_in_a_loop_read_after_the_write(x):
    a = np.zeros(3)
    t = 0.0
    for i in range(3):
        b = a
        a[i] = x[i] * (i + 1)
        t = t + np.sum(b)  # b is a, written: NumPy shows the write
    return t


def alias_read_in_the_next_pass(x):
    a = np.zeros(3)
    t = 0.0
    for i in range(3):
        if i > 0:
            t = t + np.sum(b ** 2)
        b = a
        a[i] = x[i] * (i + 2)
    return t + np.sum(a)


def alias_chosen_in_a_branch(x):
    a, b = np.zeros(3), np.ones(3)
    c = a if x[0] > 0 else b
    c[0] = x[0] * 3
    return np.sum(a * x) + np.sum(b)


def row_scaled_in_place_then_copied(x):
    """`S[0] *= x` reads the old row through a view the product's rule keeps; the array is not read again
    (copied, or rebound): the backward pass dropped restoring the row, so the rule read the new one (a
    wrong gradient on d0f02f4)."""
    S = np.ones((3, 3))
    S[0] *= x
    T = np.copy(S)
    R = np.ones((3, 3))
    R[:, 1] *= x ** 2
    R = R * 2.0
    return np.sum(T ** 2) + np.sum(R ** 2)


@contextlib.contextmanager
def _scaled(v):
    global _SCALE
    old, _SCALE = _SCALE, v
    yield
    _SCALE = old


_SCALE = 1.0


def inside_a_manager_tapegen_cannot_see(x):
    """A contextlib manager changing a global the block reads: the value was right, the gradient not."""
    with _scaled(5.0):
        y = x * _SCALE
    return np.sum(y)


class _Swallowing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


def inside_a_manager_that_swallows_errors(x):
    with _Swallowing():
        y = np.sin(x)
    return np.sum(y)


def views_made_other_ways(x):
    """np.atleast_1d(a), a.astype(float, copy=False) and the rows `for r in a` walks are views of `a`:
    written into after, they were read as they were before (a zero gradient on d0f02f4)."""
    a = np.zeros(3)
    b = np.atleast_1d(a)
    a[0] = x[0] * 3
    return np.sum(b ** 2)


def rows_kept_in_a_list_then_written(x):
    a = np.zeros((2, 3))
    rows = [r for r in a]
    a[0, 0] = x[0] * 3
    return np.sum(rows[0] ** 2)


def rows_written_through_in_a_loop(x):
    """Writing `A[i]` from its own row in the pass that read it: the row is read first (allowed)."""
    A = np.outer(x, x)
    for i, row in enumerate(A):
        A[i] = row * 2 + x[i]
    rows = [r.copy() for r in A]
    A[0, 0] = x[0] * 3
    return np.sum(A ** 2) + np.sum(rows[0])


def generator_consumed_after_a_write(x):
    """Python reads `a` when `g` is consumed, after the write; tapegen where `g` is written (a zero value
    and gradient on d0f02f4)."""
    a = np.zeros(3)
    g = (v * 2 for v in a)
    a[0] = x[0] * 3
    return sum(g) + np.sum(x)


def set_in_one_branch_then_another(x, c):
    if c > 0:
        L = np.sin(x)
    if c <= 0:  # L is saved before this assignment: unset where the first branch did not run
        L = np.cos(x)
    return np.sum(L * L)


def _sequence_mask(X, valid_len, value=0.0):  # d2l's, writing into the view its caller passes
    maxlen = X.shape[1]
    mask = np.arange(maxlen, dtype=np.float32)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    shape = X.shape
    valid_lens = np.repeat(valid_lens, shape[1])
    X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    e = np.exp(X.reshape(shape) - np.max(X.reshape(shape), axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention_weights(Q, K):
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    attn = masked_softmax(scores, np.array([2, 4]))
    return np.sum(attn ** 2 * np.arange(attn.shape[-1]))


def written_through_a_view_after_a_rule_read_it(x):
    B = x * 2.0
    y = np.sum(B ** 2)  # its rule reads B in the backward pass: the view's write is undone first
    V = B.reshape(2, 2)
    V[0, 0] = 5.0
    return y + np.sum(V * x.reshape(2, 2))


def view_written_then_base_read(x):
    B = x * 2.0
    V = B.reshape(2, 2)
    V[0, 0] = 0.0
    return np.sum(B)


def view_written_then_other_view_read(x):
    B = x * 2.0
    W = B[:2]
    V = B.reshape(2, 2)
    V[0, 0] = 0.0
    return np.sum(W)


def view_written_base_read_next_pass(x):
    B = x * 2.0
    for i in range(2):
        V = B.reshape(2, 2)
        V[i, 0] = x[i]
    return np.sum(V)


def view_written_base_returned(x):
    B = x * 2.0
    V = B[1:]
    V[0] = x[0] ** 2
    return B


def view_written_base_read_before_its_name_is_rebound(x):
    B = x * 1.0
    s = 0.0
    for i in range(2):
        V = B.reshape(2, 2)
        V[0, 0] = x[1] * 5.0
        s = s + np.sum(B * x)  # B changed by the write above; rebound only after this
        B = B * 2.0
    return s


def view_made_between_two_writes(x):
    B = x * 2.0
    V = B.reshape(2, 2)
    V[0, 0] = x[0] ** 2
    W = V[1]  # made after the first write, changed by the second
    V[1, 0] = x[1] ** 3
    return np.sum(W * x[:2])


def rows_filled_through_views(x):
    """`row = out[i]; row[:] = ...`, a column's `col **= 2`, a transpose's row, a strided slice's `+=`, np.flip,
    in loops and a branch: NumPy changes the array each view shows, which is read after."""
    out = np.zeros((3, 2))
    for i in range(3):
        row = out[i]
        row[:] = x[i] * np.array([1.0, 2.0])
    M = np.zeros((3, 3))
    for j in range(3):
        col = M[:, j]
        col[:] = x[:3] * (j + 1.0)
        col **= 2
    T = np.zeros((2, 3))
    TT = T.T
    TT[0] = x[:2]
    a = np.zeros(6)
    b = a[::2]
    b[1] = x[1]
    b += x[0]
    f = np.zeros(3)
    flipped = np.flip(f)
    flipped[0] = x[2] * 3.0
    row = out[0]
    if x[0] > 0:
        row *= x[1]
    return np.sum(out ** 2) + np.sum(M @ x[:3]) + np.sum(T ** 2) + np.sum(a * np.arange(6.0)) + \
        np.sum(f * np.arange(1.0, 4.0))


def heat_equation_through_an_interior_view(x):
    """A PDE step written as NumPy users write it: `interior = u[1:-1]; interior += dt * lap`."""
    u = np.concatenate([x, x[::-1]]) * 1.0
    for t in range(4):
        lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
        interior = u[1:-1]
        interior += 0.2 * lap
        u[0] = u[-1] = 0.0
    return np.sum(u ** 2)


def _fill(r, v):
    r[:] = v


def views_written_by_a_helper_and_views_of_views(x):
    """A helper filling the view its caller passes (`fill(out[i], v)`), a view of a view, a view made in one pass
    and written in later ones, and views that turn out copies (a reshape of a transpose, a fancy index: NumPy
    writes nothing into the array there)."""
    out = np.zeros((3, 2))
    for i in range(3):
        _fill(out[i], x[i] * np.array([1.0, 2.0]))
    inner = out[1:]
    first = inner[0]
    first[:] = first * x[3]
    acc = np.zeros((3, 2))
    row = acc[2]
    for t in range(3):
        if t == 0:
            row = acc[t]
        row[0] += x[t]
    a = np.ones((2, 3)) * x[0]
    copied = a.T.reshape(-1)
    copied[0] = x[1]
    b = np.ones((2, 3)) * x[1]
    rows = b[[0, 1]]
    rows[0] = x[2]
    return np.sum(out ** 2) + np.sum(acc ** 2 * np.arange(1.0, 7.0).reshape(3, 2)) + np.sum(a ** 2) + \
        np.sum(copied * 3.0) + np.sum(rows ** 2) + np.sum(b ** 3)


def gradient_packed_through_views_of_its_rows(x):
    """A hand-written gradient packed into a flat vector through views of rows that do not meet
    (`gW = grad[:6].reshape(2, 3)`, `gb = grad[6:]`): each write is put back, and the other view, made before
    it, is still right (it shows rows the write does not reach)."""
    grad = np.zeros(7)
    gW = grad[:6].reshape(2, 3)
    gb = grad[6:]
    gW[:] = np.outer(x[:2], x[:3]) * 2.0
    gb[:] = np.sum(x ** 2)
    return np.sum(grad * np.arange(1.0, 8.0) ** 2) + np.sum(gb * x[3])


def view_written_then_overlapping_view_read(x):
    V = np.zeros(5)
    W = V[:4]
    b = V[3:]
    W[:] = x[0]
    return np.sum(b ** 2)


def views_read_where_made_after_a_write(x):
    """Views made after a write, read in the block that made them (a branch, the inner loop reading `r[j - 1]`
    of the row it fills): they show what was written, as NumPy's do."""
    M = np.zeros((2, 3))
    for i in range(2):
        r = M[i]
        for j in range(3):
            r[j] = x[j] * (i + 1.0) + r[j - 1] if j > 0 else x[j]
    out = np.zeros(3)
    tail = out[1:]
    s = 0.0
    for k in range(3):
        tail[0] = x[k]
        if x[k] > 0.5:
            head = out[:2]
            s = s + np.sum(head * x[k])
    return np.sum(M ** 2) + s


def view_written_then_view_from_before_read_in_a_branch(x):
    V = np.zeros(3)
    r = V[1:]
    t = V[:2]
    s = 0.0
    for k in range(3):
        if k == 1:
            t = V[:2]
        r[0] = x[k]
        s = s + np.sum(t * x[k])
    return s


def rows_filled_through_views_in_a_loop_then_masked(a):
    """Found by the fuzzer: `line` (a view of Z2) is set anew in the inner loop before each read, so the write
    `Z2[Z2 > 0.13] = 0.0` after it does not reach a read of it (it was refused as one)."""
    acc = 0.0
    for i in range(2):
        Z2 = np.zeros((2, 2))
        for i1 in range(2):
            line = Z2[i1]
            line[...] = np.sin(acc + a[i1:i1 + 2])
        Z2[Z2 > 0.13] = 0.0
        acc = 0.5 * acc + 0.5 * np.tanh(np.mean(np.sin(Z2)))
    return acc


def results_written_into_views_by_out(x):
    """`out=` given a view: NumPy writes into the array the view shows (`np.sin(x, out=row)` with `row = X[1]`,
    `np.multiply(x, 2.0, out=X[:, 2])`, `np.maximum.accumulate(..., out=X[:, 3])`). tapegen rebound the name to
    the result and read X unchanged after (a wrong value and gradient, no error); `out=X[:, 2]` was refused."""
    X = np.outer(x, x)
    row = X[1]
    r = np.sin(x, out=row) * x
    np.multiply(x, 2.0, out=X[:, 2])
    np.maximum.accumulate(X[:, 0], out=X[:, 3])
    flat = X.reshape(-1)
    np.tanh(flat, out=flat)
    return np.sum(X * X) + np.sum(r)


def results_written_by_out_into_rows_a_loop_picks(x):
    """`np.tanh(z, out=H[t])`, `np.multiply(x, k, out=X[:, k])`: a loop's index makes the view (refused on
    fb8f5d2; checked when the code runs to be integers and slices, which make a view)."""
    X = np.zeros((4, 3))
    H = np.zeros((3, 4))
    for k in range(3):
        np.multiply(x, k + 1.0, out=X[:, k])
        np.tanh(x * 0.5 + k, out=H[k])
    return np.sum(X ** 2) + np.sum(H * X.T)


def result_of_out_named_then_its_array_written_in_a_loop(x):
    """`r = np.multiply(x, k, out=X[:, k])`, then `X[0, k] += np.sum(r)`, in a loop: `r` is bound after the
    call writes into X (fb8f5d2 checked it against X before it was set: an internal IR error)."""
    X = np.zeros((4, 3))
    for k in range(3):
        r = np.multiply(x, k + 1.0, out=X[:, k])
        X[0, k] += np.sum(r)
    return np.sum(X ** 2)


def results_written_by_out_through_an_array_index(x):
    X = np.zeros((4, 3))
    rows = np.array([0, 2])
    np.multiply(x[:2], 2.0, out=X[rows, 0])  # a copy: NumPy writes into it and drops it
    return np.sum(X) + np.sum(x)


def conjugates_of_a_real_array_by_method(x):
    """`c = B.conj()` (the method) of a real array is `B` itself in NumPy: a write into either shows in the other
    (fb8f5d2 took it for np.conjugate's copy: a wrong value and gradient, no error); of a complex one, a copy."""
    B = x * 2.0
    c = B.conj()
    B[1] = 3.0 * x[0]
    D = np.outer(x, x)
    e = D.conjugate()
    e[0] = x ** 2
    z = x * (1.0 + 2.0j)
    w = z.conj()
    z[1] = 3.0 * x[0]
    return np.sum(c * x) + np.sum(D * D.T) + np.sum(np.real(w * z))


def results_written_by_out_in_a_loop(x):
    """`np.add(y, v, out=y)` and `np.add.reduce(v, out=s)` in a loop: the loop carries `y` and `s`, which it did
    not, as its syntax shows no assignment to them (each pass started from the array before the loop: a wrong
    value, no error); `np.add.reduce(..., out=s)` raised TypeError when it ran."""
    y = np.zeros(4)
    s = np.zeros(())
    total = 0.0
    for k in range(3):
        np.add(y, x * (k + 1.0), out=y)
        np.add.reduce(np.sin(x) * k + s, out=s)
        total = total + s * y[0]
    return np.sum(y * x) + total


def pieces_of_one_split_written_and_read(x):
    """`p, q = np.split(a, 2)`, a write into `p`, then `q` and `a` read: the pieces of one split share no item,
    so `q` is as it was and `a` has the write put back (it was refused: `q`, another view of `a` read after)."""
    a = x * 1.0
    p, q = np.split(a, 2)
    p[0] = np.sin(q[0])
    first, second = np.array_split(np.outer(a, a), 2, axis=1)
    second[1:] *= 2.0
    return np.sum(q * p) + np.sum(a ** 2) + np.sum(first * np.cos(second))


def views_of_an_array_written_directly_then_read(x):
    """`W = B[1:3]`, then `B[1] = v`, then `W` read (and a view of a row, and a piece of a split): NumPy's views
    show the write; they were refused ("`W` is a view of `B`, so this assignment changes it too")."""
    B = x * 2.0
    W = B[1:3]
    B[1] = np.cos(x[0])
    M = np.outer(x, x)
    row = M[1]
    part = row[1:]
    M[1, 2] = 5.0 * x[0]
    p, q = np.split(x * 1.0, 2)
    return np.sum(W ** 2) + np.sum(B) + np.sum(part) * np.sum(row ** 2) + np.sum(p * q)


def view_read_in_a_loop_writing_its_array(x):
    B = x * 1.0
    W = B[:2]
    total = 0.0
    for k in range(3):
        B[2] = B[2] + W[0] * x[k]
        total = total + np.sum(W)
    return total


def rows_of_a_transpose_written(x):
    """`M.T[0] = v` on an array: a write through the view `M.T`, put back into `M` (it was refused: `M` not an
    object whose class tapegen knows)."""
    M = np.outer(x, x)
    M.T[0] = x * 2.0
    M.T[1:3] *= 3.0
    return np.sum(M ** 2)


def views_of_views_made_again_after_a_write(x):
    """A view of a view (`b = np.atleast_1d(W)` of `W = B[:2]`) and an einsum's diagonal view, made before a
    write into their array and read after: each link is made again from the array as it is after the write."""
    B = x * 2.0
    W = B[:2]
    b = np.atleast_1d(W)
    B[0] = np.sin(x[2])
    M = np.outer(x, x)
    d = np.einsum("ii->i", M)
    M[1, 1] = np.cos(x[0])
    return np.sum(b * x[:2]) + np.sum(d ** 2)


def results_written_into_views_in_place(x):
    """NumPy writing a result into a view in place: `out=r` (a keyword or the position after the inputs), a view's
    `.sort()`, `np.add.at` into a view; the array each shows changes too (each left it as it was: a wrong value)."""
    M = np.outer(x, x)
    r = M[1]
    np.multiply(r, x, out=r)
    top = M[:2]
    y = np.tanh(top, out=top)
    s = np.sum(y * x[:2, None])  # (y is top: read before the writes below change it)
    col = M[:, 3]
    np.clip(col, -0.5, 2.0, col)
    out = np.zeros((3, 4))
    for i in range(3):
        row = out[i]
        np.multiply(x, i + 1.0, out=row)
        row += x ** 2
    last = M[3]
    last.sort()
    third = M[2]
    np.add.at(third, [0, 0, 2], x[:3])
    return np.sum(M * np.arange(16.0).reshape(4, 4)) + np.sum(out ** 2) + s


def result_written_into_a_view_whose_other_view_is_read(x):
    M = np.outer(x, x[:2])
    c0 = M[:, 0]
    c1 = M[:, 1]
    np.square(c0, out=c0)
    return np.sum(c1) + np.sum(M)


def result_written_into_a_view_overlapping_another(x):
    u = x * 1.0
    a = u[:3]
    b = u[1:]
    np.negative(a, out=a)
    return np.sum(b * np.arange(3.0))


def view_of_a_second_name_for_an_array_in_a_loop(x):
    """`rows = M` bound again in a loop, a view of `rows` written: NumPy changes M, which the write put back into
    `rows` only (the gradient through M was zero, no error, on 481258e)."""
    M = np.zeros((3, 4))
    for i in range(3):
        rows = M
        r = rows[i]
        r += x
    return np.sum(M * np.arange(12.0).reshape(3, 4))


def row_bound_after_its_array_is_written_in_a_loop(x):
    """`M[i] = v`, then `r = M[i]` written through, each pass: at the write `r` holds nothing of this pass yet
    (the check that no other name holds M read `r` before it was set: an internal error on 481258e)."""
    M = np.zeros((3, 4))
    for i in range(3):
        M[i] = x * i
        r = M[i]
        r[0] = r[0] + x[3]
    vel = x * 1.0
    for i in range(3):
        vel[0] = vel[0] * x[i]
        prev = vel
    return np.sum(M * np.arange(12.0).reshape(3, 4)) + np.sum(prev * x)


def name_set_in_a_branch_of_a_loop_holding_the_array_written(x):
    vel = x * 1.0
    for i in range(3):
        vel[0] = vel[0] * x[i]
        if i == 0:
            prev = vel  # the same array, changed by the later passes' writes, read after the loop
    return np.sum(prev * x)


def row_set_in_a_branch_of_a_loop_writing_its_array(x):
    M = np.zeros((3, 4))
    for i in range(3):
        M[i] = x * i
        if i == 0:
            r = M[2]  # a row the later passes write
    return np.sum(r * x) + np.sum(M)


def write_into_an_as_strided_view_then_its_array_read(x):
    """as_strided's result is a view in NumPy (a copy in tapegen's stand-in): a write into it changes the array,
    read after (refused; it gave the array unchanged, a wrong value with no error, on 481258e)."""
    A = x * 1.0
    B = np.lib.stride_tricks.as_strided(A, shape=(2,), strides=(16,))
    B[1] = x[0] * 5.0
    return np.sum(A * np.arange(4.0))


def view_of_a_name_that_may_hold_the_array_after_a_branch(x):
    """`Z = M if ... else a copy`, then a view of Z written: M changes where Z is M (it put the write back into Z
    only: a wrong gradient with no error on 481258e)."""
    M = x * 1.0
    Z = M if x[0] > 0 else M * 1.0
    r = Z[1:]
    r *= 2.0
    return np.sum(M ** 2)


def copies_taken_like_views_then_the_array_written(x):
    """`B[[0, 1]]`, `B[B > 0]`, `B[idx]` (an index array), `B[2]`, `A.T.reshape(-1)` and `np.asarray(B,
    dtype=complex)` are copies in NumPy: a write into the array after does not show in them. They were made
    again from the array after the write, as its views are (a wrong value and gradient, no error, on
    fb8f5d2)."""
    B = x * 2.0
    A = np.outer(x, x[::-1])
    idx = np.array([1, 2])
    picked, masked, indexed, item = B[[0, 1]], B[B > 0], B[idx], B[2]  # (B[2] of a vector: a number)
    first = np.outer(x, x)[[1]][0]
    flat = A.T.reshape(-1)
    wide = np.asarray(B, dtype=complex)
    B[0] = np.sin(x[3])
    B[1:3] *= x[:2]
    A[0, 1] = np.cos(x[2])
    return np.sum(picked * x[:2]) + np.sum(masked ** 2) + np.sum(indexed * x[2:]) + np.sum(first * x) \
        + np.sum(flat * np.arange(16.0)) + np.sum(np.real(wide) * x) + np.sum(B) + np.sum(A) + item * x[1]


def view_made_in_either_branch_then_its_array_written(x):
    """`W = B[:2]` in one branch, `W = B[2:]` in the other, then `B[0] = v` and `W` read: W was made again after the
    write as the last branch lowered made it (`B[2:]`) whichever branch ran (a wrong value, no error, on fb8f5d2)."""
    B = x * 2.0
    if x[0] > 0:
        W = B[:2]
    else:
        W = B[2:]
    B[0] = np.sin(x[3])
    return np.sum(W * x[:2]) + np.sum(B)


def copies_of_rows_made_by_arithmetic_then_the_array_written(x):
    """`old = X[1] * 1.0` (or `+ 0.0`, `+X[1]`, `np.ravel(X[1:2]) * 1.0`) is a new array: the write into X after
    does not change it. Forward mode's tangent of it was the row's own tangent, a view of X's, which the write's
    tangent changed (a wrong jvp, no error, on fb8f5d2; the gradient was right)."""
    X = np.outer(x, x)
    old = X[1] * 1.0
    shifted = X[2] + 0.0
    plus = +X[3]
    flat = np.ravel(X[0:1]) * 1.0
    X[1] = np.sin(x)
    X[2:] = X[2:] * x
    X[0] = 3.0 * x
    return np.sum(old * X[1] * x) + np.sum(shifted * X[2]) + np.sum(plus * X[3]) + np.sum(flat * X[0])


class _GradientDescent:
    """numpy-ml's LogisticRegression.fit: a bare `return` leaves the loop once the loss stops falling."""

    def __init__(self):
        self.w = None

    def fit(self, x, lr, n=30, tol=1e-3):
        self.w = np.zeros_like(x)
        previous = np.inf
        for _ in range(n):
            loss = np.sum((self.w - x) ** 2)
            if previous - loss < tol:
                return
            previous = loss
            self.w = self.w - lr * 2 * (self.w - x)


def fitted_until_converged(x, lr):
    model = _GradientDescent()
    fitted = model.fit(x, lr)
    return np.sum(model.w ** 2) if fitted is None else 0.0


def _rnn_step(x, prev_h, W):
    next_h = np.tanh(x + W * prev_h)
    return next_h, (x, prev_h, next_h)  # cs231n's rnn_step_forward: the cache holds the state it was given


class _State:
    pass


def caches_holding_the_state_a_loop_rebinds_in_the_same_statement(x):
    """`h, cache = rnn_step_forward(x, h, ...)` in a loop, the cache holding the `h` it was given; also `h, c =
    np.tanh(z), (h, 1.0)`, `h, *rest = ...`, `s.h, c = ...`: the right-hand side is read before any name is
    bound. 980730e made the cache's tuple after binding `h` (or `s.h`) to its new value in the loop: the caches
    held the next state (a wrong value and gradient, no error)."""
    h = x * 0.0
    caches = []
    for t in range(3):
        h, cache = _rnn_step(x * (t + 1.0), h, 0.5)
        caches.append(cache)
    g = x * 0.5
    pairs = []
    for t in range(2):
        g, c = np.tanh(x + g), (g, 1.0)
        pairs.append(c)
    k = x * 1.0
    rests = []
    for t in range(2):
        k, *rest = np.sin(k), k, t
        rests.append(rest)
    s = _State()
    s.h = x * 2.0
    held = []
    for t in range(2):
        s.h, c = np.cos(s.h) * x, (s.h, t)
        held.append(c)
    return np.sum(caches[0][1] * caches[2][1]) + np.sum(caches[1][2] * x) + np.sum(pairs[1][0] * pairs[0][0]) \
        + np.sum(rests[1][0] * rests[0][0]) + np.sum(held[1][0] * held[0][0]) + np.sum(h + g + k + s.h)
