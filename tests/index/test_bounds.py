"""Lower bounds of index values (`ascend_lint/index/bounds.py`): the lowest value of a
linear form, the comparisons that bound one, the lanes a mask keeps, the facts where a
statement runs (branches, early exits), what launches bind, and whether an address
reads a bounded quantity."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex
from ascend_lint.index.bounds import plainly_non_negative
from ascend_lint.index.linear import Form


def model(source: str):
    tree = ast.parse(textwrap.dedent(source))
    index = KernelIndex.build(tree)
    return index, {fn.name: fn for fn in index.kernels}


def statement(fn, text: str) -> int:
    """The order of the first statement of `fn` whose source starts with `text`."""
    return next(i for i, s in enumerate(fn.statements) if ast.unparse(s).startswith(text))


def expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def lowest(index, fn, text: str, at: str):
    """The lowest value of `text` read at the statement starting with `at`, by names."""
    form = index.bounds.linear_form(fn, expr(text), statement(fn, at))
    low = index.bounds.interval(fn, form)[0]
    if low is None:
        return None
    return {"": 0} | {"*".join(a.name for a in m): c for m, c in low.terms.items()}


def negative(index, fn, text: str, at: str) -> bool:
    order = statement(fn, at)
    form = index.bounds.linear_form(fn, expr(text), order)
    return index.bounds.can_be_negative(fn, form, fn.statements[order])


# -- the lowest value of a form ----------------------------------------------------------
RANGES = """
import triton
import triton.language as tl

@triton.jit
def k(x, cu, table, T, W: tl.constexpr, BT: tl.constexpr):
    i_n = tl.program_id(1)
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    for i_w in tl.static_range(-W + 1, 1):
        o_x = o_t + i_w
        tl.store(x + o_x, 0)
    bos = tl.load(cu + i_n)
    eos = tl.load(cu + i_n + 1)
    span = eos - bos
    for i in range(bos, eos):
        tl.store(x + i, 0)
    slot = tl.load(table + i_n)
    page = tl.maximum(tl.load(table + i_n), 0)
    tl.store(x + span + slot + page + (o_t - 1) // 2, 0)
"""


def test_the_lowest_value_of_lanes_loops_and_program_ids():
    index, fns = model(RANGES)
    k = fns["k"]
    assert lowest(index, k, "o_t", "tl.store(x + o_x") == {"": 0}
    assert lowest(index, k, "o_x", "tl.store(x + o_x") == {"": 1, "W": -1}
    assert lowest(index, k, "o_x + W", "tl.store(x + o_x") == {"": 1}
    assert lowest(index, k, "tl.arange(0, BT) - BT", "tl.store(x + o_x") == {"": 0, "BT": -1}
    assert lowest(index, k, "i", "tl.store(x + i") == {"": 0}  # from a loaded start


def test_a_loaded_value_is_a_non_negative_index_only_inside_arithmetic():
    index, fns = model(RANGES)
    k = fns["k"]
    at = "tl.store(x + span"
    assert lowest(index, k, "slot", at) is None  # a -1 sentinel, maybe
    assert lowest(index, k, "slot * 2 + i_n", at) == {"": 0}
    assert lowest(index, k, "page", at) == {"": 0}  # clamped where it is assigned


def test_consecutive_entries_of_an_offsets_table_make_a_length():
    index, fns = model(RANGES)
    k = fns["k"]
    assert lowest(index, k, "span", "tl.store(x + span") == {"": 0}
    assert lowest(index, k, "bos - eos", "tl.store(x + span") is None


# -- comparisons and masks ---------------------------------------------------------------
def test_what_a_comparison_bounds_from_below():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, K, BT: tl.constexpr):
            ti = tl.program_id(0)
            o = tl.arange(0, BT)
            tl.store(x + o, 0)
        """
    )
    k = fns["k"]
    at = statement(k, "tl.store")
    bounds = index.bounds

    def found(text: str, strict: bool = False) -> list[tuple[str, dict]]:
        (test,) = [n for n in ast.walk(expr(text)) if isinstance(n, ast.Compare)]
        ((left, op, right),) = [(test.left, test.ops[0], test.comparators[0])]
        return [
            (ast.unparse(value), {"*".join(a.name for a in m): c for m, c in g.terms.items()})
            for value, g in bounds.lower_bounds(k, left, op, right, at, strict)
        ]

    assert found("o > 0") == [("o", {"arange": 1, "": -1})]
    assert found("0 <= o") == [("o", {"arange": 1})]
    assert found("o >= K") == [("o", {"arange": 1, "K": -1})]
    assert found("o > -1") == [("o", {"arange": 1})]
    assert found("o != -1") == [("o", {"arange": 1})]
    assert found("ti != 0") == [("ti", {"program_id": 1, "": -1})]  # ti >= 0, so ti >= 1
    assert found("o >= -2", strict=True) == []  # says nothing about a negative offset
    assert found("o > 0.5", strict=True) == []  # a value test
    assert found("o < n") == [("n", {"n": 1, "arange": -1, "": -1})]


