"""Python's own statements as primitives: plain assignment and assignment into an array.

`h = x` inside a loop or branch copies a reference into the loop's variable
(`assign`); `A[i] = v` writes into `A` in place (`setitem`). The forward pass
saves the overwritten region before a `setitem` and the backward pass puts it
back, so every earlier value of `A` (and every view of it) reads correctly
when its rule runs.
"""
import operator
import types
import weakref

import numpy as np

from ..errors import ChangedSinceTransformError, TapegenError, UnsupportedSyntaxError
from ..runtime import Cotree, add_cotangents, as_cotree, entries, unbroadcast, unindex, zeros_like_tree
from .elementwise import broadcast_like
from .shape import piece_cotangents, tangent_items
from .table import RuleTable

table = RuleTable("language")


def contained_in(x1, x2):
    """`x1 in x2` (a condition: no gradient)."""
    return x1 in x2


def not_contained_in(x1, x2):
    """`x1 not in x2`."""
    return x1 not in x2


table.nondiff(contained_in, "x1, x2", name="in", form="compare", spelling="in")
table.nondiff(not_contained_in, "x1, x2", name="not_in", form="compare", spelling="not in")


def raise_error(exc, cause=None):
    """`raise exc` (`raise exc from cause`) where the user's code raises it (a call, so it can stand in
    generated code's lines)."""
    if cause is not None:
        raise exc from cause
    raise exc


def check_assertion(test, msg=None):
    """`assert test, msg`."""
    if not test:
        raise AssertionError(msg) if msg is not None else AssertionError


def not_exhausted(items):
    """`next(g)` on a generator (tapegen's list of what it yields, less what was read): Python's StopIteration
    where nothing is left."""
    if len(items) == 0:
        raise StopIteration


def first_or(items, default):
    """`next(g, default)`: the first item left, else `default`."""
    return items[0] if len(items) else default


def check_has_key(d, key):
    """`del d[key]`: Python's KeyError where the dict has no item at `key` (dict_without would not raise)."""
    if key not in d:
        raise KeyError(key)


def check_unpack(value, count, starred=False):
    """`a, b = value` (`a, *rest = value`: `starred`): Python's ValueError where `value` has not `count` items
    (at least `count`), which indexing each item would not raise (`a, b = np.ones(3)`); an object with no
    length is left to the items' reads."""
    if not hasattr(value, "__len__") or isinstance(value, np.ndarray) and value.ndim == 0:
        return
    n = len(value)
    if n < count or n > count and not starred:
        expected = f"at least {count}" if starred else f"{count}"
        raise ValueError(f"not enough values to unpack (expected {expected}, got {n})" if n < count else
                         f"too many values to unpack (expected {expected})")


def check_zip(sizes, *sequences):
    """`zip(a, b, strict=True)`: Python's ValueError where its arguments' lengths differ. `sizes` tells how
    many of `sequences` each argument walks together (a nested zip or enumerate: the shortest of them); a
    number stands for a sequence whose length was known when transforming."""
    lengths, k = [], 0
    for size in sizes:
        group, k = sequences[k:k + size], k + size
        lengths.append(min(s if isinstance(s, int) else len(s) for s in group))
    for k, n in enumerate(lengths[1:], 1):
        if n != lengths[0]:
            first = "argument 1" if k == 1 else f"arguments 1-{k}"
            raise ValueError(f"zip() argument {k + 1} is {'shorter' if n < lengths[0] else 'longer'} than {first}")


def view_positions(base, view):
    """Where each item of `view`, written into as a view of `base` (a row, a slice, a transpose), is in `base`:
    (index arrays shaped like `view`, an index taking all of `view`), so `base[where] = view[pick]` puts back what
    NumPy's write through the view changed (in memory a no-op; for the derivatives, `base`'s new value). Where
    `view` turned out a copy (`a[[0, 2]]`, a reshape that copied), both take nothing, as NumPy wrote nothing."""
    if isinstance(base, (list, tuple, dict)) and isinstance(view, np.ndarray):  # `for v in d.values(): v *= 2`
        raise UnsupportedSyntaxError(
            "an array taken out of a list or dict as a loop walks it is changed in place, which tapegen cannot "
            "follow into the list or dict", hint="write the item itself: `for k in d: d[k] = d[k] * 2`")
    if isinstance(view, np.ndarray) and not isinstance(base, np.ndarray):  # `a = np.asarray(s)`, s a number:
        raise UnsupportedSyntaxError(  # a new array, NumPy's write into it leaves `s` as it was; tapegen's code
            "an array made from a number (`np.asarray(s)`) is written into: tapegen's code would put the "  # would
            "write back into the number", hint="make the array apart from the number: a = np.array(s, dtype=float)")
    if not (isinstance(base, np.ndarray) and isinstance(view, np.ndarray)) or base.size == 0 or view.size == 0 \
            or not np.may_share_memory(base, view):
        return _nothing(base, view)
    if view.dtype != base.dtype or not (base.flags.c_contiguous or base.flags.f_contiguous):
        raise UnsupportedSyntaxError(
            "an array was written into through a view of it whose memory tapegen cannot map to the array's items "
            "(another dtype, or an array not contiguous)", hint="write into a copy, and assign it into the array")
    basic = _basic_index(base, view)
    if basic is not None:  # a row, a block, a column: `base[i]`, `base[1:-1]`, `base[:, j]` (quick to write back)
        return basic, ...
    offsets = np.full(view.shape, view.__array_interface__["data"][0] - base.__array_interface__["data"][0],
                      dtype=np.intp)
    for axis, (n, stride) in enumerate(zip(view.shape, view.strides)):
        offsets = offsets + (np.arange(n, dtype=np.intp) * stride).reshape((1,) * axis + (n,) + (1,) *
                                                                           (view.ndim - axis - 1))
    flat = offsets // base.itemsize
    if offsets.size and (flat.min() < 0 or flat.max() >= base.size):
        return _nothing(base, view)
    return np.unravel_index(flat, base.shape, order="C" if base.flags.c_contiguous else "F"), ...


def _nothing(base, view):
    """`view_positions` of a view that turned out a copy: indices taking no item of either."""
    return tuple(np.zeros(0, np.intp) for _ in np.shape(base)), tuple(np.zeros(0, np.intp) for _ in
                                                                     range(np.ndim(view)))


