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
FLAGGEMS = "flagos-ai+FlagGems"
VLLM_ASCEND = "vllm-project+vllm-ascend"
LIGER = "linkedin+Liger-Kernel"
MOJO = "XPU-Forces+mojo_opset"
VERL = "verl-project+verl"


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
    tree: str | None = None  # the package folder taken with the file, for its imports


MOVE_CACHE_ARGS = {
    "dst_indices_ptr": "*i64",
    "src_indices_ptr": "*i64",
    "last_steps_ptr": "*i64",
}
# FlagGems tests/test_nonzero_static.py: input (128, 4096), size=4096 takes the Ascend
# small-counts path with linear output: 128 blocks of 4096, coordinates expanded per axis
NONZERO = dict(
    size=4096,
    num_blocks=128,
    ndim=2,
    D1=4096,
    D2=1,
    D3=1,
    fill_value=-1,
    PREFIX_BLOCK_SIZE=128,
)
NONZERO_ARGS = {"linear_ptr": "*i64", "counts_ptr": "*i64", "out_ptr": "*i64"}
# vLLM-Ascend issue #12733: NeoX RoPE, 64 query and 64 key heads, head_dim = rotary_dim =
# 192 (padded to 256), bf16, positions into a cos/sin cache
ROPE = dict(
    n_qh=64,
    n_kh=64,
    hd=192,
    rope_dim=192,
    pad_rope_dim=256,
    IS_NEOX_STYLE=True,
    USE_COS_SIN=True,
)
ROPE_ARGS = {
    "q_ptr": "*bf16",
    "k_ptr": "*bf16",
    "cos_sin_ptr": "*bf16",
    "pos_ptr": "*i64",
    "q_row_stride": "i64",
    "k_row_stride": "i64",
    "cos_sin_row_stride": "i64",
}
# vLLM-Ascend issue #6395: Qwen3-Next at TP 8 (4 value heads a rank), bf16 a/b, over
# 65,535 tokens through fused_gdn_gating_patch (BLK_HEADS 8 covers the 4 heads)
GDN_ARGS = {
    "g": "*fp32",
    "beta_output": "*bf16",
    "A_log": "*fp32",
    "a": "*bf16",
    "b": "*bf16",
    "dt_bias": "*bf16",
}
# Liger-Kernel test_float32_internal: bf16 logits, n_cols = 128,256, mean reduction
LIGER_CE = dict(
    lse_square_scale=0.0,
    label_smoothing=0.0,
    reduction="mean",
    RETURN_Z_LOSS=0,
    RETURN_TOKEN_ACCURACY=0,
    HAS_WEIGHT=False,
    HAS_SOFTCAPPING=False,
    HAS_GRADIENTS=True,
)
LIGER_CE_ARGS = {
    "X_ptr": "*bf16",
    "Y_ptr": "*i64",
    "weight_ptr": "*bf16",
    "softcap": "fp32",
    "weight_sum": "fp32",
    "sum_non_ignore_weight": "fp32",
}
# mojo_opset test_rmsnorm_forward_backward_diff: shape (64, 8192), fp32 input, fp32
# weight, llama casting (the test's dtypes are fp32 and bf16; fp32 holds the most UB).
# 687e26da is on the project's hw/950-perf branch only (its Ascend 950 work), so these
# cases are checked against A5 (ascend910_95), where triton-ascend turns multibuffer off
MOJO_RMS = "mojo_opset/backends/ttx/kernels/npu/rmsnorm.py"
MOJO_TARGET = "ascend910_95"
VERL_ARGS = {
    "hidden_ptr": "*bf16",
    "weight_ptr": "*bf16",
    "labels_ptr": "*i64",
    "rcp_temperature": "fp32",
    **{
        f"stride_{name}": "i64"
        for name in (
            "hidden_m",
            "hidden_k",
            "weight_n",
            "weight_k",
            "max_m",
            "max_n",
            "accu_m",
            "accu_n",
            "entropy_b_m",
            "entropy_b_n",
            "global_logprobs",
        )
    },
}

