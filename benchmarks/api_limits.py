"""Which of the API-limit candidates (ASC031) triton-ascend rejects or miscompiles, and
whether upstream Triton accepts the same kernel.

    python benchmarks/api_limits.py lower  [--out benchmarks/API_LIMITS.md]   # triton-ascend, CPU
    python benchmarks/api_limits.py launch [--out FILE.json]                  # upstream, CUDA GPU

Each case is a small kernel with one use of an API, next to a control that differs only
in that use. ``lower`` runs triton-ascend's own front end on this machine (``ttir`` and
``ttadapter``, as the compile gate does) and records, per case, ok or the stage and the
error; for cases that lower, what the lowered IR shows where the case is about a
miscompile. ``launch`` runs each kernel on a CUDA device with upstream Triton, checks
its output against torch, and records ok, wrong (with the values) or the error; the JSON
it writes is passed back to ``lower --upstream FILE.json`` to print both columns in one
table.

A case is kept as an ASC031 row only where triton-ascend rejects or miscompiles it and
upstream runs it correctly; the others are listed with the reason they are not rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time

import triton
import triton.language as tl

BLOCK = 16


# -- the cases -------------------------------------------------------------------------------
@triton.jit
def load_other_no_mask(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, other=0.0))


@triton.jit
def load_other_with_mask(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < BLOCK, other=0.0))


@triton.jit
def cat_two_dims(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    a = tl.load(x + o[:, None] * BLOCK + o[None, :])
    b = tl.load(x + BLOCK * BLOCK + o[:, None] * BLOCK + o[None, :])
    c = tl.cat(a, b, can_reorder=True)
    tl.store(y + tl.arange(0, 2 * BLOCK)[:, None] * BLOCK + o[None, :], c)


@triton.jit
def cat_one_dim(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    c = tl.cat(tl.load(x + o), tl.load(x + BLOCK + o), can_reorder=True)
    tl.store(y + tl.arange(0, 2 * BLOCK), c)


@triton.jit
def sort_first_dim(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    a = tl.load(x + o[:, None] * BLOCK + o[None, :])
    tl.store(y + o[:, None] * BLOCK + o[None, :], tl.sort(a, dim=0))


@triton.jit
def sort_last_dim(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    a = tl.load(x + o[:, None] * BLOCK + o[None, :])
    tl.store(y + o[:, None] * BLOCK + o[None, :], tl.sort(a, dim=1))


@triton.jit
def reshape_can_reorder(x, y, BLOCK: tl.constexpr):
    a = tl.load(x + tl.arange(0, BLOCK * BLOCK))
    b = tl.reshape(a, (BLOCK, BLOCK), can_reorder=True)
    tl.store(y + tl.arange(0, BLOCK), tl.sum(b, axis=1))


@triton.jit
def reshape_in_order(x, y, BLOCK: tl.constexpr):
    a = tl.load(x + tl.arange(0, BLOCK * BLOCK))
    b = tl.reshape(a, (BLOCK, BLOCK))
    tl.store(y + tl.arange(0, BLOCK), tl.sum(b, axis=1))


@triton.jit
def atomic_max_vector(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.atomic_max(y + o, tl.load(x + o))


@triton.jit
def int_vector_to_pointer(addresses, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = tl.load(addresses + o).to(tl.pointer_type(tl.float32))
    tl.store(y + o, tl.load(p))  # noqa: ASC027 (the gather is the construct this case probes)


@triton.jit
def int_scalar_to_pointer(addresses, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = tl.load(addresses).to(tl.pointer_type(tl.float32))
    tl.store(y + o, tl.load(p + o))


@triton.jit
def pointer_bitcast_after_offset(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = (x + n).to(tl.pointer_type(tl.uint8), bitcast=True)
    tl.store(y + o, tl.load(p + o).to(tl.float32))


@triton.jit
def pointer_bitcast_at_base(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = x.to(tl.pointer_type(tl.uint8), bitcast=True)
    tl.store(y + o, tl.load(p + n * 4 + o).to(tl.float32))


@triton.jit
def scalar_argument(y, value):
    tl.store(y, value.to(tl.float32))


@triton.jit
def annotated_half_argument(y, value: tl.float16):
    tl.store(y, value.to(tl.float32))


# name, kernel, signature (triton's spelling; constexprs as values), control or None,
# what the case is about
CASES = [
    ("load-other-without-mask", load_other_no_mask, {"x": "*fp32", "y": "*fp32"}, None),
    ("load-other-with-mask", load_other_with_mask, {"x": "*fp32", "y": "*fp32"}, "control"),
    ("cat-2d", cat_two_dims, {"x": "*fp32", "y": "*fp32"}, None),
    ("cat-1d", cat_one_dim, {"x": "*fp32", "y": "*fp32"}, "control"),
    ("sort-dim-0", sort_first_dim, {"x": "*fp32", "y": "*fp32"}, None),
    ("sort-last-dim", sort_last_dim, {"x": "*fp32", "y": "*fp32"}, "control"),
    ("reshape-can-reorder", reshape_can_reorder, {"x": "*fp32", "y": "*fp32"}, None),
    ("reshape-in-order", reshape_in_order, {"x": "*fp32", "y": "*fp32"}, "control"),
    ("atomic-max-fp16", atomic_max_vector, {"x": "*fp16", "y": "*fp16"}, None),
    ("atomic-max-bf16", atomic_max_vector, {"x": "*bf16", "y": "*bf16"}, None),
    ("atomic-max-fp32", atomic_max_vector, {"x": "*fp32", "y": "*fp32"}, "control"),
    ("int-vector-to-pointer", int_vector_to_pointer, {"addresses": "*i64", "y": "*fp32"}, None),
    (
        "int-scalar-to-pointer",
        int_scalar_to_pointer,
        {"addresses": "*i64", "y": "*fp32"},
        "control",
    ),
    (
        "pointer-bitcast-after-offset",
        pointer_bitcast_after_offset,
        {"x": "*fp32", "y": "*fp32", "n": "i32"},
        None,
    ),
    (
        "pointer-bitcast-at-base",
        pointer_bitcast_at_base,
        {"x": "*fp32", "y": "*fp32", "n": "i32"},
        "control",
    ),
    ("fp16-scalar-argument", scalar_argument, {"y": "*fp32", "value": "fp16"}, None),
    ("bf16-scalar-argument", scalar_argument, {"y": "*fp32", "value": "bf16"}, None),
    ("fp32-scalar-argument", scalar_argument, {"y": "*fp32", "value": "fp32"}, "control"),
    ("float16-annotated-argument", annotated_half_argument, {"y": "*fp32", "value": None}, None),
]


def _constexprs(fn) -> dict:
    return {"BLOCK": BLOCK} if "BLOCK" in fn.arg_names else {}


# -- triton-ascend's front end (this machine) --------------------------------------------------
def lower_case(fn, signature: dict) -> dict:
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource, make_backend

    target = GPUTarget("npu", os.environ.get("ASCEND_LINT_NPU_ARCH", "Ascend910B4"), 0)
    backend = make_backend(target)
    constexprs = _constexprs(fn)
    full = {k: ("fp32" if v is None else v) for k, v in signature.items()}
    if any(v is None for v in signature.values()):
        # what the JIT itself would give an annotated parameter: ask its binder
        for param in fn.params:
            if signature.get(param.name, "") is None:
                full[param.name] = param.annotation_type or "fp32 (annotation ignored)"
        return {"status": "signature", "detail": f"the JIT types it {full['value']}"}
    full.update({k: "constexpr" for k in constexprs})
    src = ASTSource(fn, full, constexprs)
    options = backend.parse_options({})
    stages: dict = {}
    backend.add_stages(stages, options)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        module = src.make_ir(
            options, backend.get_codegen_implementation(), backend.get_module_map(), context
        )
    except Exception as exc:
        return {"status": "rejected", "stage": "ttir", "detail": _last_line(exc)}
    metadata = {"hash": src.hash(), "target": target, **options.__dict__}
    for stage in ("ttir", "ttadapter"):
        try:
            module = stages[stage](module, metadata)
        except Exception as exc:
            stderr = getattr(exc, "stderr", None)
            text = stderr.decode(errors="replace") if stderr else str(exc)
            return {"status": "rejected", "stage": stage, "detail": _first_error(text)}
    return {"status": "ok", "ir": _ir_note(str(module), signature)}


def _last_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    inner = exc.__cause__
    if inner is not None:
        text.append(f"{type(inner).__name__}: {inner}".splitlines()[0])
    return text[-1][:200]


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else "failed"


def _ir_note(text: str, signature: dict) -> str:
    """What the lowered IR says where a case is about a miscompile."""
    notes = []
    cast = re.search(
        r"unrealized_conversion_cast %arg\d+ : memref<\?x(\w+)> to memref<\?x(\w+)>", text
    )
    if cast:
        offset = re.search(r"memref\.reinterpret_cast %\d+ to offset: \[([^\]]*)\]", text)
        value = offset.group(1) if offset else "?"
        made = re.search(rf"^\s*{re.escape(value)} = ([\w.]+ [^:]*)", text, re.M)
        notes.append(
            f"memref<?x{cast.group(1)}> viewed as memref<?x{cast.group(2)}>, offset "
            f"`{made.group(1).strip() if made else value}` counted in {cast.group(2)}"
        )
    half = [p for p, t in signature.items() if t in ("fp16", "bf16")]
    if half:
        args = re.search(r"func\.func @\w+\(([^)]*)\)", text)
        kinds = re.findall(r": (f16|bf16)\b", args.group(1)) if args else []
        notes.append(f"kernel parameter lowered as {', '.join(kinds) or '?'}")
    return "; ".join(notes)


def launcher_scalar_types() -> dict:
    """How triton-ascend's generated launcher declares each scalar argument type."""
    import inspect

    from triton.backends.ascend import driver

    source = inspect.getsource(driver)
    found = {}
    for ty in ("fp16", "bf16", "fp32"):
        match = re.search(rf'"{ty}": "(\w+)"', source)
        found[ty] = match.group(1) if match else "?"
    return found


