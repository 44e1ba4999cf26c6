"""Which tensor argument a pointer derives from, followed through the interpreter's ops.

Under the interpreter a pointer is a numpy array of host addresses; nothing in it says
which argument it came from, and an address alone cannot tell "one element past ``a``"
from "inside ``b``" when the allocator put ``b`` right after ``a``.  So each pointer
handle the launch creates from a tensor argument is tagged with that argument's storage
index, and every builder op that produces a pointer from a pointer (``addptr``, splat,
broadcast, reshape, permute, select, cat/join/split, bitcasts and pointer<->int casts,
integer add/sub on a pointer cast to an integer) passes the tag on.  A tag is an int
(every lane from one storage, the usual case) or an int32 array with one storage index
per lane (``tl.where(c, pa, pb)``; -1 where unknown).  Pointers the kernel builds from
integers or loads from memory carry no tag: ``checks`` attributes those by address.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ascend_lint.reversible_patch import wrap

TAG = "ascend_lint.storage"
UNKNOWN = -1


def tag_of(handle):
    attr = getattr(handle, "attr", None)
    return None if attr is None else attr.get(TAG)


def set_tag(handle, tag) -> None:
    if tag is not None and hasattr(handle, "attr"):
        handle.attr[TAG] = tag


def lanes(tag, shape) -> np.ndarray:
    """The tag as one storage index per lane of ``shape``."""
    if tag is None:
        return np.full(shape, UNKNOWN, dtype=np.int32)
    if isinstance(tag, np.ndarray):
        return np.broadcast_to(tag, shape)
    return np.full(shape, tag, dtype=np.int32)


def _merged(tags: list, make_lanes: Callable[[list[np.ndarray]], np.ndarray]):
    """One int when every part has the same storage, else the per-lane array."""
    if all(t is None for t in tags):
        return None
    first = tags[0]
    if not isinstance(first, np.ndarray) and all(
        not isinstance(t, np.ndarray) and t == first for t in tags
    ):
        return first
    return make_lanes(tags)


def _same_tag(out, tag):
    """``tag`` reshaped to the result's lanes (an int needs nothing)."""
    if isinstance(tag, np.ndarray):
        shape = np.shape(out.data)
        if tag.shape != shape:
            tag = np.broadcast_to(tag, shape) if tag.size != np.prod(shape) else tag.reshape(shape)
    return tag


def _shape_op(op: Callable):
    """An op that moves lanes around: apply the same move to a per-lane tag."""

    def rule(args, out):
        tag = tag_of(args[0])
        if isinstance(tag, np.ndarray):
            tag = op(tag, *args[1:])
        return tag

    return rule


def _splat(args, out):
    tag = tag_of(args[0])
    if isinstance(tag, np.ndarray):
        tag = int(tag.ravel()[0])
    return tag


def _first(args, out):
    return _same_tag(out, tag_of(args[0]))


def _add(args, out):
    # an address plus an offset stays in the address's storage; offset plus offset or
    # address plus address is not an address of anything known
    left, right = tag_of(args[0]), tag_of(args[1])
    if (left is None) == (right is None):
        return None
    return _same_tag(out, left if left is not None else right)


def _sub(args, out):
    left, right = tag_of(args[0]), tag_of(args[1])
    if left is None or right is not None:
        return None
    return _same_tag(out, left)


def _select(args, out):
    cond, a, b = args[0], tag_of(args[1]), tag_of(args[2])
    shape = np.shape(out.data)
    return _merged(
        [a, b],
        lambda tags: np.where(
            np.broadcast_to(cond.data, shape), lanes(tags[0], shape), lanes(tags[1], shape)
        ).astype(np.int32),
    )


def _cat(args, out):
    a, b = args[0], args[1]
    return _merged(
        [tag_of(a), tag_of(b)],
        lambda tags: np.concatenate(
            [lanes(tags[0], np.shape(a.data)), lanes(tags[1], np.shape(b.data))]
        ),
    )


def _join(args, out):
    a, b = args[0], args[1]
    return _merged(
        [tag_of(a), tag_of(b)],
        lambda tags: np.stack(
            [lanes(tags[0], np.shape(a.data)), lanes(tags[1], np.shape(b.data))], axis=-1
        ),
    )


_RULES: dict[str, Callable] = {
    "create_addptr": _first,
    "create_splat": _splat,
    "create_broadcast": _shape_op(lambda tag, shape: np.broadcast_to(tag, shape)),
    "create_expand_dims": _shape_op(lambda tag, axis: np.expand_dims(tag, axis)),
    "create_reshape": _shape_op(lambda tag, shape, *_: np.reshape(tag, shape)),
    "create_trans": _shape_op(lambda tag, perm: np.transpose(tag, perm)),
    "create_select": _select,
    "create_cat": _cat,
    "create_join": _join,
    "create_bitcast": _first,
    "create_int_to_ptr": _first,
    "create_ptr_to_int": _first,
    "create_int_cast": _first,
    "create_add": _add,
    "create_sub": _sub,
}


def _split_rule(args, outs):
    tag = tag_of(args[0])
    if tag is None:
        return
    for i, out in enumerate(outs):
        set_tag(out, tag[..., i] if isinstance(tag, np.ndarray) else tag)


def install(builder) -> Callable[[], None]:
    """Tag-passing wrappers on the interpreter's builder; returns the undo."""
    undos = []
    for name, rule in _RULES.items():
        if not hasattr(builder, name):
            continue

        def make(inner, rule=rule):
            def passing(*args, **kwargs):
                out = inner(*args, **kwargs)
                # the common case first: no operand is a tagged pointer
                if any(TAG in getattr(a, "attr", ()) for a in args):
                    set_tag(out, rule(args, out))
                return out

            return passing

        undos.append(wrap(builder, name, make))

    if hasattr(builder, "create_split"):

        def make_split(inner):
            def passing(*args, **kwargs):
                outs = inner(*args, **kwargs)
                _split_rule(args, outs)
                return outs

            return passing

        undos.append(wrap(builder, "create_split", make_split))

    def undo() -> None:
        for u in reversed(undos):
            u()

    return undo