def _basic_index(base, view):
    """A tuple of integers and slices taking `view` out of `base` (its rows, a block, every other column), found
    from their memory, or None (a transpose, a reshape across rows: `view_positions` lists each item then)."""
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    index, axis = [0] * base.ndim, 0
    for k in (range(base.ndim - 1, -1, -1) if base.flags.c_contiguous else range(base.ndim)):
        start, index[k] = divmod(start, base.shape[k])  # (the corner's position, as np.unravel_index gives it)
    for n, stride in zip(view.shape, view.strides):
        while axis < base.ndim and (stride % base.strides[axis] or abs(stride // base.strides[axis]) * (n - 1)
                                    >= base.shape[axis]) and n > 1:
            axis += 1
        if axis == base.ndim:
            return None
        step = stride // base.strides[axis] if n > 1 else 1
        stop = index[axis] + step * (n - 1) + (1 if step > 0 else -1)
        index[axis] = slice(index[axis], stop if stop >= 0 else None, step)
        axis += 1
    index = tuple(index)
    taken = base[index]
    same = taken.shape == view.shape and taken.strides == view.strides and \
        taken.__array_interface__["data"][0] == view.__array_interface__["data"][0]
    return index if same else None


def caught_exception(exc):
    """`exc`, the exception an `except` block of generated code is handling, kept past the block (Python
    unbinds `except E as exc`'s name after it); one of tapegen's own (a guard of the generated code failing)
    is raised on, never handled as the user's."""
    if isinstance(exc, TapegenError):
        raise exc
    return exc


def exception_matches(exc, classes):
    """Whether the `except classes:` block handles `exc` (the first of a `try`'s blocks that does runs)."""
    return isinstance(exc, classes)


def formatted(template, values, names=(), named=()):
    """An f-string (`f"loss {v:.3f}"`) or `template.format(*values, **dict(zip(names, named)))`, a str, which has
    no derivative (its text, or its length, is piecewise constant in the values); `template % values` where
    `names` is "%"."""
    if names == "%":
        return template % values
    return template.format(*values, **dict(zip(names, named)))


table.nondiff(formatted, "template, values, names=(), named=()", spelling="formatted",
              inert=("template", "values", "names", "named"))
table.nondiff(not_exhausted, "items", spelling="not_exhausted", inert=("items",))
table.nondiff(raise_error, "exc, cause=None", spelling="raise_error")
table.nondiff(check_assertion, "test, msg=None", spelling="check_assertion")
table.nondiff(caught_exception, "exc", spelling="caught_exception")
table.nondiff(check_unpack, "value, count, starred=False", spelling="check_unpack",
              inert=("value", "count", "starred"))
table.nondiff(check_has_key, "d, key", spelling="check_has_key", inert=("d", "key"))
table.nondiff(check_zip, "sizes, *sequences", spelling="check_zip", inert=("sizes", "sequences"))
table.nondiff(view_positions, "base, view", spelling="view_positions", outputs=2, inert=("base", "view"))


def shows_memory_of(view, base) -> bool:
    """Whether `view`, made from `base` by steps that may copy (`B[idx]` with an index known when the code runs,
    a reshape, np.asarray with a dtype), is a view of it when the code runs: only then did NumPy's write into
    `base` show in the name holding such a view made before the write (`refresh_views` picks it made again, else
    keeps its own value)."""
    return isinstance(view, np.ndarray) and isinstance(base, np.ndarray) and np.may_share_memory(view, base)


table.nondiff(shows_memory_of, "view, base", spelling="shows_memory_of", inert=("view", "base"))


def view_again(shows, fresh, before):
    """What a name holding a view made before a write into its array holds after it: the view made again (`fresh`)
    where it `shows` the array's memory, else the copy it turned out to be, as it was (`before`)."""
    return fresh if shows else before


table.op(view_again, "shows, fresh, before", spelling="view_again", inert=("shows",))


@table.vjp(view_again, "fresh")
def view_again_vjp_fresh(shows, g):
    """(Reads neither value: gradient code lowered again keeps no view read after the write it shows.)"""
    return g if shows else np.zeros_like(g)


@table.vjp(view_again, "before")
def view_again_vjp_before(shows, g):
    return np.zeros_like(g) if shows else g


@table.jvp(view_again, "fresh")
@table.jvp(view_again, "before")
def view_again_jvp(shows, fresh_dot, before_dot):
    """The tangent of the value it picks (one rule for both, as changed_with's)."""
    chosen, other = (fresh_dot, before_dot) if shows else (before_dot, fresh_dot)
    return np.zeros_like(other) if chosen is None else chosen
table.nondiff(exception_matches, "exc, classes", spelling="exception_matches")


def identity_check(obj, other, same, message):
    """Checks that two objects the function reads from its module (or closures) are still one object (`same`),
    or still different ones, as they were when its gradient code was made; `message` says what changed."""
    if (obj is other) != same:
        raise UnsupportedSyntaxError(message, hint="keep them as they were when the gradient code was made, or "
                                                   "pass the objects to the function as arguments")


table.nondiff(identity_check, "obj, other, same, message", spelling="identity_check",
              inert=("obj", "other", "same", "message"))


def set_module_name(namespace, name, value):
    """`global name; name = value`: the module's name rebound when the code runs (a counter, a last loss)."""
    namespace[name] = value


table.nondiff(set_module_name, "namespace, name, value", spelling="set_module_name",
              inert=("namespace", "name", "value"))


def has_attribute_as_transformed(obj, name, expected, message):
    """Checks that `hasattr(obj, name)` is still `expected`, as it was when the gradient code was made
    (`hasattr(self, "conv2")` on a module's layer, `hasattr(layer, "_base_layer")` on one made here)."""
    if hasattr(obj, name) != expected:
        raise UnsupportedSyntaxError(message, hint="the gradient code was made for the object as it was then: set "
                                                   "it up as it was, or pass the object to the function as an "
                                                   "argument")


table.nondiff(has_attribute_as_transformed, "obj, name, expected, message", spelling="has_attribute_as_transformed",
              inert=("obj", "name", "expected", "message"))


def attribute_as_transformed(obj, name, expected, message):
    """Checks that `obj.name` still holds `expected` (True, False or None), as it did when the gradient code
    was made (`if not self.is_initialized:` on a module's layer: the branch its value took then is the one in
    the code). A changed value is noticed before the call and the code made again; this check is for a change
    made during the call by code tapegen runs as written."""
    if getattr(obj, name, attribute_as_transformed) is not expected:
        raise UnsupportedSyntaxError(message, hint="set the attribute before calling the differentiated function, "
                                                   "or pass the value to it as an argument")


table.nondiff(attribute_as_transformed, "obj, name, expected, message", spelling="attribute_as_transformed",
              inert=("obj", "name", "expected", "message"))


def of_class(obj, cls):
    """`type(obj) is cls`: which branch of a method call dispatched on its object's class runs."""
    return type(obj) is cls


def no_candidate(value, name, expected):
    """The last branch of a dispatched call: `name` holds none of what tapegen found it could hold (`expected`)."""
    held = "is not set (or None) on the path taken" if value is None else \
        f"holds {value!r} (of class {type(value).__name__})"
    raise UnsupportedSyntaxError(
        f"`{name}` {held} here, which is none of what tapegen found it could hold when it transformed the "
        f"function ({expected}), so it cannot tell which code this call runs",
        hint=f"give `{name}` one of those, or one value tapegen can see when it transforms the function")


table.nondiff(of_class, "obj, cls", spelling="of_class", inert=("obj", "cls"))
table.nondiff(no_candidate, "value, name, expected", spelling="no_candidate", inert=("value", "name", "expected"))


def number_item(item, statement, name):
    """Checks `statement` (`d[k] += v`, `h += x`), where `name` may hold something another name or a
    container holds too: a number or tuple is rebound, as Python does; NumPy's `+=` would change an
    array in place, wherever else it is held, which tapegen does not follow."""
    if not isinstance(item, (int, float, complex, np.generic, tuple, str, bytes, frozenset)):
        raise UnsupportedSyntaxError(f"`{statement}` changes the {type(item).__name__} in `{name}` in place, and "
                                     f"another name, list, dict or attribute holds it too: tapegen does not follow "
                                     f"that change", hint=f"store a new value instead: `{name} = {name} + ...`")


table.nondiff(number_item, "item, statement, name", spelling="number_item", inert=("item", "statement", "name"))


def mutable_items(seq, text, target):
    """Checks, before `for p, g in zip(params, grads): p -= lr * g` runs as `params[k] -= lr * grads[k]`, that
    each item of `seq` (`text`) is an array, list or dict, which `p -= ...` changes in place as the item does; a
    number or tuple would be rebound in `target` only, leaving the list as it was."""
    for item in seq:
        if not isinstance(item, (np.ndarray, list, dict)):
            raise UnsupportedSyntaxError(f"`{target}` changed in place in a loop over `{text}` holds a "
                                         f"{type(item).__name__}, which Python rebinds in `{target}` only: tapegen "
                                         f"changes `{text}`'s items through the loop", hint=f"keep only arrays in "
                                         f"`{text}`, or store the new value in it: `{text}[k] = ...`")


table.nondiff(mutable_items, "seq, text, target", spelling="mutable_items", inert=("seq", "text", "target"))


def evaluated_literal(source, call):
    """`eval(source)` (numpy-ml's KernelInitializer parses "RBFKernel(sigma=0.8)" so): Python's value where the
    expression reads no name (`"0.8"`, `"(1, 2)"`, `"-3e-2"`), which is then the same in any scope; one reading a
    name (a local of the function, which tapegen's code does not hold under its name) is refused."""
    code = compile(source, "<string>", "eval")
    if code.co_names:
        raise UnsupportedSyntaxError(f"`{call}` evaluated {source!r}, which reads "
                                     f"{', '.join(f'`{n}`' for n in code.co_names)}: tapegen follows `eval` only "
                                     f"of an expression that reads no names (a number, a string, a tuple of them)",
                                     hint="write the expression out in the function, or pass the values as "
                                          "arguments")
    return eval(code, {"__builtins__": {}})


table.nondiff(evaluated_literal, "source, call", spelling="evaluated_literal", inert=("source", "call"))


def not_shared(item, others, statement, name, other_names):
    """Checks `statement` (`vel += x`, `xs += [v]`) where the names `other_names` (holding `others` now) may hold
    the same array or list as `name` when the code runs (`prev = vel` in a loop): NumPy (or Python) would change
    theirs too, which tapegen does not follow; a number, or an array none of them holds, is rebound as tapegen's
    code does."""
    for other, other_name in zip(others, other_names):
        if isinstance(item, (list, dict)) and item is other:  # `xs += [v]` extends the list in place too
            raise UnsupportedSyntaxError(f"`{statement}` changes the list in `{name}` in place, and `{other_name}` "
                                         f"holds the same list here: tapegen does not follow that change",
                                         hint=f"store a new value instead (`{name} = {name} + ...`), or keep a "
                                              f"copy in `{other_name}` (`{other_name} = list({name})`)")
        if isinstance(item, np.ndarray) and isinstance(other, np.ndarray) and np.may_share_memory(item, other):
            raise UnsupportedSyntaxError(f"`{statement}` changes the array in `{name}` in place, and `{other_name}` "
                                         f"holds the same array here: tapegen does not follow that change",
                                         hint=f"store a new value instead (`{name} = {name} + ...`), or keep a "
                                              f"copy in `{other_name}` (`{other_name} = {name}.copy()`)")


table.nondiff(not_shared, "item, others, statement, name, other_names", spelling="not_shared",
              inert=("item", "others", "statement", "name", "other_names"))


def region_not_shared(item, index, others, statement, name, other_names):
    """`not_shared` for `statement` writing `item[index]` alone: a name holding a part of the array the write
    does not reach (`h = H[t - 1]`, then `H[t] = np.tanh(...)` in an RNN's loop) keeps its values, as in NumPy.
    Only a basic index (integers, slices) picks the part; any other (a mask, an index array) stands for the
    whole array."""
    parts = index if isinstance(index, tuple) else (index,)
    if isinstance(item, np.ndarray) and all(part is None or part is Ellipsis or isinstance(part, slice)
                                            or isinstance(part, (int, np.integer)) and not isinstance(part, bool)
                                            for part in parts):
        try:
            item = item[parts if Ellipsis in parts else parts + (Ellipsis,)]  # (a view, 0-d for one item)
        except IndexError:
            pass  # (out of range: the write itself raises)
    not_shared(item, others, statement, name, other_names)


table.nondiff(region_not_shared, "item, index, others, statement, name, other_names", spelling="region_not_shared",
              inert=("item", "index", "others", "statement", "name", "other_names"))


def _holds(holder, item, skip, depth=0) -> bool:
    """Whether `holder` (an array, a list, tuple or dict, or an object of the user's, nested) is or holds
    `item`, or an array sharing memory with it; not looking into `skip` (the container holding `item`)."""
    if holder is item:
        return True
    if depth > 8 or holder is skip:
        return False
    if isinstance(holder, np.ndarray):
        return isinstance(item, np.ndarray) and _may_share(item, _owner(item), holder)
    if isinstance(holder, dict):
        values = holder.values()
    elif isinstance(holder, (list, tuple)):
        values = holder
    elif isinstance(holder, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return False
    else:
        values = getattr(holder, "__dict__", None)  # an object of the user's: its attributes
        if not isinstance(values, dict):
            return False
        values = values.values()
    owner = _owner(item) if isinstance(item, np.ndarray) else None
    for value in values:  # (arrays here, without a call each: a model's lists and dicts are long)
        if value is item:
            return True
        if type(value) is np.ndarray:
            if owner is not None and _may_share(item, owner, value):
                return True
        elif not isinstance(value, (int, float, complex, str, np.generic)) and _holds(value, item, skip, depth + 1):
            return True
    return False


def _owner(a):
    """The array owning `a`'s memory (`a` itself, or the base a view of it goes back to)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _may_share(a, owner, b) -> bool:
    """np.may_share_memory(a, b), `owner` owning `a`'s memory: first by the arrays owning it (two arrays that
    own theirs share none), so a long list of a model's arrays costs attribute reads, not a bounds test each."""
    b_owner = b.base
    if b_owner is None:
        if b is not owner and owner.base is None:
            return False
    else:
        b_owner = _owner(b)
        if b_owner is not owner and owner.base is None and b_owner.base is None:
            return False
    return np.may_share_memory(a, b)


def item_not_shared(container, key, others, statement, other_names, where, shapes=()):
    """Checks `statement` (`xs[t][i] = v`, `d[k] += v`), which changes in place the item `container[key]` (an
    array, list or dict): tapegen's code makes it a new value in `container` only, so neither another item of
    `container` nor a name in `other_names` (holding `others` now, perhaps in a list, dict or object) may hold
    it, as NumPy would change it there too (`xs[t] = h` with `h` read afterwards). The names in `shapes` are
    read afterwards for their shape and dtype only, which an array changed in place keeps."""
    item = container[key]
    if not isinstance(item, (np.ndarray, list, dict)):  # a number, a tuple: rebound, as Python does
        return
    rest = [value for k, value in (container.items() if isinstance(container, dict) else enumerate(container))
            if k != (key if isinstance(container, dict) or key >= 0 else key + len(container))]
    for other, other_name in [(rest, None), *zip(others, other_names)]:
        if other_name in shapes and isinstance(item, np.ndarray) and isinstance(other, np.ndarray):
            continue  # (`np.zeros_like(v)` of the same array: its shape and dtype are as they were)
        if _holds(other, item, container):
            holds = f"`{other_name}` holds" if other_name else "another of its items is"
            raise UnsupportedSyntaxError(f"{where}: `{statement}` changes in place the item it writes into, and {holds} the "
                                         f"same {type(item).__name__} here: tapegen does not follow that change there",
                                         hint="keep a copy in the list or dict (`xs[k] = h.copy()`), or build the "
                                              "item anew before writing into it")


table.nondiff(item_not_shared, "container, key, others, statement, other_names, where, shapes=()",
              spelling="item_not_shared", inert=("container", "key", "others", "statement", "other_names", "where",
                                                 "shapes"))


def list_position(xs, key, statement):
    """The position `del xs[key]` (`statement`) removes, as a number from 0: Python's IndexError where there is
    none."""
    if not isinstance(xs, list):
        raise TypeError(f"`{statement}` deletes an item of a {type(xs).__name__}, which tapegen follows on a list")
    if not isinstance(key, (int, np.integer)) or isinstance(key, bool):
        raise TypeError(f"list indices must be integers, not {type(key).__name__}")
    if not -len(xs) <= key < len(xs):
        raise IndexError("list assignment index out of range")
    return int(key) % len(xs)


table.nondiff(list_position, "xs, key, statement", spelling="list_position", inert=("xs", "key", "statement"))


def removed_position(xs, value):
    """The position `xs.remove(value)` removes: the first item equal to `value` (Python's ValueError if none)."""
    try:
        return xs.index(value)
    except ValueError:
        raise ValueError("list.remove(x): x not in list") from None


table.nondiff(removed_position, "xs, value", spelling="removed_position", inert=("xs", "value"))


def integer_index(array, index, statement, where):
    """`index`, checked to be an integer and `array` an ndarray: `A[i][j] = v` writes into `A` (through the
    view `A[i]`) as `A[i, j] = v` does only then; a slice or an array of indices first makes another array."""
    integer = isinstance(index, (int, np.integer)) and not isinstance(index, bool) or \
        isinstance(index, np.ndarray) and index.ndim == 0 and index.dtype.kind in "iu"
    if integer and isinstance(array, np.ndarray):
        return index
    what = f"the first index is a {type(index).__name__}" if not integer else f"it is a {type(array).__name__}"
    raise UnsupportedSyntaxError(f"{where}: `{statement}` writes through `[...][...]`, which tapegen follows into an "
                                 f"array whose first index is an integer; here {what}",
                                 hint="index once with a tuple: a[i, j] = v")


table.nondiff(integer_index, "array, index, statement, where", spelling="integer_index",
              inert=("array", "statement", "where"))


def view_index(array, index, statement, where):
    """`index`, checked to take a view of the ndarray `array` (integers, slices, None and `...` only): a result
    written with `out=array[index]` lands in `array` only then (an array of indices or a mask makes a copy,
    which NumPy writes into and drops)."""
    parts = index if isinstance(index, tuple) else (index,)
    if isinstance(array, np.ndarray) and all(
            part is None or part is Ellipsis or isinstance(part, slice)
            or isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))
            or isinstance(part, np.ndarray) and part.ndim == 0 and part.dtype.kind in "iu" for part in parts):
        return index
    raise UnsupportedSyntaxError(f"{where}: `{statement}` writes its result into `out=`, which tapegen follows into "
                                 f"a view of an array (an index of integers and slices); here the index makes a "
                                 f"copy, or the array is a {type(array).__name__}",
                                 hint="assign the result instead: out = f(...)")