# -- upstream Triton on a CUDA device ----------------------------------------------------------
def launch_case(name: str, fn, signature: dict) -> dict:
    import torch

    dev = "cuda"
    try:
        if name.endswith("scalar-argument"):
            from triton.compiler import ASTSource

            kind = signature["value"]
            kernel = triton.compile(ASTSource(fn=fn, signature={"y": "*fp32", "value": kind}))
            out = torch.zeros(1, dtype=torch.float32, device=dev)
            kernel[(1, 1, 1)](out, 1.5)
            torch.cuda.synchronize()
            got = out.item()
            return {"status": "ok" if got == 1.5 else "wrong", "detail": f"1.5 -> {got}"}
        if name == "float16-annotated-argument":
            out = torch.zeros(1, dtype=torch.float32, device=dev)
            compiled = fn[(1,)](out, 1.5)
            torch.cuda.synchronize()
            sig = getattr(compiled, "src", None)
            sig = getattr(sig, "signature", None) or getattr(compiled, "signature", {})
            return {"status": "ok", "detail": f"1.5 -> {out.item()}; signature {dict(sig)}"}
        return _launch_tensor_case(name, fn, signature, torch, dev)
    except Exception as exc:
        return {"status": "rejected", "detail": _last_line(exc)}


def _launch_tensor_case(name, fn, signature, torch, dev) -> dict:
    dtypes = {"*fp32": torch.float32, "*fp16": torch.float16, "*bf16": torch.bfloat16}
    n = BLOCK
    x = torch.randn(4 * n * n, device=dev)
    if name.startswith("atomic-max"):
        dt = dtypes[signature["x"]]
        xs, ys = x[:n].to(dt), torch.zeros(n, device=dev, dtype=dt)
        expect = torch.maximum(xs, ys)
        fn[(1,)](xs, ys, BLOCK=n)
        return _compare(ys, expect)
    if name.startswith("int-"):
        data = torch.arange(n, dtype=torch.float32, device=dev) + 0.5
        addresses = torch.tensor(
            [data.data_ptr() + 4 * i for i in range(n)], dtype=torch.int64, device=dev
        )
        y = torch.zeros(n, device=dev)
        fn[(1,)](addresses, y, BLOCK=n)
        return _compare(y, data)
    if name.startswith("pointer-bitcast"):
        y = torch.zeros(n, device=dev)
        fn[(1,)](x, y, 3, BLOCK=n)
        expect = x.view(torch.uint8)[12 : 12 + n].to(torch.float32)
        return _compare(y, expect)
    y = torch.zeros(4 * n * n, device=dev)
    fn[(1,)](x, y, BLOCK=n)
    return {"status": "ok", "detail": "ran"}


