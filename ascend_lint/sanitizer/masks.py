"""Which masked-out lanes the device issues, from how each mask was built.

triton-ascend (3.2, the release this package pins) decides how to lower a masked
``tl.load``, ``tl.store`` or ``tl.atomic_add`` by parsing the mask's construction
(``ascend/triton-adapter/lib/TritonToLinalg/MaskAnalysis.cpp``, ``MaskState::parse``):

* a mask it parses describes a box of lanes, per dimension an offset and a size; the
  access becomes a copy of that box (``LoadStoreConverter.cpp``, ``LoadConverter`` and
  ``StoreConverter``: ``memref.subview`` of the mask state's offsets and dims; the
  gather loop of ``UnstructureConversionPass.cpp`` runs over the box too).  Lanes outside
  the box are never issued, however far outside the storage they point;
* any other mask is "discrete" (``DiscreteMaskAccessConversionPass.cpp``): a load reads
  the whole block and selects (``DiscreteMaskLoadConversion``), a store reads the whole
  block, selects and writes the whole block back (``DiscreteMaskStoreConversion``), an
  atomic add adds 0 on the masked lanes of the whole block
  (``DiscreteMaskAtomicAddConversion``).  Every lane is issued.

``MaskState::parse`` accepts, and nothing else:
* ``tl.arange`` (``make_range``) plus scalars (``arith.addi`` with one side a scalar or a
  splat), sign-extended (``arith.extsi``), expanded and broadcast: an offset;
* a compare of such an offset (on the left) against a scalar (on the right) with ``<``,
  ``<=``, ``>=`` or ``==`` (``parseCmp``: ``slt``, ``sle``, ``sge``, ``eq``; ``ne`` only as
  ``tl.where(c, 1, 0) != 0``); the offset may span one dimension of more than one lane.
  Before the parse, MLIR's ``arith.cmpi`` folding moves a literal to the right (``16 >
  offs`` is ``offs < 16``);
* ``&`` of two parsed masks (``parseAnd``); a scalar condition splat over the block
  (``parseSplat``: any integer scalar, ``token_id < vocab`` included, is a size factor
  of 0 or 1, as long as the splat's users are all masks, ands or selects).

So a subtraction (``offs - 1 >= 0``), a product (``offs * 2 < n``), ``%``, ``//``, a
compare of loaded data, ``>``, ``!=``, ``|``, ``~`` or ``tl.where`` make a mask discrete, and
so does any mask and'ed with one (3.2 has no partial clipping; later releases bound the
block by the parsed factors of an and, ``decomposeAndMask``).  Scalar accesses are lowered
apart (``LoadConverter``'s scalar case, ``ScalarStoreCanonicalizer``,
``ScalarAtomicRMWCanonicalizer``): a masked scalar load is an unconditional load and a
select, a masked scalar store an ``scf.if``, and a scalar atomic drops its mask.

Under the interpreter every value is a numpy array, so this module follows the same
construction through the builder's ops: each integer or boolean handle the kernel builds
carries a mark (``KEY`` in its ``attr``): an offset (``RANGE``), a value equal in every
lane (``SCALAR``; ``CONSTANT`` for a literal), a mask the compiler parses (``BOX``), or
``Unparsed`` with what made it so.  ``issued_reason`` turns the mark of an access's mask
into why its masked-out lanes are issued, or None when they are not.  Not followed: a
splat of a scalar condition that the kernel also uses in a non-mask way (the compiler
then treats every mask built from it as discrete), and loop-carried masks (the compiler
parses the value the loop starts with).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ascend_lint.reversible_patch import wrap

KEY = "ascend_lint.mask"

RANGE = "range"  # integers: a tl.arange plus scalars
SCALAR = "scalar"  # integers: one value in every lane (a splat)
CONSTANT = "constant"  # a literal, or a splat of one
BOX = "box"  # booleans: a mask the compiler parses into a box of lanes


class Unparsed(str):
    """A value the compiler's mask analysis gives up on, named by what made it so (an
    integer: a noun phrase for the value; a boolean: one for how the mask was built)."""


LOADED = Unparsed("values loaded from memory")
_NOT_DERIVED = "values that do not derive from a tl.arange"
_NO_COMPARE = "a mask that does not derive from compares of a tl.arange offset"
_SCALARS = (SCALAR, CONSTANT)
# predicates the analysis accepts (parseCmp), and what the others look like in source
_PARSED = {"SLT", "SLE", "SGE", "EQ"}
_SYMBOL = {"SGT": ">", "NE": "!=", "ULT": "<", "ULE": "<=", "UGT": ">", "UGE": ">="}
# a literal on the left is folded to the right, the predicate mirrored
_MIRROR = {
    "SLT": "SGT",
    "SLE": "SGE",
    "SGT": "SLT",
    "SGE": "SLE",
    "EQ": "EQ",
    "NE": "NE",
    "ULT": "UGT",
    "ULE": "UGE",
    "UGT": "ULT",
    "UGE": "ULE",
}

SCALAR_LOAD = (
    "a masked scalar load is issued whatever its mask (triton-ascend lowers it to an "
    "unconditional load and a select)"
)
SCALAR_ATOMIC = "a scalar atomic is issued whatever its mask (triton-ascend drops the mask)"


def mark_of(handle):
    attr = getattr(handle, "attr", None)
    return None if not attr else attr.get(KEY)


def issued_reason(op: str, mask, shape: tuple[int, ...]) -> str | None:
    """Why the masked-out lanes of an access are issued, or None when they are not:
    ``op`` is load, store or atomic, ``mask`` the mask's handle, ``shape`` the pointer's
    lanes (a scalar is one lane)."""
    mark = mark_of(mask)
    if mark == BOX:
        return None
    # a scalar access: its mask is a scalar condition, never splat into a box
    if shape == (1,):
        if op == "store":
            return None
        return SCALAR_LOAD if op == "load" else SCALAR_ATOMIC
    what = mark if isinstance(mark, Unparsed) else _NO_COMPARE
    return "the mask is not one the compiler clips by: " + what


# -- what each builder op makes of its operands' marks --------------------------------------
def _is_bool(*handles) -> bool:
    """Any of the handles a boolean?  The interpreter keeps either sign, or neither: a
    compare's result holds numpy booleans under its operands' integer type, a splat of
    a condition holds integers under ``int1`` -- or, when the condition is a compare of
    scalars, integers under the compare's integer type, and so does an ``&`` whose left
    side is such a splat.  Only booleans are ever marked a box, so the mark says it
    where the types no longer do."""
    return any(
        getattr(h.data, "dtype", None) == np.bool_
        or getattr(h.dtype, "primitive_bitwidth", None) == 1
        or mark_of(h) == BOX
        for h in handles
    )


def _first_unparsed(marks) -> Unparsed | None:
    return next((m for m in marks if isinstance(m, Unparsed)), None)


def _arithmetic(what: str) -> Callable:
    """An integer op the analysis does not follow: an offset through it is no offset."""

    def rule(args, out):
        marks = [mark_of(a) for a in args]
        if RANGE in marks:
            return Unparsed(what)
        if all(m == CONSTANT for m in marks):
            return CONSTANT
        return _first_unparsed(marks)

    return rule


def _add(args, out):
    left, right = mark_of(args[0]), mark_of(args[1])
    if RANGE in (left, right):
        other = right if left == RANGE else left
        if other in _SCALARS:
            return RANGE
        if other == RANGE:
            return Unparsed("the sum of two tl.arange offsets")
        return (
            other
            if isinstance(other, Unparsed)
            else Unparsed("a tl.arange offset plus values that differ per lane")
        )
    if left == CONSTANT and right == CONSTANT:
        return CONSTANT
    return _first_unparsed((left, right))


def _same(args, out):
    """Lanes moved or copied (expand_dims, broadcast): the mark stays."""
    return mark_of(args[0])


def _reshaped(args, out):
    mark = mark_of(args[0])
    if mark is None or mark in _SCALARS:
        return mark
    return Unparsed(
        "a reshaped or permuted mask" if _is_bool(args[0]) else "a reshaped tl.arange offset"
    )


def _int_cast(args, out):
    src, dst = args[0], args[1]
    mark = mark_of(src)
    if mark is None or isinstance(mark, Unparsed):
        return mark
    if _is_bool(src):  # a mask turned into integers
        return Unparsed("a mask converted to integers")
    # the target is a block type for a block (its element type says the width)
    dst = getattr(dst, "scalar", dst)
    widening = getattr(dst, "primitive_bitwidth", 0) > getattr(src.dtype, "primitive_bitwidth", 0)
    signed = bool(args[2]) if len(args) > 2 else True
    if widening and signed:  # arith.extsi, followed by the analysis
        return mark
    if mark == RANGE:
        return Unparsed("a tl.arange offset cast to a narrower or unsigned type")
    return None


_BITWISE = _arithmetic("a tl.arange offset combined bitwise")
_CHOSEN = _arithmetic("a tl.arange offset chosen by tl.where")


def _logical(mask_words: str) -> Callable:
    def rule(args, out):
        if not _is_bool(*args):
            return _BITWISE(args, out)
        return Unparsed(mask_words)

    return rule


def _and(args, out):
    if not _is_bool(*args):
        return _BITWISE(args, out)
    left, right = mark_of(args[0]), mark_of(args[1])
    if left == BOX and right == BOX:
        return BOX
    return _first_unparsed((left, right))


def _select(args, out):
    if _is_bool(args[1], args[2]):
        return Unparsed("a mask built with tl.where")
    return _CHOSEN(args[1:], out)


def _splat(args, out):
    source = args[0]
    if _is_bool(source):  # a scalar condition: all lanes or none
        return BOX
    return CONSTANT if mark_of(source) == CONSTANT else SCALAR


def _compare(predicate: str) -> Callable:
    def rule(args, out):
        offsets = args[0]
        left, right = mark_of(args[0]), mark_of(args[1])
        pred = predicate
        if left == CONSTANT and right != CONSTANT:
            offsets = args[1]
            left, right, pred = right, left, _MIRROR[predicate]
        if left != RANGE:
            if right == RANGE and left in _SCALARS:
                return Unparsed("a compare with the tl.arange offset on the right (n > offs)")
            what = left if isinstance(left, Unparsed) else _NOT_DERIVED
            return Unparsed(f"a compare of {what}")
        if pred not in _PARSED:
            kind = "an unsigned" if pred.startswith("U") else f"a `{_SYMBOL[pred]}`"
            return Unparsed(f"{kind} compare (the compiler parses <, <=, >= and ==)")
        if right not in _SCALARS:
            return Unparsed("a compare against values that differ per lane")
        if sum(d > 1 for d in np.shape(offsets.data)) > 1:
            return Unparsed("a compare of a tl.arange offset spread over two dimensions")
        return BOX

    return rule


def _float_compare(args, out):
    return Unparsed("a compare of floating-point values")


def _literal(args, out):
    return CONSTANT


def _loaded(args, out):
    return LOADED


# ops that make a mark from unmarked operands: their rule runs on every call
_ALWAYS: dict[str, Callable] = {
    "create_make_range": lambda args, out: RANGE,
    "create_splat": _splat,
    "get_int8": _literal,
    "get_int16": _literal,
    "get_int32": _literal,
    "get_int64": _literal,
    "get_uint8": _literal,
    "get_uint16": _literal,
    "get_uint32": _literal,
    "get_uint64": _literal,
    "create_masked_load": _loaded,
    **{f"create_icmp{p}": _compare(p) for p in _MIRROR},
    **{
        f"create_fcmp{p}": _float_compare
        for p in (
            "OLT",
            "OGT",
            "OLE",
            "OGE",
            "OEQ",
            "ONE",
            "ULT",
            "UGT",
            "ULE",
            "UGE",
            "UEQ",
            "UNE",
        )
    },
}
# ops that only pass a mark on: their rule runs when an operand carries one
_PASSING: dict[str, Callable] = {
    "create_add": _add,
    "create_sub": _arithmetic("a tl.arange offset with a value subtracted"),
    "create_mul": _arithmetic("a multiplied tl.arange offset"),
    "create_sdiv": _arithmetic("a divided tl.arange offset"),
    "create_udiv": _arithmetic("a divided tl.arange offset"),
    "create_srem": _arithmetic("a tl.arange offset taken modulo"),
    "create_urem": _arithmetic("a tl.arange offset taken modulo"),
    "create_shl": _arithmetic("a shifted tl.arange offset"),
    "create_lshr": _arithmetic("a shifted tl.arange offset"),
    "create_ashr": _arithmetic("a shifted tl.arange offset"),
    "create_minsi": _arithmetic("a tl.arange offset through tl.minimum"),
    "create_maxsi": _arithmetic("a tl.arange offset through tl.maximum"),
    "create_minui": _arithmetic("a tl.arange offset through tl.minimum"),
    "create_maxui": _arithmetic("a tl.arange offset through tl.maximum"),
    "create_and": _and,
    "create_or": _logical("masks combined with |"),
    "create_xor": _logical("a mask negated with ~ or combined with ^"),
    "create_select": _select,
    "create_int_cast": _int_cast,
    "create_expand_dims": _same,
    "create_broadcast": _same,
    "create_reshape": _reshaped,
    "create_trans": _reshaped,
    "create_cat": _reshaped,
    "create_join": _reshaped,
}


def install(builder) -> Callable[[], None]:
    """Mark-passing wrappers on the interpreter's builder; returns the undo."""
    undos = []

    def always(inner, rule):
        def marking(*args, **kwargs):
            out = inner(*args, **kwargs)
            mark = rule(args, out)
            if mark is not None:
                out.attr[KEY] = mark
            return out

        return marking

    def passing(inner, rule):
        def marking(*args, **kwargs):
            out = inner(*args, **kwargs)
            # the common case first: no operand carries a mark
            for a in args:
                attr = getattr(a, "attr", None)
                if attr and KEY in attr:
                    mark = rule(args, out)
                    if mark is not None:
                        out.attr[KEY] = mark
                    break
            return out

        return marking

    for rules, make in ((_ALWAYS, always), (_PASSING, passing)):
        for name, rule in rules.items():
            if hasattr(builder, name):
                undos.append(wrap(builder, name, lambda inner, r=rule, m=make: m(inner, r)))

    def undo() -> None:
        for u in reversed(undos):
            u()

    return undo
