"""``ascend-lint compile PATH::KERNEL``: lower one specialisation of one kernel through the
Ascend compiler front end on this machine (no NPU, no test), and say whether its tiles
fit the Unified Buffer.

The kernel goes through the compile gate's own worker (``lowering/worker.py``):
triton-ascend's ``ttir`` and ``ttadapter`` stages, then the UB bounds read from the
lowered IR (``lowering/ub_verdict.py``).  The specialisation is described on the
command line instead of recorded from a launch: ``--constexpr NAME=VALUE`` for each
``tl.constexpr`` without a default, ``--arg NAME=TYPE`` for the runtime arguments
(``*bf16``, ``i64``, ``fp32``...).  Which runtime parameters are pointers comes from the
kernel index (a parameter the kernel loads, stores or builds a block pointer from,
directly or through locals computed by ``+``/``-``); pointers default to ``*fp32`` and
the other runtime parameters to ``i32``.  Only the file's syntax is read in this process;
the worker imports the kernel's module, or, when that module does not import on this
machine (vLLM, ``torch_npu``, a package ``__init__`` with heavy imports), loads the
kernel from its source with the failing imports stood in, and says which
(``lowering.kernel_loading``).

Exit codes: 0 fits or uncertain, 1 overflows or rejected, 2 usage error (or the kernel
could not be loaded), 3 no verdict in time (``--timeout``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from pathlib import Path

EXIT_OK, EXIT_FAILS, EXIT_ERROR, EXIT_TIMEOUT = 0, 1, 2, 3
VERDICTS = ("fits", "overflows", "uncertain", "rejected")

# triton's spelling of an element type -> torch's (the worker builds stand-in tensors)
POINTER_ELEMENTS = {
    "fp32": "float32",
    "f32": "float32",
    "fp16": "float16",
    "f16": "float16",
    "bf16": "bfloat16",
    "fp64": "float64",
    "i1": "bool",
    "i8": "int8",
    "u8": "uint8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
}
# a runtime scalar of each type, chosen so that triton specialises it as the type alone:
# not 1 (specialised to a constant) and not a multiple of 16 (a divisibility hint)
# the dtypes `--constexpr NAME=tl.<dtype>` accepts
_TL_DTYPES = (
    "int1",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8e4nv",
    "float8e5",
    "float8e4b15",
    "float8e4b8",
    "float8e5b16",
)
SCALAR_VALUES = {"i32": 3, "i64": 2**33 + 3, "fp32": 1.5, "f32": 1.5, "i1": True}
STAGE_NAMES = ("ttir", "ttadapter")


class UsageError(Exception):
    pass


def parser(prog: str = "ascend-lint compile") -> argparse.ArgumentParser:
    from ascend_lint.usage import UsageParser

    p = UsageParser(
        prog=prog,
        description="Lower one specialisation of a kernel through the Ascend compiler front "
        "end (triton-ascend's ttir and ttadapter stages, on CPU) and estimate its Unified "
        "Buffer use from the lowered IR: fits, overflows, uncertain, or rejected by the "
        "compiler. Exit 0 fits/uncertain, 1 overflows/rejected, 2 usage error or a kernel "
        "that cannot be loaded, 3 no verdict within --timeout.",
    )
    p.add_argument("kernel", metavar="PATH::KERNEL", help="the kernel's file and function name")
    p.add_argument(
        "--constexpr",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a tl.constexpr parameter's value (repeatable): an int, a float, True/False, "
        "None, a dtype such as tl.float16, or a string (reduction=mean)",
    )
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=TYPE",
        help="a runtime argument's type (repeatable): *fp32, *bf16, *fp16, *i8, *i32, *i64, "
        "i32, i64, fp32, i1, or None for an optional argument the launch leaves None "
        "(bias=None); pointers default to *fp32, other runtime arguments to i32",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a compile option of the launch (repeatable), as triton-ascend takes it: "
        "multibuffer=False (the UB bounds then count DMA buffers once), ...",
    )
    p.add_argument(
        "--grid",
        default="1",
        metavar="X[,Y[,Z]]",
        help="the launch grid (default 1); the launch check rejects more than 65,535 programs",
    )
    p.add_argument(
        "--target",
        default=None,
        help="the UB to check against: ascend910b (default; 910B/A2), ascend910_93 (A3), "
        "ascend910_95 (A5), or an alias; default: `target` in [tool.ascend-lint]",
    )
    p.add_argument("--output-format", choices=("text", "json"), default="text")
    p.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=300.0,
        metavar="SECONDS",
        help="longest the lowering may take (default 300)",
    )
    return p


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds above 0")
    return value


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        plan = _plan(args)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    from ascend_lint.lowering.client import WorkerClient

    client = WorkerClient(timeout_s=args.timeout, cwd=os.getcwd())
    try:
        answer = client.compile(plan["request"])
    finally:
        client.close()
    result = _result(plan, answer)
    if args.output_format == "json":
        print(json.dumps(result, indent=2))
    else:
        _print_text(result)
    if result["verdict"] is None:
        timed_out = any(s["name"] == "timeout" for s in result["stages"])
        return EXIT_TIMEOUT if timed_out else EXIT_ERROR
    return EXIT_FAILS if result["verdict"] in ("overflows", "rejected") else EXIT_OK


# -- the request ----------------------------------------------------------------------------
def _plan(args) -> dict:
    path_text, sep, kernel_name = args.kernel.rpartition("::")
    if not sep or not path_text or not kernel_name:
        raise UsageError(f"{args.kernel!r}: write PATH::KERNEL, e.g. kernels/norm.py::rms_kernel")
    path = Path(path_text).resolve()
    if not path.is_file():
        raise UsageError(f"{path_text}: no such file")
    target = _target(args.target, path)
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"{path_text}:{exc.lineno}: cannot parse: {exc.msg}") from exc
    from ascend_lint.index import KernelIndex

    index = KernelIndex.build(tree)
    fn = next((k for k in index.kernels if k.name == kernel_name and k.owner is None), None)
    if fn is None:
        known = ", ".join(sorted(k.name for k in index.kernels)) or "none"
        raise UsageError(
            f"{path_text} has no @triton.jit function {kernel_name!r} (it has: {known})"
        )
    defaults = _defaults(fn.node)
    constexprs = _pairs(args.constexpr, "--constexpr")
    arg_types = _pairs(args.arg, "--arg")
    options = _pairs(args.option, "--option")
    for name in options:
        if name in fn.params:
            raise UsageError(f"{name} is a parameter of {kernel_name}, not a compile option")
    for name in list(constexprs) + list(arg_types):
        if name not in fn.params:
            raise UsageError(
                f"{kernel_name} has no parameter {name!r} (it has: {', '.join(fn.params)})"
            )
    for name in arg_types:
        if name in fn.constexpr_params:
            raise UsageError(f"{name} is a tl.constexpr: give it with --constexpr {name}=VALUE")
    for name in constexprs:
        if name not in fn.constexpr_params:
            hint = f" (or --arg {name}=None)" if constexprs[name] == "None" else ""
            raise UsageError(
                f"{name} is a runtime argument: give its type with --arg {name}=TYPE{hint}"
            )
    pointers = index.values.of(fn).pointers
    kwargs: dict = {}
    signature: dict[str, str] = {}
    defaulted: list[str] = []  # runtime parameters whose type no --arg gave
    for name in fn.params:
        if name in fn.constexpr_params:
            if name in constexprs:
                kwargs[name] = _constexpr_value(name, constexprs[name])
            elif name not in defaults:
                raise UsageError(
                    f"{name} is a tl.constexpr without a default: give --constexpr {name}=VALUE"
                )
            continue
        if name in defaults and name not in arg_types:
            continue  # the kernel's own default, as a launch that leaves it out
        if name not in arg_types:
            defaulted.append(name)
        typ = arg_types.get(name) or ("*fp32" if name in pointers else "i32")
        signature[name] = typ
        kwargs[name] = _runtime_value(name, typ)
    for name, text in options.items():
        kwargs[name] = _constexpr_value(name, text)
    multibuffer = kwargs.get("multibuffer") if "multibuffer" in options else None
    request = {
        "module": _module_name(path),
        "qualname": kernel_name,
        "file": str(path),
        "sys_path": _sys_path(path),
        "args": [],
        "kwargs": kwargs,
        "grid": _grid(args.grid),
    }
    return {
        "request": request,
        "target": target,
        "path": str(path),
        "kernel": kernel_name,
        "signature": signature,
        "defaulted": defaulted,
        "multibuffer": multibuffer if isinstance(multibuffer, bool) else None,
        "capacity_bits": target.capacity_bits,
    }


def _target(name: str | None, path: Path):
    from ascend_lint import ub_model

    if name is None:
        from ascend_lint.settings import ConfigError, load_settings

        try:
            name = getattr(load_settings(None, path.parent), "target", None)
        except ConfigError as exc:
            raise UsageError(str(exc)) from exc
    try:
        return ub_model.get_target(name or ub_model.DEFAULT_TARGET)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _pairs(items: list[str], option: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"{option} {item!r}: write NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def _defaults(node) -> set[str]:
    args = node.args
    positional = args.posonlyargs + args.args
    named = {a.arg for a in positional[len(positional) - len(args.defaults) :]}
    named |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    return named


def _constexpr_value(name: str, text: str):
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.startswith(("tl.", "triton.language.")):
        dtype = text.split(".")[-1]
        if dtype not in _TL_DTYPES:
            raise UsageError(f"{name}={text}: not a triton dtype (known: {', '.join(_TL_DTYPES)})")
        return {"tl_dtype": dtype}
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]  # a quoted string: `reduction='mean'`
    return text  # a string constexpr or option: `reduction=mean`


def _runtime_value(name: str, typ: str):
    if typ == "None":  # triton makes an argument passed as None a constant
        return None
    if typ.startswith("*"):
        element = POINTER_ELEMENTS.get(typ[1:])
        if element is None:
            known = ", ".join("*" + t for t in POINTER_ELEMENTS)
            raise UsageError(f"--arg {name}={typ}: unknown pointer type (known: {known})")
        return {"tensor": element, "address": 1 << 20}  # 16-byte aligned, like torch's
    if typ not in SCALAR_VALUES:
        known = ", ".join(SCALAR_VALUES)
        raise UsageError(f"--arg {name}={typ}: unknown scalar type (known: {known}, or *TYPE)")
    return SCALAR_VALUES[typ]


def _grid(text: str) -> list[int]:
    try:
        dims = [int(d) for d in text.split(",") if d.strip()]
    except ValueError:
        dims = []
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise UsageError(f"--grid {text!r}: write one to three positive ints, e.g. 40 or 8,4")
    return dims + [1] * (3 - len(dims))


def _module_name(path: Path) -> str:
    """The dotted name the file has inside its package (``pkg.sub.mod``)."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def _sys_path(path: Path) -> list[str]:
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return [str(folder), os.getcwd()]


