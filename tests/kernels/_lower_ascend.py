"""Lower kernel specialisations through the triton-ascend frontend (no CANN needed).

Run as a script in a fresh process WITHOUT TRITON_INTERPRET (the interpreter would
replace @triton.jit functions by Python callables).  Reads a JSON list of specs on
stdin, writes one JSON result per spec on stdout:

    spec   = {"module": "reference_kernels.chunk_o", "kernel": "chunk_fwd_kernel_o",
              "signature": {"q": "*fp16", ...}, "constexprs": {"BT": 64, "g": null, ...}}
    result = {"key": ..., "ok": bool, "stages": ["ttir", "ttadapter"], "error": str}

Stages run: AST -> TTIR (triton's own passes) -> ``ttadapter`` (triton-adapter-opt,
shipped in the wheel: TTIR -> linalg/HIVM).  The remaining ``npubin`` stage needs the
CANN bishengir compiler and is not attempted.
"""

import importlib
import json
import os
import sys
import traceback

if os.environ.get("TRITON_INTERPRET"):
    sys.exit("run without TRITON_INTERPRET")

from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import ASTSource, make_backend

STAGES = ("ttir", "ttadapter")


def lower(spec, backend, options, stages, target):
    fn = getattr(importlib.import_module(spec["module"]), spec["kernel"])
    constexprs = dict(spec["constexprs"])
    # triton 3.2 binds the signature positionally: list every parameter, in order.
    types = {**spec["signature"], **{name: "constexpr" for name in constexprs}}
    unknown = set(types) - set(fn.arg_names)
    absent = set(fn.arg_names) - set(types)
    if unknown or absent:
        raise ValueError(
            f"spec does not match the kernel: unknown {sorted(unknown)}, missing {sorted(absent)}"
        )
    signature = {name: types[name] for name in fn.arg_names}
    src = ASTSource(fn, signature, constexprs)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = src.make_ir(
        options, backend.get_codegen_implementation(), backend.get_module_map(), context
    )
    metadata = {"hash": src.hash(), "target": target, **options.__dict__}
    done = []
    for stage in STAGES:
        module = stages[stage](module, metadata)
        done.append(stage)
    text = str(module)
    if "func.func" not in text:
        raise RuntimeError("ttadapter produced no linalg function:\n" + text[:2000])
    return done


def main():
    specs = json.load(sys.stdin)
    target = GPUTarget("npu", os.environ.get("ASCEND_LINT_NPU_ARCH", "Ascend910B4"), 0)
    backend = make_backend(target)
    options = backend.parse_options({})
    stages = {}
    backend.add_stages(stages, options)
    missing = [s for s in STAGES if s not in stages]
    if missing:
        sys.exit(f"triton backend has no stages {missing}; it has {list(stages)}")
    for spec in specs:
        result = {"key": spec["key"], "ok": False, "stages": [], "error": ""}
        try:
            result["stages"] = lower(spec, backend, options, stages, target)
            result["ok"] = True
        except Exception as exc:
            detail = getattr(exc, "stderr", None)
            detail = detail.decode(errors="replace") if isinstance(detail, bytes) else ""
            result["error"] = (detail + "\n" + traceback.format_exc())[-4000:]
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