def test_the_lower_bounds_a_mask_keeps_through_locals_and_broadcasts():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, PAD: tl.constexpr, BT: tl.constexpr):
            o = tl.program_id(0) * BT + tl.arange(0, BT)
            idx = o - PAD
            valid = (idx >= 0) & (idx < n)
            m = valid[:, None] & (tl.arange(0, 4) < 4)[None, :]
            tl.store(x + idx[:, None] * 4 + tl.arange(0, 4)[None, :], 0, mask=m)
        """
    )
    k = fns["k"]
    at = statement(k, "tl.store")
    mask = k.statements[at].value.keywords[0].value
    bounds = index.bounds.mask_bounds(k, mask, at)
    assert len(bounds) == 1  # `idx < n` and `arange < 4` bound a size and a literal
    first = bounds[0]
    assert (first.text, first.name, first.via) == ("idx", "idx", "m")
    assert first.form == index.bounds.linear_form(k, expr("o - PAD"), at)
    assert index.bounds.varies(k, first.form)


# -- facts where a statement runs --------------------------------------------------------
BRANCHES = """
import triton
import triton.language as tl

@triton.jit
def k(x, T, NT, BT: tl.constexpr):
    pid = tl.program_id(0)
    ti = pid % NT
    if ti == 0:
        a = tl.load(x + ti * BT - 1 + tl.arange(0, BT))
    else:
        b = tl.load(x + ti * BT - 1 + tl.arange(0, BT))
    for i in range(NT):
        if i == 0:
            continue
        c = tl.load(x + (i - 1) * BT + tl.arange(0, BT))
    d = tl.load(x + (i - 1) * BT)
    if ti == 0:
        return
    e = tl.load(x + (ti - 1) * BT + tl.arange(0, BT))
"""


def test_the_else_of_a_test_bounds_what_runs_there():
    index, fns = model(BRANCHES)
    k = fns["k"]
    assert negative(index, k, "ti * BT - 1 + tl.arange(0, BT)", "a = ")
    assert not negative(index, k, "ti * BT - 1 + tl.arange(0, BT)", "b = ")


def test_an_early_exit_bounds_what_follows_it_in_its_own_blocks():
    index, fns = model(BRANCHES)
    k = fns["k"]
    assert not negative(index, k, "(i - 1) * BT", "c = ")  # after `continue` in the loop
    assert negative(index, k, "(i - 1) * BT", "d = ")  # after the loop: no longer
    assert not negative(index, k, "(ti - 1) * BT + tl.arange(0, BT)", "e = ")  # after `return`


def test_the_facts_are_forms_that_are_non_negative_there():
    index, fns = model(BRANCHES)
    k = fns["k"]
    at = statement(k, "b = ")
    facts = index.bounds.facts_at(k, k.statements[at])
    ti = index.bounds.linear_form(k, expr("ti"), at)
    assert ti.plus(-1) in facts
    inside = statement(k, "a = ")
    assert ti.plus(-1) not in index.bounds.facts_at(k, k.statements[inside])


# -- launches --------------------------------------------------------------------------
LAUNCHED = """
import triton
import triton.language as tl

