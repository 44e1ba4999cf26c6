"""The compile worker: replays recorded launches through triton's own launch path for the NPU.

Runs as ``python -m ascend_lint.lowering.worker`` in a process of its own, WITHOUT
``TRITON_INTERPRET`` (the interpreter replaces ``@triton.jit`` functions by Python
callables that cannot be lowered).  It reads one JSON request per line on stdin and
answers one JSON line per request on the stdout it was started with (anything the
kernel modules print goes to stderr instead, so it cannot corrupt the protocol).

A launch is replayed through ``JITFunction.run`` with a stand-in driver that reports the
NPU target, so argument specialisation (dtypes, 16-byte alignment, integers equal to 1,
``do_not_specialize``, launch options) and the launch-time grid check (more than 65,535
programs) behave as on the NPU.  The stand-in intercepts the compile step: it runs the
``ttir`` and ``ttadapter`` stages of triton-ascend's backend (``triton-adapter-opt``,
shipped in the wheel) and stops before ``npubin``, which needs the CANN toolkit.

Request:  {"id": 1, "module": "pkg.mod", "qualname": "kernel", "file": "/abs/pkg/mod.py",
           "sys_path": [...], "args": [...], "kwargs": {...}, "grid": [x, y, z]}
           (argument encoding: see ``capture.py``)
Answer:   {"id": 1, "ok": bool, "key": triton's specialisation key, "signature": {...},
           "constants": {...}, "cached": bool, "stage": "ttir" | "ttadapter" | "launch" |
           "import" | "bind", "error": "...", "ir": lowered text (ok only), "ms": float}
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import traceback

from ascend_lint.lowering import codegen_errors, diagnosis

NPU_ARCH_ENV = "ASCEND_LINT_NPU_ARCH"
IR_DUMP_ENV = "ASCEND_LINT_IR_DUMP_DIR"  # where to keep each lowered module, to read it
DEFAULT_NPU_ARCH = "Ascend910B4"
STAGES = ("ttir", "ttadapter")


class StageFailed(Exception):
    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage
        self.message = message


class _Lowered:
    """What the stand-in compile returns: enough of a CompiledKernel for ``run`` to
    finish its launch path (the launch itself does nothing: there is no NPU)."""

    function = None
    packed_metadata = None

    def __init__(self, ir_text: str):
        self.ir_text = ir_text

    def launch_metadata(self, *args):
        return None

    def _init_handles(self):
        pass

    def run(self, *args):
        pass


class StandInTensor:
    """A tensor argument as the binder sees it: a dtype and a device address."""

    def __init__(self, dtype, address: int):
        self.dtype = dtype
        self._address = address

    def data_ptr(self) -> int:
        return self._address


class StandInDriver:
    """Reports the NPU target to ``JITFunction.run``; owns no device."""

    def __init__(self, target=None):
        if target is None:  # made from its class, as triton makes a backend's driver
            from triton.backends.compiler import GPUTarget

            target = GPUTarget("npu", os.environ.get(NPU_ARCH_ENV, DEFAULT_NPU_ARCH), 0)
        self._target = target

    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self._target

    def set_current_device(self, device):
        pass

    @property
    def utils(self):
        # with --ascend-cpu-device, kernel modules read the NPU's core counts at import
        # time (driver.active.utils.get_device_properties); without it there are none
        from ascend_lint.cpu_device import driver_utils

        return driver_utils()

    def get_benchmarker(self):
        # autotuned modules ask for it at import time; the worker never tunes (it
        # replays each config the tests launched as a launch of its own)
        from ascend_lint.cpu_device.autotune import run_each_config_once

        return run_each_config_once


class Worker:
    def __init__(self):
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend
        from triton.runtime.driver import driver

        self.target = GPUTarget("npu", os.environ.get(NPU_ARCH_ENV, DEFAULT_NPU_ARCH), 0)
        driver.set_active(StandInDriver(self.target))
        _npu_backend_reports_active()
        self.backend = make_backend(self.target)
        self.kernels: dict[tuple[str, str, str], object] = {}
        self.modules: dict[str, tuple[object, str | None]] = {}  # file -> (module, failure)
        self.rejections: dict[tuple[str, str, str], dict] = {}  # (file, kernel, key) -> answer
        # (module, kernel, file) -> what loading it from its source stood in
        self.stood_in: dict[tuple[str, str, str], dict] = {}
        self.last: dict = {}
        self.stage_ms: dict[str, float] = {}

    # -- finding the kernel ------------------------------------------------------------
    def kernel(self, request: dict):
        from triton.runtime.jit import JITFunction

        where = (request["module"], request["qualname"], request["file"])
        if where in self.kernels:
            return self.kernels[where]
        for entry in request.get("sys_path", []):
            if entry not in sys.path:
                sys.path.append(entry)
        # "0", not unset: a kernel module that turns the interpreter on for its tests with
        # os.environ.setdefault("TRITON_INTERPRET", "1") keeps it off here, so that its
        # @triton.jit helpers stay JITFunctions the code generator can inline
        os.environ["TRITON_INTERPRET"] = "0"
        module, failure = self._import(request["module"], request["file"])
        if failure is not None:
            obj = self._from_source(request, failure)
        else:
            obj = module
            for part in request["qualname"].split("."):
                if part == "<locals>":
                    raise StageFailed(
                        "import", "the kernel is defined inside a function and cannot be imported"
                    )
                obj = getattr(obj, part)
        while not isinstance(obj, JITFunction):
            inner = getattr(obj, "fn", None)
            if inner is None:
                raise StageFailed("import", _not_a_kernel(request["qualname"], obj, module))
            if not hasattr(inner, "fn") and callable(inner) and hasattr(obj, "rewriter"):
                # the module set TRITON_INTERPRET itself: rebuild the JITFunction
                obj = JITFunction(inner, **obj.rewriter.kwargs)
                break
            obj = inner
        self._intercept_compile(obj)
        self.kernels[where] = obj
        return obj

    def _from_source(self, request: dict, failure: str):
        """The kernel of a module that does not import here, loaded from its source with
        the imports that fail stood in (``lowering.kernel_loading``); what was stood in
        goes with every answer about it."""
        from ascend_lint.lowering.kernel_loading import LoadError, load_from_source

        try:
            loaded = load_from_source(request["file"], request["qualname"], request["module"])
        except LoadError as exc:
            raise StageFailed(
                "import",
                f"its module does not import here ({failure}), and loading the kernel from "
                f"its source with the failing imports stood in did not work either: {exc}",
            ) from exc
        where = (request["module"], request["qualname"], request["file"])
        self.stood_in[where] = {"replaced": loaded.replaced, "import_failure": failure}
        return loaded.kernel

    def _import(self, name: str, path: str):
        """The kernel's module, executed once per file.  A module whose import fails
        part-way is kept as far as it ran (and left out of ``sys.modules``): the kernels
        it defined before the failure still compile, the others say where it stopped."""
        path = os.path.realpath(path)
        if path in self.modules:
            return self.modules[path]
        spec = None
        with contextlib.suppress(Exception):
            spec = importlib.util.find_spec(name)
        if spec is not None and os.path.realpath(spec.origin or "") == path:
            loaded = sys.modules.get(name)
            if (
                loaded is not None
                and os.path.realpath(getattr(loaded, "__file__", "") or "") == path
            ):
                self.modules[path] = (loaded, None)
                return self.modules[path]
            module_name = name
        else:
            # a test module (rootdir-relative names, conftest-made paths): load it from its file
            module_name = "_ascend_compile_" + name.replace(".", "_")
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise StageFailed("import", f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        failure = None
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            sys.modules.pop(module_name, None)
            failure = _import_failure(exc, path)
        self.modules[path] = (module, failure)
        return self.modules[path]

    def _intercept_compile(self, jit_fn):
        if jit_fn.binder is None:
            jit_fn.create_binder(self.backend)
        worker = self

        def lower(src, target=None, options=None):
            worker.last = {
                "signature": dict(src.signature),
                "constants": {k: _plain(v) for k, v in src.constants.items()},
            }
            return _Lowered(worker.lower(src, options or {}))

        jit_fn.compile = lower

    # -- lowering ------------------------------------------------------------------------
    def lower(self, src, options_dict: dict) -> str:
        from triton._C.libtriton import ir
        from triton.compiler.errors import CompilationError

        options = self.backend.parse_options(options_dict)
        stages: dict = {}
        self.backend.add_stages(stages, options)
        context = ir.context()
        ir.load_dialects(context)
        self.backend.load_dialects(context)
        clock = time.perf_counter()
        try:
            module = src.make_ir(
                options,
                self.backend.get_codegen_implementation(),
                self.backend.get_module_map(),
                context,
            )
        except CompilationError as exc:
            switch = codegen_errors.platform_switch(src.fn, self.backend.get_module_map())
            raise StageFailed("ttir", switch + codegen_errors.located(src.fn, exc)) from exc
        except Exception as exc:
            switch = codegen_errors.platform_switch(src.fn, self.backend.get_module_map())
            raise StageFailed("ttir", f"{switch}{type(exc).__name__}: {exc}") from exc
        self.stage_ms["ast"] = _since(clock)
        metadata = {"hash": src.hash(), "target": self.target, **options.__dict__}
        ttir_text = ""
        for stage in STAGES:
            clock = time.perf_counter()
            try:
                module = stages[stage](module, metadata)
            except subprocess.CalledProcessError as exc:
                detail = exc.stderr.decode(errors="replace") if exc.stderr else ""
                message = _adapter_message(exc.returncode, detail)
                hint = _pointer_select_hint(ttir_text, src.fn) if "loc(" not in detail else ""
                raise StageFailed(stage, message + hint) from exc
            except Exception as exc:
                raise StageFailed(stage, f"{type(exc).__name__}: {exc}") from exc
            self.stage_ms[stage] = _since(clock)
            if stage == "ttir":
                ttir_text = str(module)
                self.last["grid_use"] = _grid_use(ttir_text, src.fn)
        text = str(module)
        if "func.func" not in text:
            raise StageFailed("ttadapter", "ttadapter produced no function:\n" + text[:2000])
        return text

    # -- one request ---------------------------------------------------------------------
    def handle(self, request: dict) -> dict:
        answer = {"id": request.get("id"), "ok": False, "key": "", "cached": False}
        started = time.perf_counter()
        self.last = {}
        self.stage_ms = {}
        stage = "import"
        rejection_key = None
        try:
            jit_fn = self.kernel(request)
            where = (request["module"], request["qualname"], request["file"])
            if where in self.stood_in:
                answer["loaded_from_source"] = self.stood_in[where]
            stage = "bind"
            args = [_decode(a) for a in request["args"]]
            kwargs = {k: _decode(v) for k, v in request["kwargs"].items()}
            key, answer["specialisation"] = _specialisation_key(jit_fn, args, kwargs)
            answer["key"] = key
            rejection_key = (request["file"], request["qualname"], key)
            if rejection_key in self.rejections:
                return {**self.rejections[rejection_key], "id": request.get("id"), "cached": True}
            cache_before = {k for cache in jit_fn.cache.values() for k in cache}
            stage = "launch"
            lowered = jit_fn.run(*args, grid=tuple(request["grid"]), warmup=False, **kwargs)
            answer.update(ok=True, cached=key in cache_before)
            if not answer["cached"]:
                answer["ir"] = lowered.ir_text
                _dump(request, jit_fn, key, lowered.ir_text)
        except StageFailed as exc:
            answer.update(stage=exc.stage, error=diagnosis.distil(exc.message))
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            if stage == "import":
                message += "\n" + traceback.format_exc()
            answer.update(stage=stage, error=diagnosis.distil(message))
        answer.update(self.last)
        answer["stage_ms"] = self.stage_ms
        answer["ms"] = round((time.perf_counter() - started) * 1e3, 2)
        if rejection_key is not None and answer.get("stage") in STAGES:
            # the same specialisation from another launch (a grid, a test) fails alike
            self.rejections[rejection_key] = answer
        return answer


def _specialisation_key(jit_fn, args: list, kwargs: dict) -> tuple[str, str]:
    """triton's cache key for this launch, as ``JITFunction.run`` computes it (a
    rejected specialisation, which never reaches the cache, gets the same kind of key as
    an accepted one), and the runtime arguments' part of it in words."""
    options = dict(kwargs)
    options["debug"] = options.get("debug", False) or os.environ.get("TRITON_DEBUG", "0") == "1"
    if getattr(jit_fn, "bishengir_option", None):
        options.update(jit_fn.bishengir_option)
    _, sig_and_spec, constexpr_vals, _, excess_kwargs = jit_fn.binder(*args, **options)
    key = "".join(sig_and_spec) + str((constexpr_vals, excess_kwargs))
    names = [p.name for p in jit_fn.params if not p.is_constexpr]
    if len(sig_and_spec) != 2 * len(names):
        return key, ""
    types, specs = sig_and_spec[: len(names)], sig_and_spec[len(names) :]
    words = [_argument_words(n, t, s) for n, t, s in zip(names, types, specs)]
    return key, ", ".join(words)