# sgl-kernel-npu b872afda (#644), _argmax_prob_kernel: its commit message reports that a
# 16,384-lane tile compiles for 2-byte logits on a 910B3 but overflows for fp32, and the
# code sizes the tile to 32 KiB, "the widest tile that still compiles for a 4-byte dtype"
SGL_ARGMAX = "python/sgl_kernel_npu/sgl_kernel_npu/sample/argmax_softmax_prob.py"
SGL_ARGMAX_COMMIT = "b872afda5179ffb455736297bd6bdbbcf8a200d4"
SGL_ARGMAX_ARGS = {"argmax_ptr": "*i64", "prob_ptr": "*fp32"}  # logits: per case

CASES = [
    *(
        Case(
            f"sgl-kernel-npu _argmax_prob_kernel, {dtype}, {block:,}-lane tile",
            "_argmax_prob_kernel",
            SGL_ARGMAX,
            {"BLOCK_V": block},
            outcome,
            f"sgl-kernel-npu b872afda (#644): {reported}",
            args={**SGL_ARGMAX_ARGS, "logits_ptr": f"*{dtype}"},
            repo=SGL,
            commit=SGL_ARGMAX_COMMIT,
            tree="python/sgl_kernel_npu",
        )
        for dtype, block, outcome, reported in (
            ("bf16", 16384, "compiled", "16384 compiles for 2-byte dtypes (910B3)"),
            ("fp32", 16384, "overflowed", "16384 overflows for fp32 (no bits printed)"),
            ("fp32", 8192, "compiled", "a 32 KiB tile compiles for fp32"),
        )
    ),
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
        tree="python/sgl_kernel_npu",
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
        tree="python/sgl_kernel_npu",
    ),
    Case(
        "FlagGems _nonzero_static_expand_coordinates_kernel (afceaca2's parent)",
        "_nonzero_static_expand_coordinates_kernel",
        "src/flag_gems/ops/nonzero_static.py",
        {**NONZERO, "BLOCK_SIZE": 1024},
        "overflowed",
        "FlagGems afceaca2 'Avoid Ascend nonzero_static CANN9 UB overflow' (no bits printed)",
        args=NONZERO_ARGS,
        repo=FLAGGEMS,
        commit="546604ba0727426f4db955673c39656ebacbbfe2",
        tree="src/flag_gems",
    ),
    Case(
        "FlagGems _nonzero_static_expand_coordinates_kernel (afceaca2 fix)",
        "_nonzero_static_expand_coordinates_kernel",
        "src/flag_gems/ops/nonzero_static.py",
        {**NONZERO, "BLOCK_SIZE": 512},
        "compiled",
        "FlagGems afceaca2 (Ascend expand block 512)",
        args=NONZERO_ARGS,
        repo=FLAGGEMS,
        commit="afceaca23cc43fa16611803ef759015bc88a7f11",
        tree="src/flag_gems",
    ),
    Case(
        "vLLM-Ascend _triton_rope, head_dim 192, A3",
        "_triton_rope",
        "vllm_ascend/ops/triton/rope.py",
        {**ROPE, "BLOCK_SIZE_HEAD": 64},
        "overflowed",
        "vLLM-Ascend issue #12733 (an overflow of about 2 KB; no exact bits)",
        target="ascend910_93",
        args=ROPE_ARGS,
        repo=VLLM_ASCEND,
        commit="fabc77a96978972c9be0341bd504fabf065abe20",
        tree="vllm_ascend",
    ),
    Case(
        "vLLM-Ascend _triton_rope, head_dim 192, A3 (PR #12740 tile)",
        "_triton_rope",
        "vllm_ascend/ops/triton/rope.py",
        {**ROPE, "BLOCK_SIZE_HEAD": 16},
        "compiled",
        "vLLM-Ascend PR #12740 (BLOCK_SIZE_HEAD 16 for head_dim >= 192)",
        target="ascend910_93",
        args=ROPE_ARGS,
        repo=VLLM_ASCEND,
        commit="fabc77a96978972c9be0341bd504fabf065abe20",
        tree="vllm_ascend",
    ),
    Case(
        "vLLM-Ascend fused_gdn_gating_kernel, BLK_BATCHES 1024",
        "fused_gdn_gating_kernel",
        "vllm_ascend/ops/triton/fused_gdn_gating.py",
        dict(
            NUM_HEADS=4,
            NUM_BATCHES=131072,
            beta=1.0,
            threshold=20.0,
            BLK_HEADS=8,
            COL_ITER=1,
            BLK_BATCHES=1024,
            ROW_ITER=4,
        ),
        "overflowed",
        "vLLM-Ascend issue #6395 (BLK_BATCHES divisor // 4)",
        reported_bits=2_106_368,
        args=GDN_ARGS,
        repo=VLLM_ASCEND,
        commit="78af0c30a39800496a1b2415225c2f1515a20bca",
        tree="vllm_ascend",
    ),
    Case(
        "vLLM-Ascend fused_gdn_gating_kernel, BLK_BATCHES 64 (9216e1b0)",
        "fused_gdn_gating_kernel",
        "vllm_ascend/ops/triton/fused_gdn_gating.py",
        dict(
            NUM_HEADS=4,
            NUM_BATCHES=131072,
            beta=1.0,
            threshold=20.0,
            BLK_HEADS=8,
            COL_ITER=1,
            BLK_BATCHES=64,
            ROW_ITER=64,
        ),
        "compiled",
        "vLLM-Ascend PR #6933 (BLK_BATCHES capped at 64)",
        args=GDN_ARGS,
        repo=VLLM_ASCEND,
        commit="9216e1b0505c7e290d8c02cc64cb8817bfdd49f5",
        tree="vllm_ascend",
    ),
    Case(
        "verl efficient_entropy_kernel_general_mainloop (its autotune config)",
        "efficient_entropy_kernel_general_mainloop",
        "verl/utils/kernel/kernels.py",
        {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32, "USE_TMA": False},
        "overflowed",
        "verl issue #7950 (910B, CANN 9.0.0)",
        reported_bits=8_577_280,
        args=VERL_ARGS,
        repo=VERL,
        commit="1dda039b9c6311889a9c9a26040677e1254814f9",
        tree="verl",
    ),
    Case(
        "Liger-Kernel liger_cross_entropy_kernel, BLOCK_SIZE 32768",
        "liger_cross_entropy_kernel",
        "src/liger_kernel/ops/cross_entropy.py",
        {**LIGER_CE, "BLOCK_SIZE": 32768},
        "overflowed",
        "Liger-Kernel PR #1040 'FIX CE ub overflow on NPU' (no bits printed)",
        args=LIGER_CE_ARGS,
        repo=LIGER,
        commit="4444fdfb078dfa9aa1dbb3e1b703080516b48c50",
        tree="src/liger_kernel",
    ),
    Case(
        "Liger-Kernel liger_cross_entropy_kernel, BLOCK_SIZE 4096 (PR #1040)",
        "liger_cross_entropy_kernel",
        "src/liger_kernel/ops/cross_entropy.py",
        {**LIGER_CE, "BLOCK_SIZE": 4096},
        "compiled",
        "Liger-Kernel PR #1040 (BLOCK_SIZE 4096 on NPU)",
        args=LIGER_CE_ARGS,
        repo=LIGER,
        commit="333b9cbbc4d4fc5cdcc83703fc7ae10ec59393a5",
        tree="src/liger_kernel",
    ),
    Case(
        "mojo_opset _rmsnorm_fwd_kernel, 8192 columns, 4 rows",
        "_rmsnorm_fwd_kernel",
        MOJO_RMS,
        {"casting_mode_int": 0, "BLOCK_SIZE_N": 8192, "BLOCK_SIZE_M": 4},
        "overflowed",
        "mojo_opset 687e26da 'fix rms fwd and bwd ub overflow', hw/950-perf branch (no bits printed)",
        args={"eps": "fp32", "offset": "fp32"},
        target=MOJO_TARGET,
        repo=MOJO,
        commit="71999291b40f0383643bd0f148f3096f0d71a3fe",
        tree="mojo_opset",
    ),
    Case(
        "mojo_opset _rmsnorm_fwd_kernel, 8192 columns, 2 rows (687e26da)",
        "_rmsnorm_fwd_kernel",
        MOJO_RMS,
        {"casting_mode_int": 0, "BLOCK_SIZE_N": 8192, "BLOCK_SIZE_M": 2},
        "compiled",
        "mojo_opset 687e26da (table entry 8192: 4 -> 2)",
        args={"eps": "fp32", "offset": "fp32"},
        target=MOJO_TARGET,
        repo=MOJO,
        commit="687e26da2f67cb7be3aa1c8615e84bd555a1e765",
        tree="mojo_opset",
    ),
    Case(
        "mojo_opset _rmsnorm_bwd_kernel, 8192 columns",
        "_rmsnorm_bwd_kernel",
        MOJO_RMS,
        {
            "casting_mode_int": 0,
            "X_dtype": "tl.float32",
            "BLOCK_SIZE_N": 8192,
            "BLOCK_SIZE_M": 1,
        },
        "overflowed",
        "mojo_opset 687e26da (whole-row backward up to 10240 columns; no bits printed)",
        args={"offset": "fp32"},
        target=MOJO_TARGET,
        repo=MOJO,
        commit="71999291b40f0383643bd0f148f3096f0d71a3fe",
        tree="mojo_opset",
    ),
    Case(
        "mojo_opset _rmsnorm_bwd_large_cols_kernel, 2048-column chunks (687e26da)",
        "_rmsnorm_bwd_large_cols_kernel",
        MOJO_RMS,
        {
            "casting_mode_int": 0,
            "X_dtype": "tl.float32",
            "BLOCK_SIZE_N": 2048,
            "BLOCK_SIZE_M": 2,
            "IS_DETERMINISTIC": False,
        },
        "compiled",
        "mojo_opset 687e26da (backward chunked above 2048 columns)",
        args={"offset": "fp32"},
        target=MOJO_TARGET,
        repo=MOJO,
        commit="687e26da2f67cb7be3aa1c8615e84bd555a1e765",
        tree="mojo_opset",
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
    """The kernel's file: under `benchmarks/ub_cases/`, or taken out of the repository's
    bare mirror at the case's commit, with the package folder around it so that its
    imports of sibling modules resolve as they do in the repository."""
    if case.repo is None:
        return CASES_DIR / case.file
    git_dir = mirror_root / case.repo / "repo"
    if not git_dir.is_dir():
        return None
    dest = work / case.repo / case.commit[:12]
    target = dest / case.file
    if not target.exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", case.commit, case.tree or case.file],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return target


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


def within(case: Case, result: dict) -> bool | None:
    """Whether the bounds hold the compiler's reported bits (None: nothing reported)."""
    if case.reported_bits is None or result.get("ub_bits_lower") is None:
        return None
    upper = result.get("ub_bits_upper")
    return result["ub_bits_lower"] <= case.reported_bits and (
        upper is None or case.reported_bits <= upper
    )


def _bits(value) -> str:
    return "-" if value is None else f"{value:,}"


def table(rows: list[tuple[Case, dict | None]], argv: list[str]) -> str:
    import triton

    from ascend_lint import __version__

    judged = [(c, r) for c, r in rows if r is not None]
    definite = [(c, r) for c, r in judged if r.get("verdict") in ("fits", "overflows")]
    wrongs = [(c, r) for c, r in judged if wrong(r.get("verdict"), c.outcome)]
    reported = [(c, r) for c, r in judged if within(c, r) is not None]
    held = [(c, r) for c, r in reported if within(c, r)]
    real = [(c, r) for c, r in judged if c.repo]
    real_definite = [(c, r) for c, r in real if r.get("verdict") in ("fits", "overflows")]
    lines = [
        "# UB table: public ub-overflow cases through `ascend-lint compile`",
        "",
        f"* command: `{' '.join(['python benchmarks/ub_table.py', *argv])}`",
        f"* ascend-lint {__version__}, triton-ascend {triton.__version__} (ttir -> ttadapter "
        f"on CPU, Ascend910B4 front end), Python {platform.python_version()}",
        f"* date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "* lower: peak of the buffers that must be live at once: allocs and computed "
        "tensors from definition to last use (DMA buffers and stored values x2 under "
        "multibuffer inside scf.for loops, where the compiler multibuffers), a result "
        "taking a dying operand's place where it can, fills of run-time scalars and "
        "broadcasts that only element-wise arithmetic reads left out (the compiler folds "
        "them in), an argmax's index input left out (the compiler's reduction makes its "
        "own indices), plus each op's certain temporaries (compares, remainders, "
        "reductions, broadcasts, narrowing casts, stride-aligned buffers); upper: the "
        "same with no reuse between an op's operands and result, every broadcast, fills "
        "that a compare, select, cast, store or reduction reads, the argmax's indices, "
        "and every temporary an op's rewrite creates; on A5 (no multibuffer by default, no known reuse) the sum of all buffers "
        "(- where the IR hides buffers: a library call, an unknown op, a dynamic shape); "
        "rows padded to 32 bytes; verdict: overflows (lower > capacity), fits (upper <= "
        "capacity), else uncertain",
        "* the op rules follow the compiler's public source (AscendNPU-IR: HFusion "
        "Normalize and InlineBrc, HIVM extra-buffer sizes, InlineOTFBroadcast, "
        "MarkMultiBuffer, stride alignment); see `ascend_lint/ub_model.py`",
        "* rebuilt: a kernel written here from the issue's description "
        "(`benchmarks/ub_cases/`); the others are the projects' own files at the commit shown",
        "",
        f"{len(judged)} cases lowered: {len(definite)} definite verdicts, "
        f"{len(wrongs)} wrong (fits for a case that overflowed, or overflows for one that "
        f"compiled); the projects' own kernels: {len(real_definite)} definite of "
        f"{len(real)}; the compiler's reported bits within the bounds in {len(held)} of "
        f"{len(reported)} cases that print them.",
        "",
        "| case | config | target | public outcome | reported bits | lower bits | upper bits "
        "| verdict | reported within bounds | source |",
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
        ratio = {None: "-", True: "yes", False: "NO"}[within(case, result)]
        if within(case, result) is not None:
            ratio += f" (lower {100.0 * result['ub_bits_lower'] / case.reported_bits:.0f}%)"
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
    ap.add_argument("--only", help="run the cases whose name contains this text")
    args = ap.parse_args(argv)
    rows: list[tuple[Case, dict | None]] = []
    cases = [c for c in CASES if not args.only or args.only in c.name]
    with tempfile.TemporaryDirectory() as work:
        for case in cases:
            path = materialise(case, args.mirror_root, Path(work))
            result = None if path is None else run(case, path)
            rows.append((case, result))
            shown = "mirror absent" if result is None else result.get("verdict")
            print(f"{case.name}: {shown}", file=sys.stderr)
    text = table(rows, argv)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    judged = [(c, r) for c, r in rows if r is not None]
    failed = any(wrong(r.get("verdict"), c.outcome) or within(c, r) is False for c, r in judged)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