@triton.jit
def k(x, y, W: tl.constexpr, BW: tl.constexpr):
    o_w = tl.arange(0, BW) + W - BW
    tl.store(y + tl.arange(0, BW), tl.load(x + o_w, mask=o_w >= 0))


def run(x, y, width):
    k[(1,)](x, y, W=width, BW=width)
"""


def test_what_every_launch_binds_decides_a_lower_bound():
    index, fns = model(LAUNCHED)
    assert not negative(index, fns["k"], "o_w", "tl.store")
    index, fns = model(
        LAUNCHED + "\n\ndef run_padded(x, y, width):\n"
        "    k[(1,)](x, y, W=width, BW=triton.next_power_of_2(width))\n"
    )
    assert negative(index, fns["k"], "o_w", "tl.store")  # one launch is enough


def test_an_unlaunched_kernel_takes_its_arguments_as_unknown_sizes():
    index, fns = model(LAUNCHED.split("\n\ndef run")[0])
    assert negative(index, fns["k"], "o_w", "tl.store")


def test_the_launchers_asserts_bound_the_values_it_binds():
    source = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, width, CHUNK: tl.constexpr):
        o = CHUNK - (width - 1) + tl.arange(0, CHUNK)
        tl.store(x + o, 0, mask=o >= 0)


    def run(x, weight):
        _, width = weight.shape
        CHUNK = 256
        {check}
        k[(1,)](x, int(width), CHUNK=CHUNK)
    """
    index, fns = model(source.format(check="assert CHUNK >= width"))
    assert not negative(index, fns["k"], "o", "tl.store")
    index, fns = model(source.format(check="pass"))
    assert negative(index, fns["k"], "o", "tl.store")


def test_a_helper_parameter_is_what_its_callers_bind():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def helper(x, start, BT: tl.constexpr):
            tl.store(x + start + tl.arange(0, BT), 0)

        @triton.jit
        def k(x, BT: tl.constexpr):
            helper(x, tl.program_id(0) * BT, BT)
        """
    )
    assert not negative(index, fns["helper"], "start", "tl.store")
    assert plainly_non_negative(
        index.bounds.interval(
            fns["k"], index.bounds.linear_form(fns["k"], expr("tl.program_id(0) * BT"), 0)
        )[0]
    )


# -- how an address reads a bounded quantity ------------------------------------------------
READS = """
import triton
import triton.language as tl

@triton.jit
def k(x, idx, n, K, D: tl.constexpr, BT: tl.constexpr):
    i = tl.program_id(0)
    o = i * BT + tl.arange(0, BT)
    rows = tl.load(idx + o)
    tl.store(x + o, 0)