table.nondiff(view_index, "array, index, statement, where", spelling="view_index",
              inert=("array", "statement", "where"))

def joined_index(first, rest):
    """The index `A[first][rest]` writes into `A` with: `(first, *rest)` for a tuple `rest` (`C[k][r, c]`),
    else `(first, rest)`."""
    return (first, *rest) if type(rest) is tuple else (first, rest)


table.nondiff(joined_index, "first, rest", spelling="joined_index")


def flat_coordinates(a, index):
    """The coordinates in `a` of the items `a.flat[index]` names (`index` an int, a slice, a list or a mask):
    `C[k].flat[::n + 1] += reg` writes into `C` as `C[k][flat_coordinates(C[k], ::n + 1)] += reg`."""
    return np.unravel_index(np.arange(np.size(a))[index], np.shape(a))


table.nondiff(flat_coordinates, "a, index", spelling="flat_coordinates", inert=("a",))


def item_alone(container, key, item, others, statement, other_names):
    """Checks `statement` (`rows[0][1] = v`) changing `item`, the list, dict or array `container[key]`, which
    tapegen's code replaces by a changed copy: no other item of `container` may be that object (`[row] * 2`
    holds one row twice), and none of `others` (the names `other_names`, read later: `rows = [a]`, then `a`),
    as Python would change it there too."""
    if not isinstance(item, (list, dict, np.ndarray)):
        return

    def same(other):
        return other is item or isinstance(other, np.ndarray) and isinstance(item, np.ndarray) \
            and np.may_share_memory(other, item) and np.shares_memory(other, item)
    if isinstance(container, dict):
        repeated = any(same(other) for k, other in container.items() if k != key)
    else:
        position = key % len(container) if isinstance(key, (int, np.integer)) else None
        repeated = position is not None and any(same(other) for k, other in enumerate(container) if k != position)
    if repeated:
        raise UnsupportedSyntaxError(f"`{statement}` changes an item that its list or dict holds more than once "
                                     f"(`[row] * n` holds one row n times): Python changes it at each place, "
                                     f"tapegen's code would change one",
                                     hint="make each item its own: [[0.0] * m for _ in range(n)], or "
                                          "[np.zeros(m) for _ in range(n)]")
    def holds(other, depth=0):  # a list, tuple or dict holding it (`l2 = [a]`, `d = {"a": a}`), or one of those
        items = other.values() if isinstance(other, dict) else other if isinstance(other, (list, tuple)) else ()
        return depth < 8 and any(same(v) or holds(v, depth + 1) for v in items)
    for other, name in zip(others, other_names):
        if same(other) or holds(other):
            raise UnsupportedSyntaxError(f"`{statement}` changes the array (or list) that `{name}` holds too (or "
                                         f"a view of it): tapegen's code would not show the change in `{name}`",
                                         hint=f"put a copy in the list ({name}.copy()), or read the item back "
                                              f"from the list after changing it")


