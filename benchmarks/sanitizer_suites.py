"""Run public Ascend NPU test suites on a CPU with ``--ascend-cpu-device`` and write
``benchmarks/SANITIZER_SUITES.md``.

    python benchmarks/sanitizer_suites.py MIRROR_ROOT [--suite NAME ...]
        [--compile report|strict] [--sanitize report|strict|off]
        [--cap-minutes N] [--test-timeout S] [--workers N] [--scratch DIR] [--reuse]

MIRROR_ROOT holds bare git mirrors named ``owner+name/repo`` (sgl-project+sgl-kernel-npu,
vllm-project+vllm-ascend, XPU-Forces+mojo_opset).  Each suite's files are taken from the
mirror's HEAD with ``git archive`` into a scratch folder, never into this repository.
Each suite runs twice: with ``--ascend-cpu-device --ascend-compile=strict
--ascend-sanitize=report`` (the modes are options; one pytest-timeout per test, a cap
on the whole run after which pytest is interrupted and what finished is counted), and
as plain ``pytest`` for the time it takes (these suites stop at their ``import
torch_npu`` without the stand-in).  Failures are sorted into classes by the patterns
in ``FAILURE_CLASSES``; the table says which remain unclassified.  The compile gate's
failures (rejected, not loadable, Unified Buffer overflow, grid) and the sanitizer's
findings are read from the JSON report and listed with the verdict given to each after
reading its kernel (``GATE_VERDICTS``, ``SANITIZER_VERDICTS``).

Python packages a suite imports (einops, vllm ...) are installed beforehand by hand;
the table names the ones used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "SANITIZER_SUITES.md"
RESULTS = ROOT / "benchmarks" / "sanitizer_suites.json"


@dataclass
class Suite:
    name: str
    mirror: str  # owner+name
    paths: list[str]  # what to take from the mirror
    tests: list[str]  # what to run, relative to the checkout
    pythonpath: list[str]
    extra_args: list[str] = field(default_factory=list)
    selection: str = ""  # what was selected, and why
    prepare: object = None  # callable(checkout: Path) run after extraction
    packages: str = ""  # what was installed for it
    note: str = ""  # how this table's run of it differs from the command above


def _sgl_tests(checkout: Path) -> list[str]:
    # the test modules that import the library's Python (Triton) kernels; the others
    # call C++ operators of the library's NPU build only (torch.ops.npu.*)
    modules = (
        "activation|attention|fla|indexer|mamba|mem_cache|moe|norm|sample|speculative|"
        "kvcacheio|utils|kimi"
    )
    pattern = re.compile(rf"sgl_kernel_npu\.({modules})")
    folder = checkout / "tests/python/sgl_kernel_npu"
    return sorted(
        str(p.relative_to(checkout))
        for p in folder.glob("test_*.py")
        if pattern.search(p.read_text(errors="replace"))
    )


def _vllm_prepare(checkout: Path) -> None:
    # what vllm-ascend's setup.py build step writes for an A2 SOC_VERSION
    (checkout / "vllm_ascend/_build_info.py").write_text(
        "# Auto-generated file\n__device_type__ = 'A2'\n"
    )
    # vllm-ascend pins triton-ascend 3.2.2, whose triton has a `triton.experimental`
    # package; vllm_ascend/__init__.py puts empty `triton.experimental.gluon` modules in
    # sys.modules for vLLM's triton_utils, which imports them beside triton.language.
    # triton-ascend 3.2.0 (the version here) has no `triton.experimental` at all, so the
    # parent of those modules cannot be imported: a sitecustomize (on PYTHONPATH, so run
    # at the start of pytest and of the compile worker alike) registers an empty package
    # under that name and nothing else.
    shims = checkout / "_suite_plugins"
    shims.mkdir(exist_ok=True)
    (shims / "sitecustomize.py").write_text(
        "import sys\nimport types\n\n"
        "if 'triton.experimental' not in sys.modules:\n"
        "    package = types.ModuleType('triton.experimental')\n"
        "    package.__path__ = []\n"
        "    sys.modules['triton.experimental'] = package\n"
    )
    # the platform entry point vllm-ascend's install registers (setup.py), so that
    # vLLM's current_platform is its NPUPlatform: the tests take their device from it
    # (current_platform.device_type, '' without it)
    dist_info = shims / "vllm_ascend_platform-0.0.0.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: vllm-ascend-platform\nVersion: 0.0.0\n"
    )
    (dist_info / "entry_points.txt").write_text(
        "[vllm.platform_plugins]\nascend = vllm_ascend:register\n"
    )


SUITES = {
    "sgl-kernel-npu": Suite(
        name="sgl-kernel-npu",
        mirror="sgl-project+sgl-kernel-npu",
        paths=["python/sgl_kernel_npu", "tests/python/sgl_kernel_npu"],
        tests=[],  # _sgl_tests
        pythonpath=["python/sgl_kernel_npu"],
        extra_args=["-k", "not test_move_intermediate_cache and not test_conv_state_rollback"],
        selection="the test modules that import the library's Python (Triton) kernels "
        "(28 of 48 files; the other 20 test C++ operators of its NPU build only), less "
        "test_mamba_state_update's test_move_intermediate_cache and test_conv_state_rollback "
        "(`-k`): a run that included them was ended by the system's out-of-memory killer on "
        "this 23 GB machine (test_move_intermediate_cache's 4 cases alone, with the "
        "sanitizer and the gate off, peak at 19.3 GB under the interpreter)",
        packages="einops",
    ),
    "vllm-ascend": Suite(
        name="vllm-ascend",
        mirror="vllm-project+vllm-ascend",
        paths=[
            "vllm_ascend",
            "tests/e2e/nightly/single_node/ops",
            "tests/__init__.py",
            "tests/e2e/__init__.py",
            "tests/ut/__init__.py",
            "tests/ut/base.py",
        ],
        tests=["tests/e2e/nightly/single_node/ops/singlecard_ops/triton"],
        pythonpath=[".", "_suite_plugins"],
        extra_args=[
            "--confcutdir=tests/e2e/nightly/single_node/ops",
            "--ignore=tests/e2e/nightly/single_node/ops/singlecard_ops/triton/"
            "test_apply_top_k_top_p_triton.py",
        ],
        selection="tests/e2e/nightly/single_node/ops/singlecard_ops/triton (the Triton op "
        "tests) less test_apply_top_k_top_p_triton.py, whose 95 tests failed at once before "
        "the stand-in's torch.Generator took the npu device and now each run past the "
        "per-test limit under the interpreter (38 of them took a whole 32-minute cap); "
        "--confcutdir keeps "
        "tests/e2e/conftest.py (model downloads, modelscope) out",
        prepare=_vllm_prepare,
        note="vLLM 0.34.0 is the release PyPI serves; vllm-ascend's main tracks vLLM's main, "
        "hence the 'vLLM version' imports. vllm-ascend pins triton-ascend 3.2.2, whose "
        "`triton.experimental` package vLLM's triton_utils imports from; with 3.2.0 an "
        "empty package stands in for it (a sitecustomize.py the script writes on PYTHONPATH, "
        "so that the compile worker has it too; vllm-ascend itself stubs the gluon modules "
        "under it). Its platform entry "
        "point (vllm.platform_plugins: ascend) is registered from a dist-info folder the "
        "script writes, as its install would",
        packages="vllm 0.34.0 (--no-deps) and the light parts of its requirements "
        "(transformers, xgrammar --no-deps, ...); vllm_ascend/_build_info.py written as its "
        "build step writes it for A2",
    ),
    "mojo_opset": Suite(
        name="mojo_opset",
        mirror="XPU-Forces+mojo_opset",
        paths=["mojo_opset", "pytest.ini"],
        tests=[
            "mojo_opset/tests/accuracy/operators/test_activation.py",
            "mojo_opset/tests/accuracy/operators/test_normalization.py",
        ],
        pythonpath=["."],
        extra_args=["-k", "not shape4"],
        # pydantic: mojo_opset.runtime's config; without it the operator discovery stops
        # part-way and half the ttx operators are never registered (their tests skip)
        packages="einops, pydantic",
        selection="the activation and normalization operator accuracy tests less the 6 "
        "normalization tests of shape (7762, 18778) (`-k 'not shape4'`: 146 M elements, "
        "0.6 GB a float32 tensor; the run that included them was ended by the system's "
        "out-of-memory killer at 15 GB on this 23 GB machine). The whole accuracy folder "
        "(1,550 tests, a minute to collect) does not finish within the cap under the "
        "interpreter; tests/distributed and tests/perf need several devices or time the NPU",
        note="earlier runs counted nothing for this suite: not a hang in collection, but "
        "this script started in the background (nohup ... &), where SIGINT is ignored and "
        "pytest inherited that, so the interrupt at the cap was ignored and pytest killed "
        "before it wrote its junit file; the script now gives pytest SIGINT's default back",
    ),
}

# (class, what explains it, pattern on the failure's message and text)
FAILURE_CLASSES = [
    (
        "strict compile gate",
        "the test passed or failed on its own, and strict mode fails it for a specialisation "
        "it launched (listed below with its verdict)",
        r"\(--ascend-compile=strict\)",
    ),
    (
        "timeout",
        "slower than the per-test limit under the interpreter",
        r"Timeout \(>[\d.]+s\) from pytest-timeout",
    ),
    (
        "worker crashed",
        "the xdist worker died (the test's tensors exceed the machine's memory)",
        r"worker '\w+' crashed",
    ),
    (
        "NPU-only operator",
        "calls an operator of the suite's NPU build (torch.ops.npu.*) or an "
        "Ascend operator of torch_npu, which have no CPU implementation",
        r"_OpNamespace' 'npu' object has no attribute|torch_npu\.\w+ has no CPU implementation",
    ),
    (
        "not on CPU",
        "an Ascend feature the stand-in names as not runnable on CPU",
        r"NotOnCpuError|has no CPU implementation in ascend-lint",
    ),
    (
        "dependency missing",
        "imports a package that is not installed (too heavy, or pulls a CUDA torch)",
        r"No module named '(sglang|modelscope)",
    ),
    (
        "vLLM version",
        "imports a vLLM API that the installed vLLM release does not have",
        r"No module named 'vllm\.|cannot import name '\w+' from 'vllm\.|"
        r"cannot import name '\w+' from 'vllm\.v1",
    ),
    (
        "test out of date",
        "the test imports or calls something its library no longer has",
        r"cannot import name '\w+' from 'vllm_ascend|got multiple values for argument",
    ),
    (
        "not a pytest test",
        "a test_* function the module's __main__ calls with arguments; pytest finds no "
        "fixtures for them, on any machine",
        r"fixture '\w+' not found",
    ),
]


def materialise(mirror_root: Path, suite: Suite, scratch: Path) -> tuple[Path, str]:
    git_dir = mirror_root / suite.mirror / "repo"
    commit = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    checkout = scratch / suite.name
    checkout.mkdir(parents=True, exist_ok=True)
    archive = scratch / f"{suite.name}.tar"
    with archive.open("wb") as out:
        subprocess.run(
            ["git", f"--git-dir={git_dir}", "archive", "HEAD", *suite.paths],
            stdout=out,
            check=True,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(checkout)  # our own mirror's archive
    archive.unlink()
    if suite.prepare is not None:
        suite.prepare(checkout)
    return checkout, commit


def run_pytest(
    checkout: Path, suite: Suite, tests: list[str], args: list[str], cap_s: float, junit: Path
) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(checkout / p) for p in suite.pythonpath)}
    env.pop("TRITON_INTERPRET", None)
    command = [
        sys.executable,
        "-m",
        "pytest",
        *tests,
        "-p",
        "no:cacheprovider",
        "-q",
        "--continue-on-collection-errors",  # a module that fails to import costs only itself
        f"--junitxml={junit}",
        *suite.extra_args,
        *args,
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        # a script started in the background (nohup ... &) ignores SIGINT, and a child
        # inherits that: pytest would then ignore the interrupt that ends a capped run
        preexec_fn=_default_sigint,
    )
    capped = False
    try:
        output, _ = proc.communicate(timeout=cap_s)
    except subprocess.TimeoutExpired:
        capped = True
        # interrupt pytest itself (not its xdist workers, which it stops): it then
        # writes the junit file of what finished
        os.kill(proc.pid, signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
    return {
        "command": " ".join(["pytest", *tests, *suite.extra_args, *args]),
        "seconds": round(time.perf_counter() - started, 1),
        "exit": proc.returncode,
        "capped": capped,
        "tail": output[-4000:],
    }


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def read_junit(junit: Path) -> dict:
    counts = {"tests": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures = []
    if not junit.exists():
        return {**counts, "failures": failures, "junit": False}
    for case in ET.parse(junit).iter("testcase"):
        if case.get("name") is None:
            continue  # a test that was running when the cap interrupted the run
        counts["tests"] += 1
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            element = case.find(kind)
            if element is not None:
                outcome = kind
                if kind != "skipped":
                    text = (element.get("message") or "") + "\n" + (element.text or "")
                    name = f"{case.get('classname')}::{case.get('name')}"
                    failures.append({"test": name, "text": text[-6000:]})
                break
        key = {"failure": "failed", "error": "errors", "skipped": "skipped"}.get(outcome, outcome)
        counts[key] += 1
    return {**counts, "failures": failures, "junit": True}


def classify(failures: list[dict], extra: list[tuple]) -> dict:
    classes: dict[str, dict] = {}
    for failure in failures:
        name, why = _class_of(failure, [*extra, *FAILURE_CLASSES])
        entry = classes.setdefault(name, {"why": why, "count": 0, "example": failure["test"]})
        entry["count"] += 1
    return classes


def _class_of(failure: dict, classes: list[tuple]) -> tuple[str, str]:
    """The first class whose pattern matches the failure's text or its test's name."""
    subject = failure["test"] + "\n" + failure["text"]
    for name, why, pattern in classes:
        if re.search(pattern, subject):
            return name, why
    return "unclassified", "no pattern matched; see the example"


def specialisations(report: Path) -> dict:
    if not report.exists():
        return {}
    summary = json.loads(report.read_text())["summary"]
    return {
        k: summary.get(k)
        for k in ("kernels", "specialisations", "rejected", "not_compiled", "ub_overflows")
    }


def gate_records(report: Path) -> list[dict]:
    """The specialisations strict mode fails a test for (rejected, not loadable in the
    compile worker, overflowing the Unified Buffer) and the grid findings, each once."""
    if not report.exists():
        return []
    data = json.loads(report.read_text())
    out = []
    for spec in data["specialisations"]:
        ub = (spec.get("ub") or {}).get("verdict")
        if spec["status"] == "ok" and ub != "overflows":
            continue
        out.append(
            {
                "kernel": spec["kernel"],
                "file": spec["file"],
                "def_line": spec["def_line"],
                "status": spec["status"] if ub != "overflows" else "ub-overflows",
                "stage": spec.get("stage"),
                "reason": spec.get("reason") or "",
                "message": (spec.get("message") or "")[:600],
                "tests": len(spec.get("tests", ())),
                "dropped_by_autotuner": bool(spec.get("dropped_by_autotuner")),
            }
        )
    for finding in data.get("grid_coverage", ()):
        out.append(
            {
                "kernel": finding.get("kernel", "?"),
                "file": finding.get("file", ""),
                "def_line": finding.get("kernel_line"),
                "status": "grid",
                "stage": "grid",
                "reason": finding.get("message", "")[:300],
                "message": "",
                "tests": len(finding.get("tests", ())),
                "dropped_by_autotuner": False,
            }
        )
    return out


def sanitizer_findings(report: Path) -> tuple[list[dict], dict]:
    if not report.exists():
        return [], {}
    data = json.loads(report.read_text())
    keep = (
        "kind",
        "kernel",
        "path",
        "line",
        "op",
        "tensor",
        "lanes",
        "occurrences",
        "detail",
        "allowed",
    )
    findings = [
        {**{k: f.get(k) for k in keep}, "tests": len(f.get("tests", ())), "test": f["tests"][0]}
        for f in data.get("sanitizer", ())
    ]
    summary = data.get("sanitizer_summary", {})
    return findings, {k: v for k, v in summary.items() if isinstance(v, (int, str))}


def run_suite(mirror_root: Path, suite: Suite, scratch: Path, options) -> dict:
    checkout, commit = materialise(mirror_root, suite, scratch)
    tests = suite.tests or _sgl_tests(checkout)
    report = scratch / f"{suite.name}-compile.json"
    workers = ["-n", str(options.workers)] if options.workers else []
    opt_in = [
        "--ascend-cpu-device",
        f"--ascend-compile={options.compile}",
        f"--ascend-sanitize={options.sanitize}",
        f"--ascend-compile-report={report}",
        f"--timeout={options.test_timeout}",
        *workers,
    ]
    junit = scratch / f"{suite.name}-cpu.xml"
    earlier = scratch / f"{suite.name}-cpu.json"  # a run made before, kept with its junit
    if options.reuse and junit.exists() and earlier.exists():
        cpu = {**json.loads(earlier.read_text()), "tail": ""}
    else:
        cpu = run_pytest(checkout, suite, tests, opt_in, options.cap_minutes * 60, junit)
    cpu.update(read_junit(junit))
    findings, sanitizer_summary = sanitizer_findings(report)
    plain_junit = scratch / f"{suite.name}-plain.xml"
    plain_args = [f"--timeout={options.test_timeout}", *workers]
    plain_cap = min(options.cap_minutes * 60, 90)  # a plain run stops at an import here
    plain = run_pytest(checkout, suite, tests, plain_args, plain_cap, plain_junit)
    plain.update(read_junit(plain_junit))
    plain_reason = re.findall(
        r"^E\s+(ModuleNotFoundError: .*|ImportError: .*)$", plain["tail"], re.M
    )
    return {
        "suite": suite.name,
        "commit": commit,
        "environment": environment(),
        "selection": suite.selection,
        "note": suite.note,
        "packages": suite.packages,
        "cpu": {
            **{k: v for k, v in cpu.items() if k != "tail"},
            "compiled": specialisations(report),
            "gate": gate_records(report),
            "sanitizer": findings,
            "sanitizer_summary": sanitizer_summary,
        },
        "plain": {
            **{k: v for k, v in plain.items() if k not in ("failures", "tail")},
            "reason": plain_reason[0] if plain_reason else "",
        },
    }


# failures explained by reading the suite's code (each checked by hand once); the
# patterns tie them to the tests they concern
SUITE_CLASSES: dict[str, list[tuple]] = {
    "vllm-ascend": [
        (
            "stand-in gap, fixed since",
            "the test makes torch.Generator(device='npu'): the stand-in mapped npu to cpu in "
            "torch calls, not in the Generator constructor, which wants a PrivateUse1 hooks "
            "interface; fixed after this run (torch.Generator maps the device now)",
            r"register PrivateUse1HooksInterface",
        ),
        (
            "reads before its input",
            "the kernel reads token_ids before its start for the test's inconsistent "
            "positions (the _penalties_kernel finding below); fails on CPU with or without "
            "the sanitizer, and on an NPU depends on the memory before the tensor",
            r"test_apply_penalties\[npu:0-42-dtype\d-3-4-1000-4\]",
        ),
        (
            "vLLM version (API)",
            "calls a vLLM API whose signature or abstract methods differ in the installed "
            "vLLM release (GatedDeltaNetAttention.get_state_shape, triton_mrope's "
            "is_neox_style)",
            r"Can't instantiate abstract class GatedDeltaNetAttention|"
            r"triton_mrope\(\) missing 1 required positional argument",
        ),
        (
            "interpreter gap",
            "chunk_kda's kernels call .to(tl.int64) on a `for i_t in range(NT)` index, a "
            "tensor when compiled and a Python int under the interpreter (a gap of the "
            "interpreter, not filled yet); build_local_metadata_triton: a tuple of arrays "
            "converted to a tensor inside the kernel, not traced to its line yet",
            r"cannot convert \(array|'int' object has no attribute 'to'",
        ),
        (
            "vLLM needs a newer triton",
            "vLLM 0.34's triton_utils needs triton >= 3.5 (triton.experimental.gluon); beside "
            "triton-ascend 3.2 it hands out its placeholder triton (@triton.jit returns a plain "
            "function, no triton.runtime), so no kernel runs",
            r"'function' object is not subscriptable|module 'triton' has no attribute|"
            r"Device properties not initialized",
        ),
        (
            "test out of date",
            "the test imports a kernel its library no longer defines at "
            "this commit (causal_conv1d_fn, _compute_slot_mappings_kernel)",
            r"cannot import name '\w+' from 'vllm_ascend",
        ),
        (
            "op registered for the NPU only",
            "calls a vllm-ascend Triton op through torch's dispatcher (torch.ops.vllm."
            "qkv_rmsnorm_rope ...), which vllm-ascend registers for the NPU's dispatch key "
            "(PrivateUse1) alone: the stand-in's CPU tensors find no kernel for it",
            r"is only available for these backends: \[PrivateUse1",
        ),
    ],
    "sgl-kernel-npu": [
        (
            "stand-in bug, fixed since",
            "torch.npu.set_device(tensor.device) refused an npu tensor's device (cpu here); "
            "fixed after this run",
            r"is not an npu device",
        ),
        (
            "library bug (no kernel)",
            "the library's torch path ignores `bias` "
            "(torch_causal_conv1d_update_npu); no kernel is launched, so it fails on an NPU too",
            r"test_conv_varlen_update",
        ),
        (
            "reference differs on CPU",
            "the test's reference shifts a conv window with an "
            "overlapping in-place copy_, which torch on CPU smears; the kernel's result is the "
            "correct shift",
            r"test_conv_state_rollback",
        ),
        (
            "test ahead of the kernel",
            "asserts a strided destination the kernel's launcher "
            "does not pass (no H/V/K strides at this commit); fails on an NPU too",
            r"test_move_intermediate_cache_mask_and_destination_strides",
        ),
        (
            "CDF tie",
            "a sampled token off by one where the coin lands on a cumulative-"
            "probability boundary (0.25/0.75 over equal probabilities): block-wise float32 sums "
            "and torch's cumsum round the tie differently; compared exactly (atol=0)",
            r"test_general_tree_matches_gpu_algorithm_reference",
        ),
    ],
}


def environment() -> dict:
    """What a run's numbers depend on: this repository's commit (and the last one that
    changed the sanitizer), the versions of what runs the kernels, the date."""
    from importlib.metadata import PackageNotFoundError, version

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    versions = {}
    for package in ("torch", "triton-ascend", "pytest", "vllm"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = None
    return {
        "date": time.strftime("%Y-%m-%d"),
        "ascend_lint_commit": git("rev-parse", "--short=12", "HEAD"),
        "sanitizer_commit": git("log", "-1", "--format=%h %s", "--", "ascend_lint/sanitizer"),
        "python": ".".join(map(str, sys.version_info[:3])),
        **versions,
    }


# Strict-mode gate failures and sanitizer findings, each judged after reading the
# kernel: (suite, kernel, status or kind) -> (verdict, why).  A record not listed here
# shows as "not judged".
_TUNER_DROPS = (
    "an autotune config whose tiles exceed the 192 KB Unified Buffer: {tiles}; on an NPU "
    "it fails to compile and triton-ascend's autotuner drops it, as the gate does in a "
    "tuning trial; no test fails for it"
)
GATE_VERDICTS: dict[tuple[str, str, str], tuple[str, str]] = {
    ("mojo_opset", "_silu_fwd_kernel", "ub-overflows"): (
        "true",
        _TUNER_DROPS.format(
            tiles="BLOCK_SIZE_M rows (configs up to 32) of BLOCK_SIZE_N columns (up to 2,048) "
            "for x and y"
        ),
    ),
    ("mojo_opset", "_silu_fwd_nomask_kernel", "ub-overflows"): (
        "true",
        _TUNER_DROPS.format(
            tiles="BLOCK_SIZE_M rows (configs up to 16) of BLOCK_SIZE_N columns (up to 2,048) "
            "for x and y"
        ),
    ),
    ("mojo_opset", "_swiglu_fwd_kernel", "ub-overflows"): (
        "true",
        _TUNER_DROPS.format(
            tiles="BLOCK_SIZE_M rows (configs up to 32) of BLOCK_SIZE_N columns for a, b and "
            "the product"
        ),
    ),
    ("sgl-kernel-npu", "fused_rmsnorm_without_weight_kernel", "ub-overflows"): (
        "true",
        _TUNER_DROPS.format(tiles="block_l rows of 2,048 fp32 (8 KB a row) for x, x*x and y"),
    ),
    ("sgl-kernel-npu", "fused_rsqrt_mul_kernel", "ub-overflows"): (
        "true",
        _TUNER_DROPS.format(tiles="block_l x block_c fp32 up to 256 x 256 (256 KB a tile)"),
    ),
    ("sgl-kernel-npu", "fused_variance_kernel", "ub-overflows"): (
        "true",
        _TUNER_DROPS.format(tiles="block_l whole rows of hidden_size fp32"),
    ),
}
_TEST_POSITIONS = (
    "the kernel reads {what} for the test's inputs, on an NPU too: the test gives a token "
    "a local position larger than its index in the batch ({how}), so its request's first "
    "token lies before index 0; the kernel is right for positions vLLM produces, the "
    "test's data is not (its torch reference skips such reads)"
)
SANITIZER_VERDICTS: dict[tuple[str, str, str], tuple[str, str]] = {
    ("vllm-ascend", "_bad_words_kernel", "out-of-bounds"): (
        "true (test inputs)",
        _TEST_POSITIONS.format(
            what="input_ids[-1]",
            how="expanded_local_pos = bad_word_length - 1 for every token, tokens 0 and 1 included",
        ),
    ),
    ("vllm-ascend", "_penalties_kernel", "out-of-bounds"): (
        "true (test inputs)",
        _TEST_POSITIONS.format(
            what="token_ids[-2]", how="random positions 0..num_speculative_tokens"
        ),
    ),
}


def _gate_cell(cpu: dict) -> str:
    compiled = cpu.get("compiled") or {}
    if not compiled:
        return "?"
    return (
        f"{compiled.get('specialisations')} ({compiled.get('rejected')} rejected, "
        f"{compiled.get('not_compiled')} not loadable, {compiled.get('ub_overflows', 0)} "
        "over the UB)"
    )


def _strict_failures(cpu: dict) -> list[dict]:
    return [f for f in cpu["failures"] if "(--ascend-compile=strict)" in f["text"]]


def _sanitizer_cell(suite: str, cpu: dict) -> str:
    summary = cpu.get("sanitizer_summary") or {}
    if not summary:
        return "no report"
    findings = cpu.get("sanitizer") or []
    verdicts = [
        SANITIZER_VERDICTS.get(_finding_key(suite, f), ("not judged",))[0] for f in findings
    ]
    judged = ", ".join(f"{verdicts.count(v)} {v}" for v in sorted(set(verdicts)))
    return (
        f"{summary.get('launches', 0):,} launches of {summary.get('kernels', 0)} kernels: "
        f"{len(findings)} findings" + (f" ({judged})" if judged else "")
    )


def _finding_key(suite: str, finding: dict) -> tuple[str, str, str]:
    return (suite, finding["kernel"], finding["kind"])


def write_markdown(results: list[dict]) -> str:
    lines = [
        "# NPU test suites on a CPU: `pytest --ascend-cpu-device`, the strict compile gate "
        "and the sanitizer",
        "",
        "Written by `python benchmarks/sanitizer_suites.py MIRROR_ROOT` (mirrors of the "
        "public repositories; their code is not part of this repository). Each suite ran "
        "with `--ascend-cpu-device --ascend-compile=strict --ascend-sanitize=report` (A2, "
        "kernels under triton-ascend's interpreter, each specialisation lowered through its "
        "front end, every memory access checked), pytest-timeout per test and a cap on the "
        "run (then pytest is interrupted and what finished is counted), and as plain "
        "`pytest` for comparison. Machine: 2 cores shared with other jobs, so times are "
        "indicative. 'strict failures' counts the tests strict mode failed that would "
        "otherwise have passed or failed for a reason of their own; each specialisation it "
        "fails a test for, and each sanitizer finding, is listed under its suite with the "
        "verdict given after reading the kernel.",
        "",
        "| suite | commit | tests run | passed | failed | errors | skipped | "
        "specialisations compiled | strict failures | sanitizer | time, opt-in | time, plain |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        cpu, plain = r["cpu"], r["plain"]
        cap = " (capped)" if cpu["capped"] else ""
        if cpu.get("exit") == -signal.SIGKILL and not cpu["capped"]:
            cap = " (killed by SIGKILL before the cap)"
        plain_text = f"{plain['seconds']} s: {plain['tests']} tests, {plain['passed']} passed"
        if plain["reason"]:
            plain_text += f"; stops at `{plain['reason'][:80]}`"
        lines.append(
            f"| {r['suite']} | `{r['commit'][:12]}` | {cpu['tests']} | {cpu['passed']} | "
            f"{cpu['failed']} | {cpu['errors']} | {cpu['skipped']} | {_gate_cell(cpu)} | "
            f"{len(_strict_failures(cpu))} | {_sanitizer_cell(r['suite'], cpu)} | "
            f"{cpu['seconds']} s{cap} | {plain_text} |"
        )
    for r in results:
        lines += _suite_section(r)
    return "\n".join(lines) + "\n"


def _suite_section(r: dict) -> list[str]:
    cpu, suite = r["cpu"], r["suite"]
    env = r.get("environment") or {}
    classes = classify(cpu["failures"], SUITE_CLASSES.get(suite, []))
    lines = [
        "",
        f"## {suite}",
        "",
        f"* Selected: {r['selection']}.",
        f"* Command: `{cpu['command']}`",
    ]
    if env:
        lines.append(
            f"* Run on {env['date']}: ascend-lint `{env['ascend_lint_commit']}` (its "
            f"sanitizer last changed in `{env['sanitizer_commit'].split()[0]}`), Python "
            f"{env['python']}, torch "
            f"{env['torch']}, triton-ascend {env['triton-ascend']}, pytest {env['pytest']}"
            + (f", vllm {env['vllm']}" if suite == "vllm-ascend" and env.get("vllm") else "")
            + "."
        )
    if r["packages"]:
        lines.append(f"* Installed for it: {r['packages']}.")
    if r.get("note"):
        lines.append(f"* Note: {r['note']}.")
    lines += ["", "| failure class | count | why | example |", "| --- | --- | --- | --- |"]
    for name, entry in sorted(classes.items(), key=lambda kv: -kv[1]["count"]):
        lines.append(f"| {name} | {entry['count']} | {entry['why']} | `{entry['example'][-90:]}` |")
    gate = cpu.get("gate") or []
    lines += ["", "Compile gate, what strict mode fails a test for:", ""]
    if not gate:
        lines.append("nothing: no specialisation rejected, unloadable or over the UB.")
    else:
        lines += [
            "| kernel | status | reason | tests | in an autotuner's trial | verdict |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for g in gate:
            verdict = GATE_VERDICTS.get((suite, g["kernel"], g["status"]))
            verdict_text = f"{verdict[0]}: {verdict[1]}" if verdict else "not judged"
            where = f"`{Path(g['file']).name}:{g['def_line']}` {g['kernel']}"
            reason = (g["reason"] or g["message"]).replace("\n", " ").replace("|", "/")[:160]
            trial = (
                "yes (dropped, as triton-ascend's tuner drops it)"
                if g["dropped_by_autotuner"]
                else "no"
            )
            lines.append(
                f"| {where} | {g['status']} | {reason} | {g['tests']} | {trial} | {verdict_text} |"
            )
    findings = cpu.get("sanitizer") or []
    summary = cpu.get("sanitizer_summary") or {}
    lines += ["", "Sanitizer:", ""]
    if summary:
        lines.append(
            f"{summary.get('launches', 0):,} launches of {summary.get('kernels', 0)} kernels "
            f"checked ({summary.get('programs', 0):,} programs, {summary.get('loads', 0):,} "
            f"loads, {summary.get('stores', 0):,} stores, {summary.get('atomics', 0):,} "
            f"atomics; {summary.get('duplicate_store_lanes', 0):,} lanes stored again with "
            f"the same bytes, not findings): {len(findings)} findings."
        )
    else:
        lines.append("no report (the run ended before writing it).")
    if findings:
        lines += [
            "",
            "| kind | kernel | tensor | where | lanes | tests | verdict | example |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for f in findings:
            verdict = SANITIZER_VERDICTS.get(_finding_key(suite, f))
            verdict_text = f"{verdict[0]}: {verdict[1]}" if verdict else "not judged"
            lines.append(
                f"| {f['kind']} | {f['kernel']} | {f['tensor']} | "
                f"`{Path(f['path']).name}:{f['line']}` {f['op']} | {f['lanes']:,} | "
                f"{f['tests']} | {verdict_text} | `{f['test'][-80:]}` |"
            )
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror_root", type=Path)
    parser.add_argument("--suite", action="append", choices=sorted(SUITES))
    parser.add_argument("--compile", choices=("report", "strict"), default="strict")
    parser.add_argument("--sanitize", choices=("report", "strict", "off"), default="report")
    parser.add_argument("--cap-minutes", type=float, default=20.0)
    parser.add_argument("--test-timeout", type=int, default=60)
    # without xdist by default: an interrupted xdist run does not stop promptly
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--scratch", type=Path, default=None)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="take the opt-in run from SCRATCH/NAME-cpu.xml and NAME-cpu.json (command, "
        "seconds, capped, exit) where they exist instead of running it again",
    )
    parser.add_argument(
        "--table-only", action="store_true", help="rewrite the table from the last results"
    )
    options = parser.parse_args(argv)
    scratch = options.scratch or Path(tempfile.mkdtemp(prefix="npu-suites-"))
    for name in [] if options.table_only else options.suite or sorted(SUITES):
        print(f"== {name}", flush=True)
        result = run_suite(options.mirror_root, SUITES[name], scratch, options)
        # read again: another invocation (--suite) may have written one meanwhile
        previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        previous[name] = result
        RESULTS.write_text(json.dumps(previous, indent=2) + "\n")
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if options.table_only and options.scratch:
        for name, result in previous.items():  # recount from the runs' junit files
            for mode in ("cpu", "plain"):
                junit = options.scratch / f"{name}-{mode}.xml"
                if junit.exists():
                    result[mode].update(read_junit(junit))
        RESULTS.write_text(json.dumps(previous, indent=2) + "\n")
    for name, result in previous.items():  # the words about a suite are the script's
        if name in SUITES:
            suite = SUITES[name]
            result.update(selection=suite.selection, note=suite.note, packages=suite.packages)
    OUT.write_text(write_markdown([previous[n] for n in sorted(previous)]))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