"""


def test_an_address_reads_a_quantity_scaled_by_a_stride():
    index, fns = model(READS)
    k = fns["k"]
    at = statement(k, "tl.store")
    bounds = index.bounds
    form = bounds.linear_form

    def share(address: str, bounded: str):
        found = bounds.share(k, form(k, expr(address), at), form(k, expr(bounded), at))
        return None if found is None else (found.factor, found.part, found.value)

    factor, part, value = share("(o - 1) * D + tl.arange(0, D)", "o - 1")
    assert factor == form(k, expr("D"), at) and value == form(k, expr("o - 1"), at)
    assert part == form(k, expr("(o - 1) * D"), at)  # the lanes of `D` do not move with it
    factor, _part, value = share("rows * K + o", "rows")
    assert factor == form(k, expr("K"), at) and value == form(k, expr("rows"), at)
    # the rest that moves with the quantity: `o` against `o - 1` is `o`, never negative
    assert share("o", "o - 1")[1] == form(k, expr("o"), at)
    assert share("n - 1 - o", "n - o - 1")[0] == form(k, expr("1"), at)  # a reversed index
    assert share("i * K + o", "K - o - 1") is None  # `K` a stride, the lanes the other way
    assert share("i * n + o", "n - o - 1") is None
    assert share("tl.maximum(o - 1, 0)", "o - 1") is None  # clamped: another value


def test_whole_strides_in_the_rest_move_with_the_quantity():
    """`o * K` against `o - 1` is `(o - 1) * K + K`: the part is `o * K`, never negative,
    where a stride that is not a literal used to leave `(o - 1) * K` alone."""
    index, fns = model(READS)
    k = fns["k"]
    at = statement(k, "tl.store")
    bounds = index.bounds

    def form(text: str):
        return bounds.linear_form(k, expr(text), at)

    def share(address: str, bounded: str):
        return bounds.share(k, form(address), form(bounded))

    found = share("o * K + tl.maximum(o - 1, 0)", "o - 1")
    assert (found.factor, found.part, found.value) == (form("K"), form("o * K"), form("o"))
    assert share("o * K + o", "o - 1").part == form("o * (K + 1)")
    assert not bounds.can_be_negative(k, share("o * K", "o - 1").part, k.statements[at])
    # still below the start: `o * K + o - 1` is `(o - 1) * (K + 1) + K`, -1 at `o = 0`
    assert share("o * K + o - 1", "o - 1").part == form("o * K + o - 1")
    assert bounds.can_be_negative(k, share("o * K + o - 1", "o - 1").part, k.statements[at])
    assert share("(o - 1) * K + o", "o - 1").part == form("(o - 1) * (K + 1) + 1")
    assert bounds.can_be_negative(k, share("(o - 1) * K + o", "o - 1").part, k.statements[at])


def test_a_loaded_index_and_its_table():
    index, fns = model(READS)
    k = fns["k"]
    at = statement(k, "tl.store")
    rows = index.bounds.linear_form(k, expr("rows"), at)
    assert index.bounds.table_of(k, rows) == "idx"
    assert index.bounds.table_of(k, rows.plus(1)) is None
    assert index.bounds.varies(k, rows)
    assert not index.bounds.varies(k, index.bounds.linear_form(k, expr("i - 1"), at))


def test_sentinels_are_parameters_every_launch_binds_to_minus_one():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        PAD = -1

        @triton.jit
        def k(x, slots, pad_slot_id, other):
            s = tl.load(slots)
            tl.store(x + s, 0, mask=(s != pad_slot_id) & (s != other))

        def run(x, slots, pad_slot_id: int = PAD):
            k[(1,)](x, slots, pad_slot_id, 3)
        """
    )
    assert index.bounds.sentinels(fns["k"]) == {"pad_slot_id"}