def _compare(got, expect) -> dict:
    import torch

    same = torch.equal(got.float().cpu(), expect.float().cpu())
    return {"status": "ok" if same else "wrong", "detail": "" if same else f"{got[:4].tolist()}"}


# -- report ------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("lower", "launch"))
    p.add_argument("--out", help="write the table (lower) or the JSON (launch) here")
    p.add_argument("--upstream", help="lower: the JSON a `launch` run wrote, for its column")
    args = p.parse_args(argv)
    if args.mode == "launch":
        import torch

        results = {name: launch_case(name, fn, sig) for name, fn, sig, _ in CASES}
        payload = {
            "triton": triton.__version__,
            "torch": torch.__version__,
            "device": torch.cuda.get_device_name(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "results": results,
        }
        text = json.dumps(payload, indent=1)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        print(text)
        return 0
    os.environ["TRITON_INTERPRET"] = "0"
    upstream = {}
    if args.upstream:
        with open(args.upstream, encoding="utf-8") as f:
            upstream = json.load(f)
    lines = [
        "# API-limit candidates: triton-ascend's front end vs upstream Triton",
        "",
        "* command: `python benchmarks/api_limits.py lower --upstream <launch JSON>`; the "
        "upstream column from `python benchmarks/api_limits.py launch` on a CUDA GPU",
        f"* triton-ascend 3.2.0 front end (ttir -> ttadapter on CPU, "
        f"{os.environ.get('ASCEND_LINT_NPU_ARCH', 'Ascend910B4')}), Python "
        f"{platform.python_version()}; date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
    ]
    if upstream:
        lines.append(
            f"* upstream: triton {upstream['triton']}, torch {upstream['torch']}, "
            f"{upstream['device']}, {upstream['date']}"
        )
    else:
        lines.append(
            "* upstream column: not measured in this run (`launch` needs a CUDA GPU); "
            "what upstream does is cited in rules/asc031/ASC031.md from its sources and issues"
        )
    types = launcher_scalar_types()
    lines += [
        "* triton-ascend 3.2.0's generated launcher declares scalar arguments as: "
        + ", ".join(f"{k} -> `{v}`" for k, v in types.items()),
        "",
        "| case | control? | triton-ascend 3.2.0 | upstream (CUDA) |",
        "| --- | --- | --- | --- |",
    ]
    for name, fn, sig, control in CASES:
        got = lower_case(fn, sig)
        here = got["status"] + (f" ({got['stage']})" if "stage" in got else "")
        detail = got.get("detail") or got.get("ir") or ""
        if detail:
            here += f": {detail}"
        up = upstream.get("results", {}).get(name)
        there = (
            "-" if up is None else up["status"] + (f": {up['detail']}" if up.get("detail") else "")
        )
        lines.append(f"| {name} | {'yes' if control else ''} | {_cell(here)} | {_cell(there)} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    print(text)
    return 0


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


if __name__ == "__main__":
    sys.exit(main())