table.nondiff(item_alone, "container, key, item, others, statement, other_names", spelling="item_alone",
              inert=("container", "key", "item", "others", "statement", "other_names"))


def still_item(container, key, item, statement):
    """Checks `statement` (`p["rm"] = m`, `p` read out of `container` as its item `key`), whose change tapegen's
    code puts back at `key`: `item` must still be there (not replaced, nor moved by an insert or a pop). Returns
    it."""
    try:
        there = container[key]
    except (IndexError, KeyError, TypeError):
        there = None
    if there is not item:
        raise UnsupportedSyntaxError(f"`{statement}` changes a list or dict read out of another one, which no "
                                     f"longer holds it where it was read (an item replaced, inserted or removed "
                                     f"since): tapegen does not follow where Python's change shows",
                                     hint="read it out of the list or dict again before changing it")
    return there


table.nondiff(still_item, "container, key, item, statement", spelling="still_item",
              inert=("container", "key", "item", "statement"))


def set_in_item(item, index, value):
    """`rows[i][j] = v`, `params["l1"]["W"] = v`: a copy of `item` (an array, list or dict a container
    holds) with `[index]` set to `value`; the holder is then rebound to hold the copy."""
    if isinstance(item, np.ndarray):
        changed = np.array(item, copy=True)
        changed[index] = value
        return changed
    if isinstance(item, (list, dict)):
        return with_item(item, index, value)
    raise UnsupportedSyntaxError(f"`[...] = ...` changes a {type(item).__name__} held in a list or dict, which "
                                 f"tapegen follows for arrays, lists and dicts there",
                                 hint="build the new value and assign it to the outer item")


table.op(set_in_item, "item, index, value", spelling="set_in_item", inert=("index",))


def same_shape_as_transformed(value, size, name):
    """Checks that a list, tuple or dict the function reads from its module or closure (`f(*ARGS)`,
    `g(**kwargs)` in a closure) still has the length (`size` an int) or keys (`size` a tuple) the
    generated code was written for, when tapegen transformed the function."""
    now = len(value) if isinstance(size, int) else tuple(value) if isinstance(value, dict) else None
    if now != size:
        what = (f"{size} items" if isinstance(size, int) else f"keys {list(size)}")
        raise ChangedSinceTransformError(
            f"`{name}` held {what} when tapegen transformed the function, and the generated code relies on "
            f"that; it now holds {f'{now} items' if isinstance(size, int) else f'keys {list(now or ())}'}",
            hint=f"pass `{name}` to the function as an argument, or keep its length and keys fixed")


table.nondiff(same_shape_as_transformed, "value, size, name", spelling="same_shape_as_transformed",
              inert=("value", "size", "name"))


def same_noneness_as_transformed(value, none, name):
    """Checks that a name the function reads from its module or closure is still None (`none`), or still
    not, as when tapegen transformed the function and decided `y is None` there (CS231n's
    `loss(X, y=None)`, given the module's `y_train`)."""
    if (value is None) != none:
        raise ChangedSinceTransformError(
            f"`{name}` was {'None' if none else 'not None'} when tapegen transformed the function, and the "
            f"generated code decided `{name} is None` so; it now is {'not None' if none else 'None'}",
            hint=f"pass `{name}` to the function as an argument")


table.nondiff(same_noneness_as_transformed, "value, none, name", spelling="same_noneness_as_transformed",
              inert=("value", "none", "name"))


def same_value_as_transformed(value, expected, name):
    """Checks that an int or string the function reads from its module or closure and uses as an item's key
    (`a[argnum] = x` in a wrapper) still is what the generated code was written for."""
    if type(value) is not type(expected) or value != expected:
        raise ChangedSinceTransformError(
            f"`{name}` was {expected!r} when tapegen transformed the function, and the generated code takes that "
            f"item of a list or dict; it is now {value!r}", hint=f"pass `{name}` to the function as an argument")


table.nondiff(same_value_as_transformed, "value, expected, name", spelling="same_value_as_transformed",
              inert=("value", "expected", "name"))


def in_place_result(before, after):
    """What a caller's name holds after a helper did `total += x` on it: NumPy changed an array in place, and
    Python a list (`xs += [v]`) or a dict (`d |= e`) (`after`, the helper's new value); a number or a tuple
    cannot change, the helper only rebound its own name."""
    return after if changed_in_place(before) else before


def changed_in_place(before) -> bool:
    return isinstance(before, (np.ndarray, list, dict))


table.op(in_place_result, "before, after", spelling="in_place_result")


@table.vjp(in_place_result, "before")
def in_place_result_vjp_before(before, g):
    if isinstance(before, np.ndarray):
        return np.zeros(np.shape(before))
    return None if changed_in_place(before) else g  # (a list's or dict's: none)


@table.vjp(in_place_result, "after")
def in_place_result_vjp_after(before, after, g):
    if changed_in_place(before):
        return g
    return None if isinstance(after, (list, tuple, dict)) else np.zeros(np.shape(after))


@table.jvp(in_place_result, "before")
@table.jvp(in_place_result, "after")
def in_place_result_jvp(before, before_dot, after, after_dot):
    """The tangent of the value it picks (one rule for both: a list's tangents would join under `+`)."""
    if changed_in_place(before):
        return zeros_like_tree(after) if after_dot is None else after_dot
    return zeros_like_tree(before) if before_dot is None else before_dot


def same_object(other, item, statement, name, other_name) -> bool:
    """Whether `other_name` holds the very array (or list, dict) `item` that `statement` (`h += v`) changes in place
    in `name` (`prev = h` in a loop): it then holds the new value too (`changed_with`). An array sharing only part
    of its memory (a view of it) cannot be followed: an error."""
    if other is item:
        return isinstance(item, (np.ndarray, list, dict))
    if isinstance(item, (np.ndarray, list, dict)) and _holds(other, item, None):
        raise UnsupportedSyntaxError(f"`{statement}` changes the {type(item).__name__} in `{name}` in place, and "
                                     f"`{other_name}` holds a view of it here, or holds it in a list, dict or "
                                     f"object: tapegen does not follow that change",
                                     hint=f"store a new value instead (`{name} = {name} + ...`), or keep a copy in "
                                          f"`{other_name}` (`{other_name} = {other_name}.copy()`)")
    return False


table.nondiff(same_object, "other, item, statement, name, other_name", spelling="same_object",
              inert=("other", "item", "statement", "name", "other_name"))


def changed_with(same, after, before):
    """What a name holds after another name's array (or list) it may hold changed in place: the new value `after`
    where it held that very one (`same`), else its own `before`."""
    return after if same else before