def _argument_words(name: str, kind: str, spec: str) -> str:
    """``a: *fp32 (16-byte aligned)``, ``n: i32 (multiple of 16)``, ``x: None``."""
    if kind == "none":
        return f"{name}: None"
    if spec == "D":
        return f"{name}: {kind} ({'16-byte aligned' if kind.startswith('*') else 'multiple of 16'})"
    if spec == "1":
        return f"{name}: {kind} = 1"
    return f"{name}: {kind}"


def _npu_backend_reports_active() -> None:
    """The NPU backend's driver says it is active here, as on an NPU: libraries choose
    between real triton and a stand-in of their own by counting the backends whose
    driver is active (vLLM's triton_utils wants exactly one), and on a CPU none is; the
    kernel would then be a plain function in this process while the test process
    (with --ascend-cpu-device, whose driver is active) launched a triton kernel."""
    import dataclasses

    from triton.backends import backends

    for name, backend in list(backends.items()):
        if getattr(backend.driver, "__name__", "") == "NPUDriver":
            backends[name] = dataclasses.replace(backend, driver=StandInDriver)


def _not_a_kernel(qualname: str, obj, module) -> str:
    """Why the name the test process launched is no triton kernel here."""
    text = f"{qualname} is a {type(obj).__name__} in the compile worker, not a triton kernel"
    real = sys.modules.get("triton")
    bound = getattr(module, "triton", None) if module is not None else None
    if bound is not None and bound is not real and hasattr(bound, "jit"):
        kind = type(bound)
        text += (
            f": the name `triton` in its module is a {kind.__module__}.{kind.__qualname__}, "
            "not the triton package, so its @triton.jit left the function undecorated (a "
            "library's fallback for when it finds no usable triton)"
        )
    return text