def test_the_kept_out_lanes_an_address_reaches_below_its_start_on_some_path():
    source = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(src, dst, dst_rows, stride, HAS_MAP: tl.constexpr, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        keep = o >= 0
        if HAS_MAP:
            row = tl.load(dst_rows + o)
            keep = row != -1
        else:
            row = o
        tl.store(dst + {use} * stride, tl.load(src + o), mask=keep)
    """
    for use, reaches in (("row", True), ("tl.maximum(row, 0)", False), ("o", False)):
        index, fns = model(source.format(use=use))
        k = fns["k"]
        bounds = index.bounds
        at = statement(k, "tl.store")
        stmt = k.statements[at]
        call = stmt.value
        offset = bounds.offset(k, bounds.linear_form(k, call.args[0], at))
        found = [
            b
            for b in bounds.mask_bounds(k, call.keywords[0].value, at)
            if bounds.reads_kept_out(k, offset, b, stmt)
        ]
        assert bool(found) == reaches, use
        if reaches:
            assert [b.text for b in found] == ["row"]


# -- selects: loads only an arm uses, and what its condition bounds --------------------------
SELECTS = """
import triton
import triton.language as tl

@triton.jit
def k(x, cu, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    first = o == 0
    start = tl.where(o == 0, 0, tl.load(cu + o - 1, m))
    inner = tl.where(m, tl.where(first, 0.0, tl.load(x + o - 1)), 0.0)
    prev = tl.load(x + o - 1, mask=m)
    both = tl.load(x + o + 1, mask=m)
    other = tl.load(x + o, mask=m)
    tl.store(y + o, tl.where(~first, prev.to(tl.float32), 0.0) + tl.where(m, both, 0.0), m)
    tl.store(y + o, tl.where(m, both, other) + other, m)
    flag = tl.where(tl.load(x + o, mask=m) > 0, 1, 0)
    tl.store(y + o, start + inner + flag, m)
"""


def arm_loads(index, fn) -> list[tuple[str, str | None, list[list[tuple[str, bool]]]]]:
    """(address, the local it is bound to, [[(condition, holds), ...] per use]) of each
    load only select arms use."""
    return [
        (
            ast.unparse(load.call.args[0]),
            load.via,
            [[(ast.unparse(a.test), a.holds) for a in use] for use in load.uses],
        )
        for load in index.bounds.arm_loads(fn)
    ]


def test_the_loads_only_select_arms_use_with_the_arms_around_each_use():
    index, fns = model(SELECTS)
    found = arm_loads(index, fns["k"])
    assert sorted(found, key=repr) == sorted(
        [
            ("cu + o - 1", None, [[("o == 0", False)]]),
            # a select nested in an arm: both conditions, outermost first
            ("x + o - 1", None, [[("m", True), ("first", False)]]),
            # bound to a local only arms read (through `.to()`), once per use
            ("x + o - 1", "prev", [[("~first", True)]]),
            ("x + o + 1", "both", [[("m", True)], [("m", True)]]),
        ],
        key=repr,
    )
    # `other` is read outside every arm too (`+ other`), and the load in `flag`'s
    # condition is no arm's: neither is listed


def select_forms(index, fn, via: str | None, at: str) -> list[list[Form]]:
    """The forms the arms' conditions keep >= 0, per use, of the load bound to `via`
    (None: in the arm itself) at the statement starting with `at`."""
    stmt = fn.statements[statement(fn, at)]
    load = next(x for x in index.bounds.arm_loads(fn) if x.via == via and x.stmt is stmt)
    return [
        [b.form for arm in use for b in index.bounds.select_bounds(fn, arm)] for use in load.uses
    ]


def test_what_a_select_condition_bounds_on_the_lanes_an_arm_gives():
    index, fns = model(SELECTS)
    k = fns["k"]
    start = statement(k, "start =")

    def form(text: str, at: int = start):
        return index.bounds.linear_form(k, expr(text), at)

    # `o == 0` false: `o != 0`, and `o >= 0`, so `o - 1 >= 0`
    assert select_forms(index, k, None, "start =") == [[form("o - 1")]]
    load = next(x for x in index.bounds.arm_loads(k) if x.stmt is k.statements[start])
    (bound,) = index.bounds.select_bounds(k, load.uses[0][0])
    assert ast.unparse(bound.test) == "o != 0"  # the comparison as it holds in the arm
    # through the locals `m` and `first`, outer arm first
    assert select_forms(index, k, None, "inner =") == [[form("n - o - 1"), form("o - 1")]]
    # `~first` holds where `first` (`o == 0`) does not
    assert select_forms(index, k, "prev", "prev =") == [[form("o - 1")]]
    assert select_forms(index, k, "both", "both =") == [[form("n - o - 1")]] * 2


def test_a_select_condition_bounds_the_offset_the_arm_reads_only_with_its_facts():
    index, fns = model(SELECTS)
    k = fns["k"]
    at = statement(k, "start =")
    stmt = k.statements[at]
    offset = index.bounds.linear_form(k, expr("o - 1"), at)
    load = next(x for x in index.bounds.arm_loads(k) if x.stmt is stmt)
    facts = tuple(b.form for b in index.bounds.select_bounds(k, load.uses[0][0]))
    assert index.bounds.can_be_negative(k, offset, stmt)
    assert not index.bounds.can_be_negative(k, offset, stmt, assuming=facts)
    # a fact about another quantity shows nothing
    other = (index.bounds.linear_form(k, expr("n - o - 1"), at),)
    assert index.bounds.can_be_negative(k, offset, stmt, assuming=other)
