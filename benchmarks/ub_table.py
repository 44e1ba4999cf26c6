"""The UB table: public ub-overflow cases lowered with `ascend-lint compile`, their UB
bounds and verdict next to what the compiler on the NPU reported.

    python benchmarks/ub_table.py [--mirror-root /work/.mirror] [--out benchmarks/UB_TABLE.md]

Each case is one kernel specialisation: a real kernel taken from a bare git mirror at a
pinned commit (skipped, and said so, where the mirror is absent) or a kernel rebuilt
here from an issue's description (`benchmarks/ub_cases/`).  A case's public outcome is
what its source reports: the compiler's "ub overflow, requires N bits" (N in the
"reported" column), or that the configuration compiled.  A definite verdict that
contradicts the outcome (fits for one that overflowed, overflows for one that compiled)
is counted as wrong; uncertain is never wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = REPO_ROOT / "benchmarks" / "ub_cases"
SGL = "sgl-project+sgl-kernel-npu"
SGL_MAMBA = "python/sgl_kernel_npu/sgl_kernel_npu/mamba/mamba_state_update_triton.py"


@dataclass
class Case:
    name: str
    kernel: str
    file: str  # under CASES_DIR, or a path inside the mirror `repo` at `commit`
    constexpr: dict
    outcome: str  # "overflowed" | "compiled"
    source: str  # where the outcome is reported
    target: str = "ascend910b"
    reported_bits: int | None = None
    args: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    repo: str | None = None
    commit: str | None = None


MOVE_CACHE_ARGS = {
    "dst_indices_ptr": "*i64",
    "src_indices_ptr": "*i64",
    "last_steps_ptr": "*i64",
}

CASES = [
    Case(
        "sgl-kernel-npu move_cache_dynamic_last_kernel_h_block (main)",
        "move_cache_dynamic_last_kernel_h_block",
        SGL_MAMBA,
        {"H_BLOCK_SIZE": 2, "BLOCK_V": 128, "BLOCK_K": 128},
        "overflowed",
        "sgl-kernel-npu PR #477 (fp32 state)",
        reported_bits=2_097_152,
        args=MOVE_CACHE_ARGS,
        repo=SGL,
        commit="f425bdf1e191a7682296d3b2ed0b927d4e37d671",
    ),
    Case(
        "sgl-kernel-npu move_cache_dynamic_last_kernel_h_block (PR #477 fix)",
        "move_cache_dynamic_last_kernel_h_block",
        SGL_MAMBA,
        {"H_BLOCK_SIZE": 2, "BLOCK_V": 64, "BLOCK_K": 64},
        "compiled",
        "sgl-kernel-npu PR #477 (V, K tiled, blocks capped at 64)",
        args=MOVE_CACHE_ARGS,
        repo=SGL,
        commit="b19891c11accebe1784bd78fd162360e00bc3f5d",
    ),
    Case(
        "triton-ascend #302: one 48,000-value fp32 tile (rebuilt)",
        "copy_tile_kernel",
        "issue302_copy.py",
        {"BLOCK": 48000},
        "overflowed",
        "triton-ascend issue #302",
        reported_bits=3_072_000,
    ),
    Case(
        "triton-ascend #2246: bf16 online LSE, tl.static_range, A5 (rebuilt)",
        "lse_static_range_kernel",
        "issue2246_online_softmax.py",
        {"N": 151936, "BLOCK_N": 8192},
        "overflowed",
        "triton-ascend issue #2246",
        target="ascend910_95",
        reported_bits=4_333_568,
        args={"x_ptr": "*bf16"},
    ),
    Case(
        "triton-ascend #2246: same, tl.static_range, A3 (rebuilt)",
        "lse_static_range_kernel",
        "issue2246_online_softmax.py",
        {"N": 151936, "BLOCK_N": 8192},
        "compiled",
        "triton-ascend issue #2246",
        target="ascend910_93",
        args={"x_ptr": "*bf16"},
    ),
    Case(
        "triton-ascend #2246: same, tl.range, A5 (rebuilt)",
        "lse_range_kernel",
        "issue2246_online_softmax.py",
        {"N": 151936, "BLOCK_N": 8192},
        "compiled",
        "triton-ascend issue #2246",
        target="ascend910_95",
        args={"x_ptr": "*bf16"},
    ),
    Case(
        "triton-ascend #1638: tl.flip of a 64x64 fp32 tile (core rebuilt)",
        "flip_tile_kernel",
        "issue1638_flip.py",
        {"BLOCK": 64},
        "overflowed",
        "triton-ascend issue #1638 (whole kernel, multibuffer=False)",
        options={"multibuffer": False},
    ),
    Case(
        "triton-ascend #1638: the same at 32x32 (core rebuilt)",
        "flip_tile_kernel",
        "issue1638_flip.py",
        {"BLOCK": 32},
        "compiled",
        "triton-ascend issue #1638 (whole kernel, multibuffer=False)",
        options={"multibuffer": False},
    ),
]


def materialise(case: Case, mirror_root: Path, work: Path) -> Path | None:
    if case.repo is None:
        return CASES_DIR / case.file
    git_dir = mirror_root / case.repo / "repo"
    if not git_dir.is_dir():
        return None
    dest = work / case.repo / case.commit[:12] / Path(case.file).name
    if not dest.exists():
        text = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{case.commit}:{case.file}"],
            capture_output=True,
            check=True,
        ).stdout
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(text)
    return dest


def command(case: Case, path: Path) -> list[str]:
    argv = [sys.executable, "-m", "ascend_lint", "compile", f"{path}::{case.kernel}"]
    for name, value in case.constexpr.items():
        argv += ["--constexpr", f"{name}={value}"]
    for name, typ in case.args.items():
        argv += ["--arg", f"{name}={typ}"]
    for name, value in case.options.items():
        argv += ["--option", f"{name}={value}"]
    return [*argv, "--target", case.target, "--output-format", "json"]


def run(case: Case, path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        command(case, path), capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=600
    )
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"verdict": None, "error": (done.stdout + done.stderr)[-500:]}


def wrong(verdict: str | None, outcome: str) -> bool:
    return (verdict == "fits" and outcome == "overflowed") or (
        verdict == "overflows" and outcome == "compiled"
    )


def _bits(value) -> str:
    return "-" if value is None else f"{value:,}"


def table(rows: list[tuple[Case, dict | None]], argv: list[str]) -> str:
    import triton

    from ascend_lint import __version__

    judged = [(c, r) for c, r in rows if r is not None]
    definite = [(c, r) for c, r in judged if r.get("verdict") in ("fits", "overflows")]
    wrongs = [(c, r) for c, r in judged if wrong(r.get("verdict"), c.outcome)]
    lines = [
        "# UB table: public ub-overflow cases through `ascend-lint compile`",
        "",
        f"* command: `{' '.join(['python benchmarks/ub_table.py', *argv])}`",
        f"* ascend-lint {__version__}, triton-ascend {triton.__version__} (ttir -> ttadapter "
        f"on CPU, Ascend910B4 front end), Python {platform.python_version()}",
        f"* date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "* lower: peak of the `memref.alloc` buffers live at once (32-byte rows, DMA buffers "
        "x2 under multibuffer); upper: every alloc plus the peak of live tensor values and "
        "op scratch (- where the IR hides buffers: a library call, an unknown op, a dynamic "
        "shape); verdict: overflows (lower > capacity), fits (upper <= capacity), else "
        "uncertain",
        "* rebuilt: a kernel written here from the issue's description "
        "(`benchmarks/ub_cases/`); the others are the projects' own files at the commit shown",
        "",
        f"{len(judged)} cases lowered: {len(definite)} definite verdicts, "
        f"{len(wrongs)} wrong (fits for a case that overflowed, or overflows for one that "
        "compiled).",
        "",
        "| case | config | target | public outcome | reported bits | lower bits | upper bits "
        "| verdict | lower vs reported | source |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case, result in rows:
        config = ", ".join(f"{k}={v}" for k, v in {**case.constexpr, **case.options}.items())
        where = f"{case.source}" + (
            f", {case.repo.split('+')[1]}@{case.commit[:10]}" if case.repo else ""
        )
        if result is None:
            lines.append(
                f"| {case.name} | {config} | {case.target} | {case.outcome} | "
                f"{_bits(case.reported_bits)} | - | - | not run: mirror absent | - | {where} |"
            )
            continue
        verdict = result.get("verdict") or f"error: {str(result.get('error'))[:80]}"
        if wrong(result.get("verdict"), case.outcome):
            verdict += " (WRONG)"
        ratio = "-"
        if case.reported_bits and result.get("ub_bits_lower"):
            ratio = f"{100.0 * result['ub_bits_lower'] / case.reported_bits:.1f}%"
        lines.append(
            f"| {case.name} | {config} | {case.target} | {case.outcome} | "
            f"{_bits(case.reported_bits)} | {_bits(result.get('ub_bits_lower'))} | "
            f"{_bits(result.get('ub_bits_upper'))} | {verdict} | {ratio} | {where} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "UB_TABLE.md")
    args = ap.parse_args(argv)
    rows: list[tuple[Case, dict | None]] = []
    with tempfile.TemporaryDirectory() as work:
        for case in CASES:
            path = materialise(case, args.mirror_root, Path(work))
            result = None if path is None else run(case, path)
            rows.append((case, result))
            shown = "mirror absent" if result is None else result.get("verdict")
            print(f"{case.name}: {shown}", file=sys.stderr)
    text = table(rows, argv)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    judged = [(c, r) for c, r in rows if r is not None]
    return 1 if any(wrong(r.get("verdict"), c.outcome) for c, r in judged) else 0


if __name__ == "__main__":
    sys.exit(main())