# -- the answer -----------------------------------------------------------------------------
def _result(plan: dict, answer: dict) -> dict:
    from ascend_lint.lowering import ub_verdict

    constants = answer.get("constants") or {}
    # triton keeps an argument passed as None in the signature under a placeholder
    # pointer type; it is a constant of the specialisation, listed there
    signature = {
        name: typ
        for name, typ in (answer.get("signature") or plan["signature"]).items()
        if not (name in constants and constants[name] is None)
    }
    result = {
        "file": plan["path"],
        "kernel": plan["kernel"],
        "verdict": None,
        "ub_bits_lower": None,
        "ub_bits_upper": None,
        "capacity_bits": plan["capacity_bits"],
        "target": plan["target"].name,
        "stages": [],
        "error": None,
        "signature": signature,
        "constants": constants,
        "largest": [],
    }
    if answer.get("loaded_from_source"):
        result["loaded_from_source"] = answer["loaded_from_source"]
    stage_ms = answer.get("stage_ms") or {}
    failed_at = None if answer.get("ok") else answer.get("stage", "?")
    if failed_at in ("ttir", "ttadapter", "launch"):
        result["verdict"] = "rejected"
    elif failed_at is not None:  # the worker could not import or bind the kernel
        result["error"] = answer.get("error", "")
        result["stages"] = [{"name": failed_at, "status": "failed"}]
        return result
    for stage in (*STAGE_NAMES, "launch"):
        ms = _stage_ms(stage, stage_ms)
        if stage == failed_at:
            status = "failed"
        elif failed_at is None or ms is not None:
            status = "ok"
        else:
            status = "skipped"
        entry = {"name": stage, "status": status}
        if ms is not None:
            entry["ms"] = ms
        result["stages"].append(entry)
    if failed_at is not None:
        result["error"] = answer.get("error", "") + _guessed_scalars_hint(plan, answer)
        return result
    estimate = ub_verdict.estimate(
        answer.get("ir", ""), plan["path"], plan["target"], multibuffer=plan["multibuffer"]
    )
    ub = estimate.as_dict()
    result.update(
        verdict=ub["verdict"],
        ub_bits_lower=ub["ub_bits_lower"],
        ub_bits_upper=ub["ub_bits_upper"],
        largest=ub["largest"],
    )
    if ub["why_uncertain"]:
        result["why_uncertain"] = ub["why_uncertain"]
    return result


