"""The compile gate's IR confirmation of the findings judged per launched kernel:
ASC026 by the mode the kernel was lowered in, ASC031 by the front end's rejection."""

from __future__ import annotations

from ascend_lint.lowering import ir_facts
from ascend_lint.pytest_plugin import confirm

VECTOR_ON_AI_CORES = """import triton
import triton.language as tl
from triton.runtime import driver


@triton.jit
def conv(x, n, BLOCK: tl.constexpr):
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        tl.store(x + t * BLOCK + tl.arange(0, BLOCK), 0.0)


def launch(x, n):
    cores = driver.active.utils.get_device_properties(0)["num_aicore"]
    conv[(cores,)](x, n, BLOCK=64)
"""

VECTOR_CAST = """import triton
import triton.language as tl


@triton.jit
def gather(table, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = tl.load(table + o).to(tl.pointer_type(tl.float32))
    tl.store(y + o, tl.load(p))
"""

LOWERED = """module {
  func.func @conv(%arg0: memref<?xi8>, %arg2: memref<?xf32>) attributes {global_kernel = "local", mix_mode = "aiv", parallel_mode = "simd"} {
    return
  }
}
"""


def _spec(path, kernel, status="ok", mode=None, lines=(), message=""):
    spec = {"status": status, "file": str(path), "kernel": kernel, "key": f"{kernel}[{mode}]"}
    spec.update(def_line=6, last_line=9)
    if status == "ok":
        spec["ir"] = {"facts": [], "lines_seen": list(lines), "branch_copies": {}, "mix_mode": mode}
    else:
        spec["message"] = message
    return spec


def _only(verdicts, code):
    found = [v for v in verdicts if v["code"] == code]
    assert len(found) == 1, verdicts
    return found[0]


def test_the_ir_reader_takes_the_kernels_mode():
    assert ir_facts.parse(LOWERED, "/src/k.py").mix_mode == "aiv"
    assert ir_facts.parse(LOWERED.replace('"aiv"', '"mix"'), "/src/k.py").mix_mode == "mix"
    assert ir_facts.parse("module {\n}\n", "/src/k.py").mix_mode is None


def test_a_vector_kernel_on_ai_cores_is_confirmed_by_an_aiv_lowering(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(VECTOR_ON_AI_CORES)
    verdict = _only(confirm.judge([_spec(path, "conv", mode="aiv")])[0], "ASC026")
    assert verdict["status"] == "confirmed" and verdict["expects"] == "vector"
    assert verdict["kernel"] == "conv" and verdict["line"] == 14


def test_the_same_finding_is_contradicted_when_the_kernel_lowers_to_the_cube(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(VECTOR_ON_AI_CORES)
    verdict = _only(confirm.judge([_spec(path, "conv", mode="mix")])[0], "ASC026")
    assert verdict["status"] == "contradicted" and verdict["contradicted_by"] == ["conv[mix]"]
    # a kernel of the file that did not lower says nothing
    rejected = _spec(path, "conv", status="rejected", message="ValueError: something else")
    assert _only(confirm.judge([rejected])[0], "ASC026")["status"] == "not-lowered"


def test_an_integer_vector_cast_is_confirmed_by_the_rejection_it_predicts(tmp_path):
    path = tmp_path / "g.py"
    path.write_text(VECTOR_CAST)
    message = "'tensor.extract' op incorrect number of indices for extract_element"
    rejected = _spec(path, "gather", status="rejected", message=message)
    verdict = _only(confirm.judge([rejected])[0], "ASC031")
    assert verdict["status"] == "confirmed" and verdict["expects"] == "rejected"
    # lowered through the line instead: the prediction was wrong
    lowered = _spec(path, "gather", mode="aiv", lines=(8, 9))
    verdict = _only(confirm.judge([lowered])[0], "ASC031")
    assert verdict["status"] == "contradicted"
    # rejected for another reason: nothing to say either way
    other = _spec(path, "gather", status="rejected", message="ub overflow")
    assert _only(confirm.judge([other])[0], "ASC031")["status"] == "not-lowered"