def _import_failure(exc: BaseException, path: str) -> str:
    """``line N: Error: message``, N the module's own line that raised."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if line is None and os.path.realpath(frame.f_code.co_filename) == path:
            line = lineno  # the module's own statement, not a helper it called
    where = f"line {line}: " if line is not None else ""
    return f"{where}{type(exc).__name__}: {exc}"


def _since(clock: float) -> float:
    return round((time.perf_counter() - clock) * 1e3, 2)


def _dump(request: dict, jit_fn, key: str, text: str) -> None:
    folder = os.environ.get(IR_DUMP_ENV)
    if not folder:
        return
    import hashlib

    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    name = f"{request['qualname']}-{digest}.ttadapter.mlir"
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
        out.write(f"// {request['file']}\n// {key}\n{text}")


HINT_PREFIX = diagnosis.HINT_PREFIX


def _grid_use(ttir_text: str, jit_fn) -> dict | None:
    """Which program-id axes the lowered kernel reads, and whether it loops over them."""
    from ascend_lint.lowering.grid_use import grid_use

    try:
        from triton.runtime.jit import get_jit_fn_file_line

        return grid_use(ttir_text, get_jit_fn_file_line(jit_fn)[0])
    except Exception:
        return None


def _pointer_select_hint(ttir_text: str, jit_fn) -> str:
    """The adapter aborts without a location on a pointer chosen at run time; name the
    select that chose it, from the TTIR it was given."""
    from ascend_lint.lowering.ir_facts import pointer_selects

    try:
        from triton.runtime.jit import get_jit_fn_file_line

        kernel_file = get_jit_fn_file_line(jit_fn)[0]
    except Exception:
        return ""
    found = pointer_selects(ttir_text, kernel_file)
    if not found:
        return ""
    where = found[0]
    return (
        f'\n{HINT_PREFIX}loc("{where.path}":{where.line}:{where.column}): a pointer chosen at '
        "run time (arith.select on pointers, e.g. tl.where(c, a + offs, b + offs)); the "
        "adapter cannot trace which tensor it addresses: select the offsets or the loaded "
        "values instead"
    )


def _adapter_message(returncode: int, stderr: str) -> str:
    if returncode < 0:
        head = f"triton-adapter-opt was killed by signal {-returncode}"
    else:
        head = f"triton-adapter-opt exited with status {returncode}"
    return f"{head}\n{stderr.strip()}"


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _decode(value):
    if isinstance(value, dict):
        if "tensor" in value:
            import torch

            return StandInTensor(getattr(torch, value["tensor"]), value["address"])
        if "tl_dtype" in value:
            import triton.language as tl

            return getattr(tl, value["tl_dtype"])
        if "tuple" in value:
            return tuple(_decode(v) for v in value["tuple"])
    return value


def main() -> int:
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        print("the compile worker must run without TRITON_INTERPRET", file=sys.stderr)
        return 2
    # Keep the protocol stream to ourselves: kernel modules may print.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from ascend_lint import cpu_device

    cpu_target = cpu_device.target_from_environment()
    if cpu_target:  # --ascend-cpu-device: kernel modules import torch_npu, cann extensions
        cpu_device.install(cpu_target, compile_worker=True)
    worker = Worker()
    # kernel modules import it; do it before saying ready, while tests are collected
    with contextlib.suppress(ImportError):
        import torch  # noqa: F401
    print(json.dumps({"ready": True, "pid": os.getpid()}), file=protocol, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        print(
            f"== request {request.get('id')} {request.get('qualname')}", file=sys.stderr, flush=True
        )
        print(json.dumps(worker.handle(request)), file=protocol, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