def _guessed_scalars_hint(plan: dict, answer: dict) -> str:
    """Which parameters were taken for ``i32`` only because nothing showed them to be
    pointers, when the compiler then found a scalar where it wanted a pointer."""
    if "Unsupported ptr type" not in answer.get("error", ""):
        return ""
    guessed = [n for n in plan["defaulted"] if plan["signature"].get(n) == "i32"]
    if not guessed:
        return ""
    return (
        f"\nnote: {', '.join(guessed)} were taken for i32 (the kernel shows none of them "
        "to be a pointer); give a pointer's type with --arg NAME=*fp32"
    )


def _stage_ms(stage: str, stage_ms: dict) -> float | None:
    if stage == "ttir" and "ttir" in stage_ms:
        return round(stage_ms.get("ast", 0.0) + stage_ms["ttir"], 2)
    return stage_ms.get(stage)


def _print_text(result: dict) -> None:
    from ascend_lint.lowering import ub_verdict
    from ascend_lint.lowering.diagnosis import shown_path

    print(f"{shown_path(result['file'])}::{result['kernel']}")
    if result["signature"]:
        sig = ", ".join(f"{k}: {v}" for k, v in result["signature"].items())
        print(f"  signature: {sig}")
    if result["constants"]:
        consts = ", ".join(f"{k}={v}" for k, v in result["constants"].items())
        print(f"  constants: {consts}")
    stood_in = result.get("loaded_from_source")
    if stood_in:
        print(
            f"  loaded from its source: its module does not import here ({stood_in['import_failure']})"
        )
        if stood_in["replaced"]:
            print(f"  stood in for: {', '.join(stood_in['replaced'])}")
    for stage in result["stages"]:
        ms = f" ({stage['ms']} ms)" if "ms" in stage else ""
        print(f"  {stage['name']:<10} {stage['status']}{ms}")
    if result["error"]:
        print("error:")
        for line in result["error"].rstrip().splitlines()[-40:]:
            print(f"  | {line}")
    if result["verdict"] is None and any(s["name"] == "timeout" for s in result["stages"]):
        print("verdict: none (the lowering did not finish within --timeout)")
    elif result["verdict"] is None:
        print("verdict: not lowered (the kernel could not be loaded)")
    elif result["verdict"] == "rejected":
        from ascend_lint.lowering import diagnosis

        print(f"verdict: rejected by {diagnosis.front_end()}'s front end (this version's verdict)")
        limit = diagnosis.version_limit(result["error"] or "")
        if limit:
            print(f"  note: {limit}")
    else:
        print(ub_verdict.bounds_text(result))
        for buffer in result["largest"]:
            at = f" (line {', '.join(map(str, buffer['lines']))})" if buffer["lines"] else ""
            twice = ", multibuffered" if buffer["multibuffered"] else ""
            print(f"  | {buffer['shape']}: {buffer['bits']:,} bits{twice}{at}")
        if result.get("why_uncertain"):
            print(f"  upper bound unknown: {result['why_uncertain']}")