table.op(changed_with, "same, after, before", spelling="changed_with", inert=("same",))


@table.vjp(changed_with, "after")
def changed_with_vjp_after(same, after, g):
    return g if same else zeros_like_tree(after)


@table.vjp(changed_with, "before")
def changed_with_vjp_before(same, before, g):
    return zeros_like_tree(before) if same else g


@table.jvp(changed_with, "after")
@table.jvp(changed_with, "before")
def changed_with_jvp(same, after, after_dot, before, before_dot):
    """The tangent of the value it picks (one rule for both, as in_place_result's)."""
    if same:
        return zeros_like_tree(after) if after_dot is None else after_dot
    return zeros_like_tree(before) if before_dot is None else before_dot


def copy_array(x):
    """A private copy of an argument a loop changes through its target (`for p in [W, b]: p -= g`): an array's
    copy; a number as it is (np.copy would make it a 0-d array, which the loop would then change as an array)."""
    return x.copy() if isinstance(x, np.ndarray) else x


table.op(copy_array, "x", spelling="copy_array")  # (its rules are assign's: the value itself)


def deep_copy(x):
    """`copy.deepcopy(d)` of a list, tuple or dict built here (`best = copy.deepcopy(params)`): a new one holding
    copies of what it holds, as Python's (no array, list or dict shared with `d`)."""
    import copy
    return copy.deepcopy(x)


table.op(deep_copy, "x", spelling="deep_copy")  # (its rules are assign's: the value itself)


def writable_argument(x, statement):
    """Checks that an argument `statement` writes into in place (tapegen's code: into a copy) is writable, as
    NumPy requires: a read-only array (`np.broadcast_to(v, n)`, `flags.writeable = False`) raises as it would."""
    if isinstance(x, np.ndarray) and not x.flags.writeable:
        raise ValueError(f"assignment destination is read-only: `{statement}` writes into an argument NumPy cannot "
                         f"change (tapegen's code writes into a copy, but the function as written raises)")


table.nondiff(writable_argument, "x, statement", spelling="writable_argument", inert=("x", "statement"))


def tree_leaves(value):
    """The arrays and numbers of a nested dict, list or tuple, in autograd's order (a dict's keys sorted); a None
    holds none (a bwd's cotangent of an argument without one)."""
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in tree_leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in tree_leaves(item)]
    return [] if value is None else [value]


def flatten_tree(value):
    """All of `value`'s numbers in one 1-D array (autograd.misc.flatten's first result)."""
    leaves = tree_leaves(value)
    return np.concatenate([np.ravel(leaf) for leaf in leaves]) if leaves else np.zeros(0)


def unflatten_tree(value, flat):
    """`flat` cut and shaped back into `value`'s structure (the inverse of `flatten_tree`)."""
    start = 0

    def build(like):
        nonlocal start
        if isinstance(like, dict):
            return {key: build(like[key]) for key in sorted(like)}
        if isinstance(like, (list, tuple)):
            return type(like)(build(item) for item in like)
        if like is None:
            return None
        size = np.size(like)
        piece = np.reshape(flat[start:start + size], np.shape(like))
        start += size
        return piece
    return build(value)


def flatten(value):
    """`(vector, unflatten)`: the arrays and numbers of a nested dict, list or tuple as one 1-D array (a dict's
    keys sorted), and the function putting such a vector back into that structure: `tg.flatten`, as JAX's
    `ravel_pytree` and `autograd.misc.flatten` (which means this in code written for autograd). Called in a
    differentiated function it is inlined, so both are followed (`unflatten` is a lambda: a call of it is
    unflatten_tree, differentiable in `flat`)."""
    return flatten_tree(value), lambda flat: unflatten_tree(value, flat)


autograd_flatten = flatten


def autograd_unflatten(vjp, flat):
    """`unflatten(flat)` for the `unflatten` autograd.misc.flatten made (autograd's make_vjp of its _flatten,
    made before the differentiated function runs): tapegen's unflatten_tree into its structure."""
    return unflatten_tree(autograd_structure(vjp, np.size(flat)), flat)


_STRUCTURES = weakref.WeakKeyDictionary()  # autograd's unflatten -> (flat size, the structure it fills)


def autograd_structure(vjp, size):
    """The structure autograd's `vjp` (from make_vjp) fills from a flat vector of `size` numbers, checked to be
    autograd.misc.flatten's unflatten: on a random vector it must give what unflatten_tree gives (a different
    linear map agrees there with probability zero); else the program's gradient would not be tapegen's."""
    known = _STRUCTURES.get(vjp)
    if known is not None and known[0] == size:
        return known[1]
    structure = vjp(np.zeros(size))
    probe = np.random.default_rng(0).standard_normal(size)
    if sum(np.size(leaf) for leaf in tree_leaves(structure)) != size or \
            not _same_tree(vjp(probe), unflatten_tree(structure, probe)):
        raise UnsupportedSyntaxError(
            "a function autograd's make_vjp returned is called on a differentiated value, and it is not the "
            "`unflatten` of autograd.misc.flatten, which tapegen knows", hint="call tg.vjp instead of autograd's "
            "make_vjp, or use autograd.misc.flatten's flatten for the unflatten function")
    _STRUCTURES[vjp] = (size, structure)
    return structure


def _same_tree(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and sorted(a) == sorted(b) and all(_same_tree(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_same_tree, a, b))
    return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))


table.op(flatten_tree, "value", spelling="flatten_tree")
table.nondiff(autograd_structure, "vjp, size", spelling="autograd_structure", inert=("vjp", "size"))
table.nondiff(tree_leaves, "value", spelling="tree_leaves")


@table.vjp(flatten_tree, "value")
def flatten_tree_vjp(value, g):
    return unflatten_tree(value, g)


@table.jvp(flatten_tree, "value")
def flatten_tree_jvp(value_dot):
    return flatten_tree(value_dot)


table.op(unflatten_tree, "value, flat", spelling="unflatten_tree", inert=("value",))


def flat_cotangent(value, cotangent):
    """A cotangent of `value`'s structure (sparse: a Cotree, None where it has none) as one 1-D array."""
    def pieces(like, part):
        if isinstance(like, dict):
            return [p for key in sorted(like) for p in pieces(like[key], item_cotangent(part, key))]
        if isinstance(like, (list, tuple)):
            return [p for k, item in enumerate(like) for p in pieces(item, item_cotangent(part, k))]
        if like is None:
            return []
        return [np.zeros(np.size(like)) if part is None else np.ravel(part)]
    parts = pieces(value, cotangent)
    return np.concatenate(parts) if parts else np.zeros(0)


table.op(flat_cotangent, "value, cotangent", spelling="flat_cotangent", inert=("value",))


@table.vjp(flat_cotangent, "cotangent")
def flat_cotangent_vjp(value, cotangent, g):
    return unflatten_tree(value, g) if isinstance(cotangent, (dict, list, tuple)) or cotangent is None else \
        np.reshape(g, np.shape(cotangent))  # one array for a list of outputs (odeint's func returning a list)


@table.jvp(flat_cotangent, "cotangent")
def flat_cotangent_jvp(value, cotangent_dot):
    return flat_cotangent(value, cotangent_dot)


@table.vjp(unflatten_tree, "flat")
def unflatten_tree_vjp(value, g):
    return flat_cotangent(value, g)


@table.jvp(unflatten_tree, "flat")
def unflatten_tree_jvp(value, flat_dot):
    return unflatten_tree(value, flat_dot)


def assign(x):
    """`y = x`: the same value under another name."""
    return x


table.op(assign, "x", form="identity")
table.op(operator.setitem, "a, index, value", name="setitem", form="setitem", inert=("index",))


@table.vjp(assign, "x")
def assign_vjp(g):
    return g


@table.jvp(assign, "x")
def assign_jvp(x_dot):
    return x_dot


table.vjp(copy_array, "x")(assign_vjp)
table.jvp(copy_array, "x")(assign_jvp)
table.vjp(deep_copy, "x")(assign_vjp)
table.jvp(deep_copy, "x")(assign_jvp)


@table.vjp(operator.setitem, "value")
def setitem_vjp_value(index, value_shape, a_meta, g):
    return unbroadcast(written_region(g, index, a_meta), value_shape)


def tangent_written(value_dot, a):
    """The tangent `a[index] = value` writes into `a`'s: none into an int or bool array (it truncates)."""
    return value_dot if np.result_type(a).kind not in "biu" else np.zeros(np.shape(value_dot))


table.op(tangent_written, "value_dot, a", spelling="tangent_written", inert=("a",))


@table.vjp(tangent_written, "value_dot")
def tangent_written_vjp(a, value_dot_shape, g):
    return unbroadcast(tangent_written(g, a), value_dot_shape)


