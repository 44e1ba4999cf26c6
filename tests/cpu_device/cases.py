"""Kernels and checks for the CPU stand-in, run in a subprocess of their own
(``python cases.py NAME...``): installing the stand-in changes torch and triton for
the whole process, which the rest of the test run must not see.

Each case prints one JSON object: what the kernel computed next to what torch
computes, or the error it raised.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def _install():
    if os.environ.get("CASES_WITHOUT_STAND_IN") == "1":
        os.environ["TRITON_INTERPRET"] = "1"
        return None
    from ascend_lint import cpu_device

    return cpu_device.install(os.environ.get("CASES_TARGET", "A2"))


# before torch_npu and triton are imported, as a suite's conftest would do it
_install()

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.language.extra import libdevice  # noqa: E402
from triton.language.math import rsqrt  # noqa: E402

if os.environ.get("CASES_WITHOUT_STAND_IN") != "1":
    import torch_npu
    import triton.language.extra.cann.extension as extension
    import triton.language.extra.cann.libdevice as cann_libdevice

CASES = {}


@triton.jit
def product(a, b):
    return a * b


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _max_error(got, want) -> float:
    return float((got.float() - want.float()).abs().max())


@case
def extract_slice_offsets():

    @triton.jit
    def kernel(x_ptr, out_ptr, N: tl.constexpr, S: tl.constexpr):
        pid = tl.program_id(0)
        values = tl.load(x_ptr + tl.arange(0, N))
        by_int = extension.extract_slice(values, (4,), (S,), (1,))
        by_program = tl.extract_slice(values, [pid * S], [S], [1])
        strided = extension.extract_slice(values, (1,), (S,), (2,))
        base = out_ptr + pid * 3 * S + tl.arange(0, S)
        tl.store(base, by_int)
        tl.store(base + S, by_program)
        tl.store(base + 2 * S, strided)

    x = torch.randn(16, device="npu")
    out = torch.zeros(2, 3, 4)
    kernel[(2,)](x, out, N=16, S=4)
    want = torch.stack([torch.stack([x[4:8], x[p * 4 : p * 4 + 4], x[1:9:2]]) for p in (0, 1)])
    return {"max_error": _max_error(out, want)}


@case
def insert_slice_and_get_element():

    @triton.jit
    def kernel(x_ptr, out_ptr, pick_ptr, M: tl.constexpr, N: tl.constexpr):
        rows = tl.arange(0, M)[:, None]
        cols = tl.arange(0, N)[None, :]
        tile = tl.load(x_ptr + rows * N + cols)
        corner = extension.extract_slice(tile, (1, 2), (2, 2), (1, 1))
        tile = extension.insert_slice(tile, corner * 10.0, (0, 0), (2, 2), (1, 1))
        tl.store(out_ptr + rows * N + cols, tile)
        row = tl.program_id(0) + 2
        tl.store(pick_ptr, extension.get_element(tile, (row, 3)))
        tl.store(pick_ptr + 1, tl.get_element(tile, (0, 1)))

    x = torch.randn(4, 8, device="npu")
    out = torch.zeros(4, 8)
    picked = torch.zeros(2)
    kernel[(1,)](x, out, picked, M=4, N=8)
    want = x.clone()
    want[0:2, 0:2] = x[1:3, 2:4] * 10
    return {
        "max_error": _max_error(out, want),
        "picked": picked.tolist(),
        "want_picked": [float(want[2, 3]), float(want[0, 1])],
    }


@case
def gather_along_axis():

    @triton.jit
    def kernel(x_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rows = tl.arange(0, M)[:, None]
        values = tl.load(x_ptr + rows * N + tl.arange(0, N)[None, :])
        index = tl.load(idx_ptr + rows * K + tl.arange(0, K)[None, :])
        tl.store(out_ptr + rows * K + tl.arange(0, K)[None, :], tl.gather(values, index, 1))

    x = torch.randn(4, 16)
    index = torch.randint(0, 16, (4, 8), dtype=torch.int32)
    out = torch.zeros(4, 8)
    kernel[(1,)](x, index, out, M=4, N=16, K=8)
    return {"max_error": _max_error(out, torch.gather(x, 1, index.long()))}


@case
def gather_index_out_of_range():

    @triton.jit
    def kernel(x_ptr, idx_ptr, out_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(out_ptr + offs, tl.gather(tl.load(x_ptr + offs), tl.load(idx_ptr + offs), 0))

    index = torch.arange(8, dtype=torch.int32)
    index[3] = 8
    kernel[(1,)](torch.randn(8), index, torch.zeros(8), N=8)
    return {}


@case
def math_functions():

    @triton.jit
    def kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs, tl.math.tanh(x))
        tl.store(out_ptr + N + offs, cann_libdevice.tanh(x))
        tl.store(out_ptr + 2 * N + offs, libdevice.tanh(x))
        tl.store(out_ptr + 3 * N + offs, cann_libdevice.log1p(tl.abs(x)))
        tl.store(out_ptr + 4 * N + offs, cann_libdevice.atan2(x, y))
        # a float remainder of loaded values, not index arithmetic
        tl.store(out_ptr + 5 * N + offs, x % y)
        tl.store(out_ptr + 6 * N + offs, cann_libdevice.nearbyint(x * 4))

    x = torch.randn(32) * 3
    y = torch.rand(32) + 0.5
    out = torch.zeros(7, 32)
    kernel[(1,)](x, y, out, N=32)
    want = torch.stack(
        [
            torch.tanh(x),
            torch.tanh(x),
            torch.tanh(x),
            torch.log1p(x.abs()),
            torch.atan2(x, y),
            torch.fmod(x, y),
            torch.round(x * 4),
        ]
    )
    return {"max_error_per_row": (out - want).abs().amax(dim=1).tolist()}


@case
def bf16_arithmetic_and_constants():

    @triton.jit
    def kernel(a_ptr, b_ptr, out_ptr, half_ptr, int_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        a = tl.load(a_ptr + offs)
        b = tl.load(b_ptr + offs)
        bias = tl.full((N,), 0.75, tl.bfloat16)
        result = a * b + bias
        result = tl.maximum(result, -a)
        tl.store(out_ptr + offs, result)
        tl.store(half_ptr + offs, a.to(tl.float16))
        tl.store(int_ptr + offs, (a * 4).to(tl.int32))

    a = torch.randn(64, dtype=torch.bfloat16)
    b = torch.randn(64, dtype=torch.bfloat16)
    out = torch.empty(64, dtype=torch.bfloat16)
    half = torch.empty(64, dtype=torch.float16)
    as_int = torch.empty(64, dtype=torch.int32)
    kernel[(1,)](a, b, out, half, as_int, N=64)
    want = torch.maximum(a * b + torch.tensor(0.75, dtype=torch.bfloat16), -a)
    return {
        "max_error": _max_error(out, want),
        "half_error": _max_error(half, a.to(torch.float16)),
        "int_equal": bool(torch.equal(as_int, (a * 4).to(torch.int32))),
    }


@case
def small_dot():

    @triton.jit
    def kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
        b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
        tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b))

    errors = {}
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.randn(2, 8, dtype=dtype)
        b = torch.randn(8, 4, dtype=dtype)
        c = torch.zeros(2, 4)
        kernel[(1,)](a, b, c, M=2, N=4, K=8)
        errors[str(dtype)] = _max_error(c, a.float() @ b.float())
    return {"max_error": errors}


@case
def negative_axis_reductions():

    @triton.jit
    def kernel(x_ptr, max_ptr, prod_ptr, scan_ptr, M: tl.constexpr, N: tl.constexpr):
        rows = tl.arange(0, M)[:, None]
        cols = tl.arange(0, N)[None, :]
        x = tl.load(x_ptr + rows * N + cols)
        tl.store(max_ptr + tl.arange(0, M), tl.max(x, axis=-1))
        tl.store(prod_ptr + tl.arange(0, M), tl.reduce(x, -1, product))
        tl.store(scan_ptr + rows * N + cols, tl.associative_scan(x, -1, product))

    x = torch.rand(4, 8) + 0.5
    maxima, products, scans = torch.zeros(4), torch.zeros(4), torch.zeros(4, 8)
    kernel[(1,)](x, maxima, products, scans, M=4, N=8)
    return {
        "max_error": _max_error(maxima, x.amax(-1)),
        "prod_error": _max_error(products, x.prod(-1)),
        "scan_error": _max_error(scans, x.cumprod(-1)),
    }


@case
def boolean_invert():
    # `~mask` on a comparison's booleans (sgl-kernel-npu's mrope section masks): the
    # Ascend semantic builds the all-ones value of int1, which the interpreter lacks
    @triton.jit
    def kernel(x_ptr, out_ptr, N: tl.constexpr):
        offsets = tl.arange(0, N)
        low = (offsets % 3 == 1) & (offsets <= 6)
        rest = ~low
        tl.store(out_ptr + offsets, tl.where(rest, tl.load(x_ptr + offsets), 0.0))

    x = torch.randn(16)
    out = torch.empty(16)
    kernel[(1,)](x, out, N=16)
    index = torch.arange(16)
    want = torch.where(~((index % 3 == 1) & (index <= 6)), x, torch.zeros(()))
    return {"max_error": _max_error(out, want)}


@case
def builtin_imported_by_name():
    # mojo_opset's layernorm: `from triton.language.math import rsqrt`, then rsqrt(v)
    @triton.jit
    def kernel(x_ptr, out_ptr, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(out_ptr + offsets, rsqrt(tl.load(x_ptr + offsets)))

    x = torch.rand(16) + 0.5
    out = torch.empty(16)
    kernel[(1,)](x, out, N=16)
    return {"max_error": _max_error(out, torch.rsqrt(x))}


@case
def npu_generator():
    # vLLM-Ascend's top-k/top-p tests: Generator(device="npu").manual_seed(42)
    made = torch.Generator(device="npu").manual_seed(42)
    sampled = torch.randn(4, generator=made, device="npu")
    want = torch.randn(4, generator=torch.Generator().manual_seed(42))
    return {
        "max_error": _max_error(sampled, want),
        "device": str(made.device),
        "isinstance": [
            isinstance(made, torch.Generator),
            isinstance(torch.default_generator, torch.Generator),
        ],
    }


@case
def launch_options_and_driver():

    @triton.jit
    def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        for block in range(tl.program_id(0), tl.cdiv(n, BLOCK), tl.num_programs(0)):
            offs = block * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    device = torch.npu.current_device()
    properties = triton.runtime.driver.active.utils.get_device_properties(device)
    x = torch.randn(1000, device="npu")
    out = torch.empty_like(x)
    options = {"multibuffer": True, "enable_auto_bind_sub_block": False, "sync_solver": True}
    kernel[(properties["num_vectorcore"],)](x, out, 1000, BLOCK=64, **options)
    unknown = None
    try:
        kernel[(1,)](x, out, 1000, BLOCK=64, not_an_option=1)
    except Exception as exc:
        unknown = f"{type(exc).__name__}: {exc}"
    target = triton.runtime.driver.active.get_current_target()
    return {
        "properties": properties,
        "target": [target.backend, target.arch],
        "max_error": _max_error(out, x + 1),
        "unknown_keyword": unknown,
    }


@case
def libentry_launch():
    from triton.runtime.libentry import libentry

    @libentry()
    @triton.jit
    def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    x = torch.randn(100, device="npu")
    out = torch.empty_like(x)
    kernel[(4,)](x, out, 100, BLOCK=32)
    return {"max_error": _max_error(out, x * 2)}


@case
def torch_npu_stand_in():

    x = torch.ones(3, device="npu")
    moved = torch.arange(4).to("npu:0")
    on_device = torch.zeros(2, device=torch.device("npu", 0))
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    with torch.npu.stream(torch.npu.Stream()):
        torch.npu.synchronize()
    end.record()
    try:
        torch_npu.npu_rms_norm(x, x)
        operator_error = None
    except NotImplementedError as exc:
        operator_error = str(exc)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ops.load_library("/nonexistent/libcustom_ops.so")
    import importlib.util

    torch.npu.set_device(x.device)  # an "npu" tensor's device is the CPU here
    try:
        torch.npu.set_device(1)
        second_device = None
    except ValueError as exc:
        second_device = str(exc)
    return {
        "devices": [str(x.device), str(moved.device), str(on_device.device)],
        "npu_method": str(torch.ones(2).npu().device),
        "device_count": torch.npu.device_count(),
        "available": torch.npu.is_available(),
        "name": torch.npu.get_device_name(0),
        "elapsed_ms": start.elapsed_time(end),
        "memory": [torch.npu.memory_allocated(), torch.npu.max_memory_allocated()],
        "mem_total": torch.npu.mem_get_info()[1],
        "same_module": torch_npu.npu is torch.npu,
        "operator_error": operator_error,
        "load_library_warning": [str(w.message) for w in caught],
        "second_device": second_device,
        "find_spec": importlib.util.find_spec("torch_npu") is not None,
    }


@case
def not_on_cpu_errors():

    @triton.jit
    def sub_vector(out_ptr):
        tl.store(out_ptr, extension.sub_vec_id())

    @triton.jit
    def outside(x_ptr, out_ptr, N: tl.constexpr):
        values = tl.load(x_ptr + tl.arange(0, N))
        tl.store(out_ptr + tl.arange(0, 4), tl.extract_slice(values, [N - 2], [4], [1]))

    @triton.jit
    def barrier(out_ptr):
        tl.sync_block_all("all", 0)
        tl.store(out_ptr + tl.program_id(0), 1.0)

    errors = {}
    for name, run in {
        "sub_vec_id": lambda: sub_vector[(1,)](torch.zeros(1)),
        "outside": lambda: outside[(1,)](torch.zeros(8), torch.zeros(4), N=8),
        "barrier": lambda: barrier[(2,)](torch.zeros(2)),
    }.items():
        try:
            run()
            errors[name] = None
        except Exception as exc:
            cause = exc.__cause__ or exc
            errors[name] = f"{type(cause).__name__}: {cause}"
    return errors


@case
def install_record():
    from ascend_lint import cpu_device

    first = cpu_device.installed()
    again = cpu_device.install(first.target.name)
    try:
        cpu_device.install("A5" if first.target.name != "A5" else "A2")
        conflict = None
    except ValueError as exc:
        conflict = str(exc)
    return {
        "same_record": again is first,
        "replaced": sorted(first.replaced),
        "describe": first.describe(),
        "conflict": conflict,
        "env": os.environ.get(cpu_device.ENV_VAR),
        "arch_env": os.environ.get(cpu_device.NPU_ARCH_ENV),
    }


def main(names: list[str]) -> int:
    for name in names:
        try:
            result = {"case": name, "ok": True, **CASES[name]()}
        except Exception as exc:
            cause = exc.__cause__ or exc
            result = {
                "case": name,
                "ok": False,
                "error": f"{type(cause).__name__}: {cause}",
                "traceback": traceback.format_exc()[-3000:],
            }
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(CASES)))
