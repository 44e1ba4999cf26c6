"""The lowered IR facts that bear out ASC027, ASC028 and ASC032, and the rejections that
bear out ASC029 (`lowering/ir_facts.py`, `pytest_plugin/confirm.py`).

The IR below has the shape triton-ascend 3.2.0's `ttadapter` stage prints for the kernels
in each source (a gather, rows of 123 float32 values, a select on an integer compare in a
loop), cut to the ops the reader looks at."""

from __future__ import annotations

from ascend_lint.lowering import ir_facts
from ascend_lint.pytest_plugin import confirm

GATHER_IR = """\
module {
  func.func @pick(%arg2: memref<?xf32>, %arg3: memref<?xi32>, %arg4: memref<?xf32>) {
    %reinterpret_cast = memref.reinterpret_cast %arg3 to offset: [0], sizes: [16], strides: [1] : memref<?xi32> to memref<16xi32, strided<[1]>> loc(#loc2)
    %alloc = memref.alloc() : memref<16xi32> loc(#loc3)
    memref.copy %reinterpret_cast, %alloc : memref<16xi32, strided<[1]>> to memref<16xi32> loc(#loc3)
    %2 = scf.for %arg11 = %c0 to %c16 step %c1 iter_args(%arg12 = %1) -> (tensor<16xf32>) {
      %extracted = tensor.extract %0[%arg11] {DiscreteMemAccess} : tensor<16xi32> loc(#loc1)
      %3 = arith.index_cast %extracted : i32 to index loc(#loc1)
      %reinterpret_cast_1 = memref.reinterpret_cast %arg2 to offset: [%3], sizes: [1], strides: [1] : memref<?xf32> to memref<1xf32, strided<[1], offset: ?>> loc(#loc1)
      %4 = memref.load %reinterpret_cast_1[%c0] : memref<1xf32, strided<[1], offset: ?>> loc(#loc1)
      %inserted = tensor.insert %4 into %arg12[%arg11] : tensor<16xf32> loc(#loc1)
      scf.yield {DiscreteMemAccess} %inserted : tensor<16xf32> loc(#loc1)
    } {ExtractedLoadOrStore} loc(#loc1)
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("/src/k.py":5:0)
#loc1 = loc("/src/k.py":9:10)
#loc2 = loc("/src/k.py":8:22)
#loc3 = loc("/src/k.py":8:8)
"""

ROWS_IR = """\
module {
  func.func @scale_rows(%arg2: memref<?xf32>, %arg3: memref<?xf32>) {
    %reinterpret_cast = memref.reinterpret_cast %arg2 to offset: [%0], sizes: [16, 128], strides: [123, 1] : memref<?xf32> to memref<16x128xf32, strided<[123, 1], offset: ?>> loc(#loc1)
    %subview = memref.subview %reinterpret_cast[0, 0] [%1, %2] [1, 1] : memref<16x128xf32, strided<[123, 1], offset: ?>> to memref<?x?xf32, strided<[123, 1], offset: ?>> loc(#loc2)
    %subview_1 = memref.subview %alloc[0, 0] [%1, %2] [1, 1] : memref<16x128xf32> to memref<?x?xf32, strided<[128, 1]>> loc(#loc2)
    memref.copy %subview, %subview_1 : memref<?x?xf32, strided<[123, 1], offset: ?>> to memref<?x?xf32, strided<[128, 1]>> loc(#loc2)
    %aligned = memref.reinterpret_cast %arg3 to offset: [%0], sizes: [16, 128], strides: [128, 1] : memref<?xf32> to memref<16x128xf32, strided<[128, 1], offset: ?>> loc(#loc3)
    memref.copy %aligned, %alloc_2 : memref<16x128xf32, strided<[128, 1], offset: ?>> to memref<16x128xf32> loc(#loc3)
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("/src/k.py":5:0)
#loc1 = loc("/src/k.py":9:12)
#loc2 = loc("/src/k.py":10:8)
#loc3 = loc("/src/k.py":11:8)
"""

COMPARE_IR = """\
module {
  func.func @row_sum_sq(%arg2: memref<?xf32>, %arg4: i32) {
    %invariant = arith.cmpi sge, %a, %b : tensor<16x16xi32> loc(#loc3)
    %5 = scf.for %arg11 = %c0_i32 to %arg4 step %c16_i32 iter_args(%arg12 = %1) -> (tensor<16xf32>)  : i32 {
      %7 = arith.addi %6, %3 : tensor<16xi32> loc(#loc1)
      %8 = arith.cmpi slt, %7, %4 : tensor<16xi32> loc(#loc2)
      %m = arith.andi %8, %9 : tensor<16xi1> loc(#loc4)
      %17 = arith.select %8, %16, %1 : tensor<16xi1>, tensor<16xf32> loc(#loc2)
      scf.yield %17 : tensor<16xf32> loc(#loc2)
    } loc(#loc1)
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("/src/k.py":5:0)
#loc1 = loc("/src/k.py":9:5)
#loc2 = loc("/src/k.py":11:24)
#loc3 = loc("/src/k.py":8:9)
#loc4 = loc("/src/k.py":12:9)
"""