@table.jvp(tangent_written, "value_dot")
def tangent_written_jvp(value_dot_dot, a):
    return tangent_written(value_dot_dot, a)


@table.vjp(operator.setitem, "a")
def setitem_vjp_a(index, g):
    return zero_region(g, index)


@table.jvp(operator.setitem, "value")
def setitem_jvp_value(a, index, value_dot):
    return put_region(np.zeros(np.shape(a), dtype=np.result_type(a, value_dot)), index, value_dot)


@table.jvp(operator.setitem, "a")
def setitem_jvp_a(index, a_dot):
    return zero_region(a_dot, index)


def zero_region(g, index):
    """A copy of `g` with `g[index]` zeroed: those elements were overwritten, so they get no gradient."""
    g = np.array(g, copy=True)
    g[index] = 0
    return g


def written_region(ct, index, a_meta=None):
    """`ct[index]`: the cotangent of the value `a[index] = value` wrote, where an integer index that repeats
    a position (`a[[0, 1, 1]] = v`) gets it only for the write NumPy kept there; the others were overwritten.
    None into an int or bool array (`a_meta`: a's): NumPy truncates what it writes there."""
    region = ct[index]
    if a_meta is not None and a_meta[1].kind in "biu":
        return np.zeros(np.shape(region))
    for part in index if type(index) is tuple else (index,):  # (a plain loop: this runs in gradient code)
        if isinstance(part, (list, np.ndarray)) and np.size(part) > 1 and np.asarray(part).dtype.kind in "iu":
            break  # an integer array: a position may be written twice
    else:
        return region
    writes = np.arange(np.size(region)).reshape(np.shape(region))
    kept = np.full(np.shape(ct), -1, dtype=writes.dtype)
    kept[index] = writes  # the same assignment, of write numbers: each position keeps the write NumPy keeps
    return np.where(kept[index] == writes, region, 0)


table.op(written_region, "ct, index, a_meta=None", spelling="written_region", inert=("index", "a_meta"))


@table.vjp(written_region, "ct")
def written_region_vjp(ct_shape, index, a_meta, g):
    if a_meta is not None and a_meta[1].kind in "biu":
        return np.zeros(ct_shape)
    return put_region(np.zeros(ct_shape, dtype=np.result_type(g)), index, g)


@table.jvp(written_region, "ct")
def written_region_jvp(ct_dot, index, a_meta):
    return written_region(ct_dot, index, a_meta)


def put_region(a, index, value):
    a[index] = value
    return a


def saved_region(a, index):
    """The values `a[index] = ...` is about to overwrite (a copy, for the tape)."""
    region = a[index]
    return np.array(region, copy=True) if isinstance(region, np.ndarray) else region


table.nondiff(saved_region, "a, index", spelling="saved_region")


# --- lists, tuples and dicts as values -------------------------------------------------------

# Primitives whose value is a list, tuple or dict (by name): `+` and `*` on it join and repeat, and
# its tangent contributions add item by item.
CONTAINER_OUTPUTS = {"make_list": "list", "make_tuple": "tuple", "make_dict": "dict", "dict_copy": "dict",
                     "updated": "dict", "dict_without": "dict", "list": "list", "py_sorted": "list",
                     "tuple": "tuple", "split": "list", "array_split": "list", "hsplit": "list", "vsplit": "list",
                     "dsplit": "list", "py_sorted": "list"}

def make_list(*items):
    """`[a, b]` stored in a variable."""
    return list(items)


def make_tuple(*items):
    """`(a, b)` stored in a variable."""
    return items


def make_dict(keys, *values):
    """`{"W": W, "b": b}`: `keys` is a tuple of constants."""
    return dict(zip(keys, values))


def append(a, value):
    """`xs.append(v)`: appends in place; the backward pass undoes it with `xs.pop()`."""
    a.append(value)
    return a


def concat(x1, x2):
    """`a + b` of two lists or two tuples: their items, one after the other."""
    return x1 + x2


def repeat_items(a, n):
    """`xs * n` where `xs` is a list or tuple: its items `n` times over for a count `n`; for an array `n`
    (`x * [1.0, 2.0, 3.0]`), or where `xs` turned out to be an array, NumPy's product."""
    return a * n


def counted(a, n):
    """Whether `a * n` repeats a list or tuple `n` times (rather than multiplying arrays)."""
    return isinstance(a, (list, tuple)) and isinstance(n, (int, np.integer))


def plus(x1, x2):
    """`a + b` where one side is a list or tuple and the other may be too (joined) or an array (added)."""
    return x1 + x2


def joined(x1, x2):
    """Whether `x1 + x2` joins two sequences (rather than adding numbers or arrays)."""
    return isinstance(x1, (list, tuple)) and isinstance(x2, (list, tuple))


def with_item(a, key, value):
    """`xs[key] = v` on a list or dict the function built: a copy of `a` with item `key` set to `value`."""
    new = a.copy() if hasattr(a, "default_factory") else type(a)(a)  # (a defaultdict keeps its factory)
    new[key] = value
    if isinstance(key, slice) and isinstance(a, list) and len(new) != len(a):
        raise UnsupportedSyntaxError(f"`xs[{key.start}:{key.stop}] = ...` changes the length of a list, which tapegen "
                                     f"took for replacing one item (the slice was computed when the code ran)",
                                     hint="build the new list with `xs[:i] + new + xs[j:]`")
    return new


table.op(with_item, "a, key, value", spelling="with_item", inert=("key",))
for _fn in (list, tuple):  # list(a) of an array: its rows; of a list or tuple: a copy
    table.op(_fn, "iterable", spelling=_fn.__name__)
table.op(dict, "mapping", name="dict_copy", spelling="dict")  # dict(d): a copy; dict(pairs)


def updated(a, b):
    """`a.update(b)` on a dict the function built, where `b`'s keys are known only when the code runs: a copy
    of `a` with `b`'s items set."""
    new = dict(a)
    new.update(b)
    return new


table.op(updated, "a, b", spelling="updated")
def py_sum(iterable, start=0):
    """Python's `sum(xs, start)`: the items added one after another (of an array: its rows)."""
    return sum(iterable, start)


def spread(g, items):
    """The cotangent of each item of `py_sum(items)`: `g`, summed to the item's shape (of an array: each row)."""
    if isinstance(items, (list, tuple)):
        return [unbroadcast(g, np.shape(item)) for item in items]
    return np.broadcast_to(g, np.shape(items))


def unspread(ct, items, g_shape):
    """The transpose of `spread`: the items' cotangents broadcast to the sum's shape and added."""
    if not isinstance(items, (list, tuple)):
        return np.sum(ct, axis=0) if np.ndim(ct) else ct
    parts = [np.broadcast_to(c, g_shape) for c in (ct.values() if isinstance(ct, dict) else ct) if c is not None]
    return sum(parts[1:], parts[0]) if parts else np.zeros(g_shape)


def as_record(cls, items):
    """`Params(W, b)` for a namedtuple class `cls` (or a record of it): the record made from its items."""
    return (cls if isinstance(cls, type) else type(cls))._make(items)


def record_items(ct, fields):
    """A namedtuple's cotangent (keyed by field names where its fields were read, by positions where it was
    indexed or unpacked, or a namedtuple of cotangents) as the list of its items' cotangents."""
    if ct is None:
        return None
    if isinstance(ct, dict):
        return [add_cotangents(ct.get(name), ct.get(k)) for k, name in enumerate(fields)]
    return list(ct)


def record_cotangent(ct, fields):
    """The transpose of `record_items`: the items' cotangents as a namedtuple's, under both names."""
    pairs = [(k, c) for k, c in entries(ct) if c is not None]
    return Cotree([(fields[k], c) for k, c in pairs] + pairs)


def iterated(xs):
    """What `for x in xs` walks: a dict's keys (in a list), an iterator's items (in a list: the loop
    consumes it once, as Python's does; itertools.product(...), a set), anything else itself."""
    if isinstance(xs, dict) or not (hasattr(xs, "__len__") and hasattr(xs, "__getitem__")):
        return list(xs)
    return xs


def dict_items(d):
    """`d.items()` as a list of (key, value) pairs."""
    return list(d.items())


def dict_values(d):
    """`d.values()` as a list."""
    return list(d.values())


def dict_keys(d):
    """`d.keys()` as a list."""
    return list(d.keys())


def pairs_cotangent(keys, g):
    """The cotangent of `dict_items(d)` (one per (key, value) pair) as the dict's, keyed by `keys`."""
    return keyed(keys, [item_cotangent(item_cotangent(g, i), 1) for i in range(len(keys))])


def as_pairs(keys, ct):
    """The transpose of `pairs_cotangent`: a dict's cotangent as one per (key, value) pair."""
    return [(None, item_cotangent(ct, key)) for key in keys]


def keywords_known(d, names, given, function):
    """Raises Python's TypeError where `function(..., **d)` would: `d` has a key `function` has no parameter
    for, or one passed already."""
    for key in d:
        if key not in names:
            raise TypeError(f"{function}() got an unexpected keyword argument {key!r}")
        if key in given:
            raise TypeError(f"{function}() got multiple values for argument {key!r}")


table.nondiff(keywords_known, "d, names, given, function", spelling="keywords_known")


def spread_known(value, count, function):
    """Raises Python's TypeError where `function(*value)` would: `value` fills `count` positional
    parameters without defaults (`positional_encoding(*x.shape)`), and has more or fewer items. The code
    reads its items by position, so `value` must be a list, tuple or array (a dict spreads its keys)."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise UnsupportedSyntaxError(f"`*` of a {type(value).__name__} passed to {function}(): tapegen reads the "
                                     f"items by position, which only a list, tuple or array has",
                                     hint="make it a list first: f(*list(...))")
    if len(value) != count:
        raise TypeError(f"{function}() takes {count} values from `*` here (its parameters), {len(value)} given")


table.nondiff(spread_known, "value, count, function", spelling="spread_known")


def item_or(d, key, default=None):
    """`d.get(key, default)`: the item at `key` of a dict, or `default` where it has none."""
    return d.get(key, default)


def dict_without(d, key):
    """What `d.pop(key)` leaves of a dict: a copy without the item at `key`."""
    rest = dict(d)
    rest.pop(key, None)
    return rest


def py_sorted(iterable, key=None, reverse=False):
    """Python's `sorted(xs, key=..., reverse=...)`: a dict's keys, or the items, in order (a permutation)."""
    return sorted(iterable, key=key, reverse=reverse)


def sorted_order(iterable, key=None, reverse=False):
    """Where each item of `sorted(iterable)` came from (Python's sort is stable, reversed or not)."""
    items = list(iterable)
    by = items.__getitem__ if key is None else (lambda i: key(items[i]))
    return sorted(range(len(items)), key=by, reverse=reverse)


table.op(py_sum, "iterable, start=0", spelling="sum")
table.op(py_sorted, "iterable, key=None, reverse=False", spelling="sorted", inert=("reverse",), callables=("key",))
table.nondiff(sorted_order, "iterable, key=None, reverse=False", spelling="sorted_order")
table.op(item_or, "d, key, default=None", spelling="item_or", inert=("key",))
table.op(first_or, "items, default", spelling="first_or")
table.method("get", item_or, receiver="d")
table.op(dict_without, "d, key", spelling="dict_without", inert=("key",))
table.op(iterated, "xs", spelling="iterated")
table.op(as_record, "cls, items", spelling="as_record", inert=("cls",))
table.op(dict_items, "d", spelling="dict_items")
table.op(dict_values, "d", spelling="dict_values")
table.nondiff(dict_keys, "d", spelling="dict_keys")
table.method("items", dict_items, receiver="d")
table.method("values", dict_values, receiver="d")
table.method("keys", dict_keys, receiver="d")
table.op(concat, "x1, x2", spelling="concat")
table.op(plus, "x1, x2", spelling="plus")
table.nondiff(joined, "x1, x2", spelling="joined")
table.op(repeat_items, "a, n", spelling="repeat_items")
table.nondiff(counted, "a, n", spelling="counted")
table.op(make_list, "*items", form="display", spelling="[]")
table.op(make_tuple, "*items", form="display", spelling="()")
table.op(make_dict, "keys, *values", form="display", spelling="{}")
table.op(append, "a, value", form="method", spelling="append")
table.method("append", append)
for _fn in (np.array, np.asarray):
    table.op(_fn, "object, dtype=None", sequences=("object",))


@table.vjp(make_list, "items")
@table.vjp(make_tuple, "items")
def make_list_vjp(items, g):
    return [item_cotangent(g, i) for i in range(len(items))]


@table.vjp(make_dict, "values")
def make_dict_vjp(keys, g):
    return [item_cotangent(g, key) for key in keys]


@table.vjp(append, "value", partial=True)
def append_vjp_value(a, g):
    return item_cotangent(g, len(a) - 1)


@table.vjp(append, "a")
def append_vjp_a(a, g):
    return without_item(g, len(a) - 1)


@table.vjp(dict, "mapping", partial=True)
def dict_copy_vjp(mapping, g):
    return g if isinstance(mapping, dict) else as_pairs(tuple(key for key, _ in mapping), g)


@table.vjp(updated, "a", partial=True)
def updated_vjp_a(b, g):
    return keys_outside(g, b)


@table.vjp(updated, "b", partial=True)
def updated_vjp_b(b, g):
    return keys_within(g, b)


@table.jvp(updated, "a")
@table.jvp(updated, "b")
def updated_jvp(a, a_dot, b, b_dot):
    return updated(zeros_like_tree(a) if a_dot is None else a_dot, zeros_like_tree(b) if b_dot is None else b_dot)


@table.jvp(dict, "mapping")
def dict_copy_jvp(mapping, mapping_dot):
    if isinstance(mapping, dict):
        return dict(mapping_dot)
    return {key: pair_dot[1] for (key, _), pair_dot in zip(mapping, mapping_dot)}


@table.vjp(list, "iterable", partial=True)
@table.vjp(tuple, "iterable", partial=True)
def list_vjp(iterable_meta, g):
    if iterable_meta[0] is dict:  # list(d) is d's keys, which have no cotangent
        return None
    return gathered(g, iterable_meta)


@table.jvp(list, "iterable")
def list_jvp(iterable, iterable_dot):
    return list(iterated_jvp(iterable, iterable_dot))


@table.jvp(tuple, "iterable")
def tuple_jvp(iterable, iterable_dot):
    return tuple(iterated_jvp(iterable, iterable_dot))


def gathered(ct, like_meta):
    """Per-item cotangents `ct` (a list, or a Cotree) as the cotangent of the value they were taken from,
    described by `like_meta`: a container's (a Cotree) or an array's (the items written into zeros)."""
    if ct is None or (isinstance(like_meta, tuple) and len(like_meta) == 2 and isinstance(like_meta[0], type)):
        return as_cotree(ct)
    shape, dtype = like_meta
    items = [(i, c) for i, c in entries(ct) if c is not None]
    out = np.zeros(shape, dtype=np.result_type(dtype, *[c for _, c in items]))
    for i, c in items:
        out[i] += c
    return out


@table.vjp(with_item, "a")
def with_item_vjp_a(a_meta, key, g):
    return replaced(g, a_meta, key)


@table.vjp(set_in_item, "item")
def set_in_item_vjp_item(item_meta, index, g):
    return replaced(g, item_meta, index) if item_meta[0] in (list, dict) else zero_region(g, index)


@table.vjp(set_in_item, "value", partial=True)
def set_in_item_vjp_value(item_meta, index, value_shape, g):
    return item_cotangent(g, normal_key(item_meta, index)) if item_meta[0] in (list, dict) else \
        unbroadcast(written_region(g, index), value_shape)


@table.jvp(set_in_item, "item")
@table.jvp(set_in_item, "value")
def set_in_item_jvp(item, item_dot, index, value, value_dot):
    """One rule for both inputs: `item`'s tangent with `[index]` set to `value`'s."""
    return set_in_item(zeros_like_tree(item) if item_dot is None else item_dot, index,
                       zeros_like_tree(value) if value_dot is None else value_dot)


@table.vjp(with_item, "value", partial=True)
def with_item_vjp_value(a_meta, key, g):
    return item_cotangent(g, normal_key(a_meta, key))


@table.jvp(with_item, "a")
@table.jvp(with_item, "value")
def with_item_jvp(a, a_dot, key, value, value_dot):
    """One rule for both inputs: the tangent is `a`'s with item `key` replaced by `value`'s."""
    return with_item(zeros_like_tree(a) if a_dot is None else a_dot, key,
                     zeros_like_tree(value) if value_dot is None else value_dot)


def normal_key(a_meta, key):
    """A list's negative index as the position it names (a dict's key as it is)."""
    kind, length = a_meta
    return key % length if kind is not dict and isinstance(key, int) and length else key


def replaced(g, a_meta, key):
    """A container's cotangent without item `key` (overwritten: it gets none)."""
    if g is None:
        return None
    items = entries(g)
    key = normal_key(a_meta, key)
    return Cotree((k, v) for k, v in items if k != key and v is not None)


@table.vjp(py_sum, "iterable")
def py_sum_vjp(iterable, g):
    return spread(g, iterable)


@table.vjp(py_sum, "start")
def py_sum_vjp_start(start_shape, g):
    return unbroadcast(g, start_shape)


@table.jvp(py_sum, "iterable")
def py_sum_jvp(iterable, iterable_dot, y):
    return broadcast_like(py_sum(tangent_items(iterable, iterable_dot) if isinstance(iterable, (list, tuple))
                                 else iterable_dot), y)


@table.jvp(py_sum, "start")
def py_sum_jvp_start(start_dot, y):
    return broadcast_like(start_dot, y)


@table.vjp(as_record, "items")
def as_record_vjp(cls, g):
    return record_items(g, cls._fields)


@table.jvp(as_record, "items")
def as_record_jvp(cls, items_dot):
    return as_record(cls, items_dot)


@table.vjp(iterated, "xs", partial=True)
def iterated_vjp(xs, g):
    return None if isinstance(xs, dict) else g


@table.jvp(iterated, "xs")
def iterated_jvp(xs, xs_dot):
    return zeros_like_tree(list(xs)) if isinstance(xs, dict) else xs_dot


@table.vjp(py_sorted, "iterable", partial=True)
def py_sorted_vjp(iterable, key, reverse, g):
    if isinstance(iterable, dict):  # its keys: no gradient
        return None
    order = sorted_order(iterable, key, reverse)
    if isinstance(iterable, np.ndarray):  # its items (rows) in order: back where they came from
        return unindex(np.stack(piece_cotangents(g, list(iterable))), (iterable.shape, iterable.dtype), order)
    return keyed(order, g)


@table.jvp(py_sorted, "iterable")
def py_sorted_jvp(iterable, iterable_dot, key, reverse):
    if isinstance(iterable, dict):
        return zeros_like_tree(py_sorted(iterable, key, reverse))
    return [iterable_dot[i] for i in sorted_order(iterable, key, reverse)]


@table.vjp(item_or, "d", partial=True)
def item_or_vjp_d(d, key, g):
    return one_item(g, key) if key in d else None


@table.vjp(dict_without, "d", partial=True)
def dict_without_vjp(key, g):
    return without_item(g, key) if g is not None else None


@table.jvp(dict_without, "d")
def dict_without_jvp(d_dot, key):
    return dict_without(d_dot, key)


@table.vjp(first_or, "items", partial=True)
def first_or_vjp_items(items, g):
    return one_item(g, 0) if len(items) else None


@table.vjp(first_or, "default", partial=True)
def first_or_vjp_default(items, g):
    return None if len(items) else g


@table.jvp(first_or, "items")
def first_or_jvp_items(items, items_dot, default):
    return items_dot[0] if len(items) else zeros_like_tree(default)


@table.jvp(first_or, "default")
def first_or_jvp_default(items, default, default_dot):
    return zeros_like_tree(items[0]) if len(items) else default_dot


@table.vjp(item_or, "default", partial=True)
def item_or_vjp_default(d, key, g):
    return None if key in d else g


@table.jvp(item_or, "d")
def item_or_jvp_d(d, d_dot, key, default):
    return d_dot[key] if key in d else zeros_like_tree(default)


@table.jvp(item_or, "default")
def item_or_jvp_default(d, key, default, default_dot):
    return zeros_like_tree(d[key]) if key in d else default_dot


@table.vjp(dict_items, "d")
def dict_items_vjp(d, g):
    return pairs_cotangent(tuple(d), g)


@table.jvp(dict_items, "d")
def dict_items_jvp(d_dot):
    return [(zeros_like_tree(key), value) for key, value in d_dot.items()]  # (a key is constant: `k * v` has v's)


@table.vjp(dict_values, "d")
def dict_values_vjp(d, g):
    return keyed(tuple(d), g)


@table.jvp(dict_values, "d")
def dict_values_jvp(d_dot):
    return dict_values(d_dot)


@table.vjp(concat, "x1")
def concat_vjp_x1(x1, g):
    return item_range(g, 0, len(x1))


@table.vjp(concat, "x2")
def concat_vjp_x2(x1, x2, g):
    return item_range(g, len(x1), len(x2))


@table.jvp(concat, "x1")
def concat_jvp_x1(x1_dot, x2):
    return x1_dot + type(x1_dot)(zeros_like_tree(list(x2)))


@table.jvp(concat, "x2")
def concat_jvp_x2(x1, x2_dot):
    return type(x2_dot)(zeros_like_tree(list(x1))) + x2_dot


@table.vjp(plus, "x1")
def plus_vjp_x1(x1, x2, x1_shape, g):
    return item_range(g, 0, len(x1)) if joined(x1, x2) else unbroadcast(g, x1_shape)


@table.vjp(plus, "x2")
def plus_vjp_x2(x1, x2, x2_shape, g):
    return item_range(g, len(x1), len(x2)) if joined(x1, x2) else unbroadcast(g, x2_shape)


@table.jvp(plus, "x1")
def plus_jvp_x1(x1, x1_dot, x2, y):
    return x1_dot + type(x1_dot)(zeros_like_tree(list(x2))) if joined(x1, x2) else broadcast_like(x1_dot, y)


@table.jvp(plus, "x2")
def plus_jvp_x2(x1, x2, x2_dot, y):
    return type(x2_dot)(zeros_like_tree(list(x1))) + x2_dot if joined(x1, x2) else broadcast_like(x2_dot, y)


@table.vjp(repeat_items, "a")
def repeat_items_vjp(a, n, g):
    return summed_repeats(g, len(a), n) if counted(a, n) else unbroadcast(g * n, np.shape(a))


@table.vjp(repeat_items, "n")
def repeat_items_vjp_n(a, n, n_shape, g):
    return unbroadcast(g * np.asarray(a), n_shape)  # (a count is never differentiated)


@table.jvp(repeat_items, "a")
def repeat_items_jvp(a, a_dot, n, y):
    return a_dot * n if counted(a, n) else broadcast_like(np.multiply(a_dot, n), y)


@table.jvp(repeat_items, "n")
def repeat_items_jvp_n(a, n_dot, y):
    return broadcast_like(np.multiply(np.asarray(a), n_dot), y)


def shifted(g, start, n):
    """The transpose of `item_range`: `n` items of a cotangent renumbered from `start`."""
    items = entries(g)
    return Cotree((key + start, value) for key, value in items if value is not None and key < n)


def tiled(g, length, n):
    """The transpose of `summed_repeats`: a cotangent of `length` items repeated `n` times."""
    return Cotree((key + length * k, value) for k in range(n)
                  for key, value in entries(g) if value is not None)


def item_range(g, start, n):
    """Items `start` to `start + n` of a container's cotangent, renumbered from 0 (None where none)."""
    items = entries(g)
    return Cotree((key - start, value) for key, value in items
                  if value is not None and start <= key < start + n)


def summed_repeats(g, length, n):
    """The cotangent of a list repeated `n` times, summed back onto its `length` items."""
    total = Cotree()
    for key, value in entries(g):
        if value is not None:
            total[key % length] = add_cotangents(total.get(key % length), value)
    return total


@table.vjp(np.array, "object")
@table.vjp(np.asarray, "object")
def array_vjp(object, dtype, g):
    if dtype is not None and np.dtype(dtype).kind in "biu":  # np.array(x * 5, dtype=int): truncated, constant
        g = np.zeros(np.shape(g))
    return array_rows(object, g)


def array_rows(object, g):
    """The cotangent of `object` in `np.array(object)`: one per item for a list or tuple, else `g` itself."""
    return list(g) if isinstance(object, (list, tuple)) else g


def item_cotangent(g, key):
    """Item `key` of a container's cotangent (a Cotree, list or tuple), or None if it has none."""
    if g is None:
        return None
    if isinstance(g, dict):
        return g.get(key)
    return g[key] if key < len(g) else None


def one_item(g, key):
    """A container's cotangent with `g` at item `key` and nothing elsewhere (the transpose of `item_cotangent`)."""
    return None if g is None else Cotree({key: g})


def keyed(keys, g):
    """Per-item cotangents `g` (one per key, in order) as a container's cotangent keyed by `keys`."""
    items = ((key, item_cotangent(g, i)) for i, key in enumerate(keys))
    return Cotree((key, item) for key, item in items if item is not None)


def keys_within(g, keys):
    """A dict's cotangent at `keys` only (the items `d.update(keys)` set)."""
    return Cotree((key, value) for key, value in entries(g) if key in keys)


def keys_outside(g, keys):
    """A dict's cotangent without the items at `keys` (those `d.update(keys)` replaced)."""
    return Cotree((key, value) for key, value in entries(g) if key not in keys)


def without_item(g, key):
    """A container's cotangent without item `key` (the list before an append)."""
    if isinstance(g, dict):
        rest = type(g)(g)
        rest.pop(key, None)
        return rest
    return g[:key] if isinstance(g, (list, tuple)) else g