def facts(text: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(f.kind, f.lines) for f in ir_facts.parse(text, "/src/k.py").facts]


def test_a_load_issued_element_by_element_is_a_discrete_load():
    assert facts(GATHER_IR) == [("discrete-load", (9,))]  # not the index vector's copy


def test_rows_at_an_unaligned_pitch_and_not_the_aligned_ones():
    # 123 float32 values between rows (492 bytes); the second copy's pitch is 128
    assert facts(ROWS_IR) == [("unaligned-rows", (10, 9))]


def test_integer_tensor_compares_in_a_loop_not_hoisted_ones_nor_masks():
    # the compare before the loop was hoisted; `andi` of i1 masks is no integer op
    assert facts(COMPARE_IR) == [("int-vector-op", (11,))]


def _spec(path, kernel, facts, seen, **extra):
    return {
        "status": "ok",
        "file": str(path),
        "kernel": kernel,
        "key": f"{kernel}[fp32]",
        "def_line": 5,
        "last_line": 20,
        "ir": {"facts": facts, "lines_seen": seen},
        **extra,
    }


INT_COMPARE = """import triton
import triton.language as tl


@triton.jit
def row_sum_sq(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        cols = s + o
        v = tl.load(x + cols, mask=cols < n, other=0.0)
        acc += tl.where(cols < n, v * v, 0.0)
    tl.store(y + o, acc)
"""


def test_an_integer_compare_is_confirmed_by_the_ir_or_contradicted(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(INT_COMPARE)
    cmpi = {"kind": "int-vector-op", "lines": [12], "detail": "arith.cmpi"}
    [verdict] = [
        v
        for v in confirm.judge([_spec(path, "row_sum_sq", [cmpi], [10, 11, 12])])[0]
        if v["code"] == "ASC032"
    ]
    assert verdict["status"] == "confirmed" and verdict["line"] == 12
    # lowered without an integer compare on that line (hoisted, or folded into bounds)
    [verdict] = [
        v
        for v in confirm.judge([_spec(path, "row_sum_sq", [], [10, 11, 12])])[0]
        if v["code"] == "ASC032"
    ]
    assert verdict["status"] == "contradicted"


GATHER = """import triton
import triton.language as tl


@triton.jit
def pick(x, idx, y, stride, N: tl.constexpr):
    rn = tl.arange(0, N)
    i = tl.load(idx + rn)
    val = tl.load(x + i * stride)
    tl.store(y + rn, val)
"""


def test_a_gather_is_confirmed_by_a_discrete_load(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(GATHER)
    load = {"kind": "discrete-load", "lines": [9], "detail": "memref.load per element"}
    verdicts, ir_only = confirm.judge([_spec(path, "pick", [load], [7, 8, 9, 10])])
    [verdict] = [v for v in verdicts if v["code"] == "ASC027"]
    assert verdict["status"] == "confirmed" and ir_only == []


BLEND = """import triton
import triton.language as tl


@triton.jit
def blend(a, b, out, n, split, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.where(offs < split, a + offs, b + offs)
    tl.store(out + offs, tl.load(src, mask=offs < n), mask=offs < n)


@triton.jit
def other(x):
    tl.store(x, 1.0)
"""


def test_a_pointer_choice_is_confirmed_by_the_rejection_at_its_line(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(BLEND)
    rejected = {
        "status": "rejected",
        "file": str(path),
        "kernel": "blend",
        "key": "blend[fp32]",
        "def_line": 5,
        "last_line": 9,
        "stage": "ttadapter",
        "message": "triton-adapter-opt was killed by signal 6",
        "reason": "a pointer chosen at run time (arith.select on pointers)",
        "location": {"file": str(path), "line": 8, "column": 35, "source": "TTIR"},
    }
    verdicts, _ = confirm.judge([rejected])
    [verdict] = [v for v in verdicts if v["code"] == "ASC029"]
    assert verdict["status"] == "confirmed" and verdict["confirmed_by"] == ["blend[fp32]"]
    # a compiler that lowers the same lines accepted the choice
    accepted = _spec(path, "blend", [], [7, 8, 9], def_line=5, last_line=9)
    [verdict] = [v for v in confirm.judge([accepted])[0] if v["code"] == "ASC029"]
    assert verdict["status"] == "contradicted"
    # rejected for another reason, elsewhere: no evidence either way
    elsewhere = {**rejected, "reason": "ub overflow", "location": {"line": 6}}
    [verdict] = [v for v in confirm.judge([elsewhere])[0] if v["code"] == "ASC029"]
    assert verdict["status"] == "not-lowered"
