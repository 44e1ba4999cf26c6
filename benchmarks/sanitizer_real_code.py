"""The sanitizer on public Ascend Triton code: correct kernels, and kernels at the parent
and at the fix of known memory bugs, each run on CPU under triton-ascend's interpreter
through the project's own launch function, with ``ascend_lint.sanitizer.Sanitizer`` on.

    python benchmarks/sanitizer_real_code.py MIRROR_ROOT [--case ID ...] [--out FILE]

MIRROR_ROOT holds one git directory per repository, as ``<owner>+<name>/repo`` (a bare
snapshot), ``<owner>+<name>`` or ``<owner>/<name>.git``.  Each case names a repository and
a commit; the files it needs are taken out of the git directory with ``git archive`` into a
temporary directory (their package ``__init__`` files emptied, so that a kernel module
imports without the rest of its project), and the case runs in a child process with a time
limit.  The child runs the project's launch functions on small ordinary shapes (B >= 2,
ragged lengths where the op takes varlen input), compares the results with a torch
reference where one is cheap, and reports every finding.  The Markdown table on stdout (or
``--out``) gives per case the findings (kind, file:line, tensor), the stores that only
repeated another program's bytes (duplicate work, listed as not a finding) and the verdict
written below in ``CASES`` after reading the code; an entry no verdict matches is printed
as "not judged".  Besides the ``kernels`` extra, FLA's cases import ``einops``.

What the child installs so that Ascend code imports and runs on a CPU (none of it changes
what a kernel computes or which addresses it touches):
* a stand-in ``torch.npu`` (device index 0, no device) and an active driver whose device
  properties are an Atlas A2's (24 AI cores, 48 vector cores, 192 KiB UB) and whose
  benchmarker runs each autotune config once (ascend-lint's ``run_each_config_once``);
* stand-ins for modules a kernel module imports but its kernels do not use (vllm,
  torch_npu, the rest of vllm_ascend / mojo_opset / sgl_kernel_npu);
* interpreter fills for triton-ascend 3.2.0's interpreter: launch options it does not
  know (``enable_ubuf_saving``, ``multibuffer`` ...) are dropped; ``for`` loop variables over
  ``range``/``tl.range`` are i32 tensors as on the device; reductions over a negative axis;
  ``~`` on int1; builtins imported by name (``from triton.language.math import tanh``);
  extern elementwise math (``__hmf_tanhf`` ...) evaluated with numpy; ``tl.float32(x)``;
  the Ascend language extensions ``get_element`` / ``extract_slice`` / ``insert_slice``.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field

MARK = "@@SANITIZER_REAL_CODE@@"
DUPLICATE_STORE = "duplicate-store"  # ascend_lint.sanitizer.DUPLICATE_STORE, in the table


# -- the cases --------------------------------------------------------------------------
@dataclass
class Verdict:
    kind: str
    file: str  # basename of the file the finding is in
    tensor: str
    true: bool
    why: str


@dataclass
class Case:
    id: str
    repo: str
    rev: str  # full commit id
    label: str
    paths: list
    env: str
    driver: str
    kernels: str
    shapes: str
    verdicts: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    env_vars: dict = field(default_factory=dict)
    src: str = ""  # the directory the child puts on sys.path, relative to the archive
    note: str = ""  # a verdict on what the case did not report
    blank: tuple = ("fla/__init__.py",)  # package __init__ files emptied; "all": every one archived


FLA = "fla-org/flash-linear-attention"
LIGER = "linkedin/Liger-Kernel"
VLLM = "vllm-project/vllm-ascend"
MOJO = "XPU-Forces/mojo_opset"
SGL = "sgl-project/sgl-kernel-npu"
TA = "Ascend/triton-ascend"

FLA_HEAD = "bc3b101dcb713ddc5bd8924b66754eb68b5ccf89"
LIGER_HEAD = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
VLLM_HEAD = "182b75ea84ff13ece27b57391331ef8935410aea"
MOJO_HEAD = "b97e98bff029ef568ec43f41439ff76171bea735"
SGL_HEAD = "f425bdf1e191a7682296d3b2ed0b927d4e37d671"
TA_HEAD = "eeb030e7bb71f8a251c5d378dbe2977e8b8dbb83"

V = Verdict
TILE_PAST_END = (
    "no finding: {}: every lane of those tiles is masked out by the `< n` row mask, an "
    "empty clipped copy"
)
LN_DUPLICATE = (
    "BT > BS: a program's tile overlaps its neighbour's rows and stores them again, every "
    "overlapped lane with the bytes already there: duplicate work, not a race"
)

RWKV_SPLIT = (
    "the lane indices are `//` and `%` of the flat offset (batch, token, feature), so the "
    "mask is none triton-ascend clips the copy by: it issues every lane of the BLOCK_SIZE "
    "block (its lowered IR loops over all of them), "
)
CONV_WEIGHT = (
    "`m_w = o_w >= 0` compares `tl.arange(0, BW) + W - BW`, a subtraction triton-ascend "
    "3.2's mask analysis does not follow (its TTIR keeps the `arith.subi`), so the whole "
    "[BD, BW] weight block is read: the rows o_d >= D of a block wider than D lie past "
    "weight's end; later releases bound such a copy by the parsed `o_d < D`"
)
CONV_LOOK_BACK = (
    "the forward look-back `o_t + i_w` (i_w < 0) masked by `o_x >= 0`: a compare of a "
    "tl.arange plus scalars, which the compiler clips the copy by (from row -(o_t0 + i_w)), "
    "so the rows before x are not read: no finding there"
)

CONV_DH0 = (
    "compute_dh0_kernel's `t < seq_len` row mask on a 2-token last sequence: row 40, one "
    "row past dy, is masked out entirely in both of its 32-column tiles, an empty clipped "
    "copy: no finding (the case repro-row-tail)"
)

RWKV_MASKED = [
    V(
        "masked-out-of-bounds",
        "channel_mixing.py",
        tensor,
        True,
        RWKV_SPLIT + what + " (in both versions: not part of #1103)",
    )
    for tensor, what in (
        (
            "x_ptr",
            "the tail block's lanes past x and, at the look-back `x_idx - hidden_dim` under "
            "`~is_first & is_valid`, the first token's 64 before it",
        ),
        ("x_prev_ptr", "at `batch_idx * hidden_dim + feat_idx`, past x_prev for batches past B"),
        ("output_ptr", "the store reads, selects and writes back the whole block, past output"),
        ("dk1_ptr0", "at `offsets + hidden_dim` under `mask_next & is_valid`, past dk1"),
        (
            "dx_prev_ptr",
            "the store under `is_first_step & is_valid` reads, selects and writes back the "
            "whole block at `batch_idx * hidden_dim + feat_idx`, past dx_prev",
        ),
    )
]

CASES = [
    # ---- correct kernels, newest snapshot ---------------------------------------------
    Case(
        "fla-ascend",
        FLA,
        FLA_HEAD,
        "snapshot head",
        ["fla"],
        "fla_npu",
        "fla_ascend",
        "FLA's triton_ascend backends, dispatched by FLA's own ops: `chunk_gated_delta_rule` "
        "fwd+bwd (cumsum, kkt, solve_tril, wy_fast, chunk_delta_h, chunk_o, l2norm, gdn gate), "
        "`chunk_local_cumsum` / `chunk_global_cumsum` (scalar, vector), `chunk_kda` fwd+bwd, "
        "`layer_norm`, `rms_norm`, `rms_norm_gated`, `causal_conv1d` fwd+bwd, `rotary_embedding`",
        "GDN B=2 T=100 H=2 K=V=64, varlen cu=[0,37,50,123], qk-l2norm and gate in kernel; KDA "
        "B=2 T=64; norms [2,37,96]; conv varlen cu=[0,37,50,123] D=64 W=4; rotary [2,100,2,32]",
        note="no finding: the Ascend backend's forward look-back `t0 + i_w + tl.arange(0, BT)` "
        "(i_w < 0) masked by `yi_offset_0 >= 0` compares a tl.arange plus scalars, and the "
        "compiler clips the copy from row -(t0 + i_w) (its lowered IR: a `memref.subview` "
        "starting there), so the first chunk's rows before x are not read; reported before "
        "the sanitizer followed how masks are built",
    ),
    Case(
        "fla-generic",
        FLA,
        FLA_HEAD,
        "snapshot head",
        ["fla"],
        "fla",
        "fla_generic",
        "FLA's ordinary Triton kernels: `chunk_gated_delta_rule` fwd, `l2norm` fwd+bwd, "
        "`layer_norm` fwd+bwd",
        "GDN B=2 T=100 H=2 K=V=64; l2norm [2,37,4,64]; layer_norm [50,64], 24 SMs",
        [V("duplicate-store", "layernorm.py", "dx", True, LN_DUPLICATE)],
        note=TILE_PAST_END.format(
            "layer_norm's NS=24 programs of BS=3 rows with BT=32/64-row tiles over 50 rows, "
            "and the fused kkt+solve kernel's 4th 16-row sub-chunk of the last 64-row chunk "
            "(rows 112..127 of T=100), start past the end"
        ),
    ),
    Case(
        "liger-ascend",
        LIGER,
        LIGER_HEAD,
        "snapshot head",
        ["src/liger_kernel"],
        "liger",
        "liger_ascend",
        "Liger's `_ascend` backend Functions fwd+bwd: rms_norm, layer_norm, swiglu, geglu, "
        "rope, cross_entropy, softmax, group_norm, kl_div, jsd, dyt, tvd, fused_add_rms_norm, "
        "embedding, poly_norm, fused_linear_cross_entropy",
        "[2,37,96] (74 rows); vocab 200-300; rope 4/2 heads x 64",
        note=TILE_PAST_END.format(
            "rms_norm and fused_add_rms_norm: grid = min(2*cores, n_rows) = 74 programs of "
            "BLOCK_SIZE_M=16 rows over 74 rows, 69 programs' tiles start past the end"
        ),
        src="src",
    ),
    Case(
        "vllm-ascend-gdn",
        VLLM,
        VLLM_HEAD,
        "snapshot head",
        ["vllm_ascend/ops/triton", "vllm_ascend/device"],
        "vllm",
        "vllm_gdn",
        "vllm-ascend's Triton GDN prefill chain: l2norm_fwd, chunk_local_cumsum, "
        "chunk_scaled_dot_kkt_fwd, solve_tril (16x16 + merge 64), recompute_w_u_fwd, "
        "chunk_gated_delta_rule_fwd_h, chunk_fwd_o",
        "varlen cu=[0,37,50,123,190] H=2 K=V=64 (the chunk path needs cu_seqlens)",
        note=TILE_PAST_END.format(
            "l2norm's grid of 48 vector cores x MBLOCK=69 rows over 380 rows (programs 6..47, "
            "up to ~3,000 rows out) and solve_tril's LARGE_BLOCK_T=1216 blocks and the 16-row "
            "sub-tiles of the last 64-row chunk of a short last sequence start past the end"
        ),
    ),
    Case(
        "vllm-ascend-reject",
        VLLM,
        VLLM_HEAD,
        "snapshot head",
        ["vllm_ascend/ops/triton", "vllm_ascend/sample"],
        "vllm",
        "vllm_reject",
        "vllm-ascend `rejection_sample` (greedy, and random with and without draft probs)",
        "3 requests x 3 draft tokens, vocab 64",
        [
            V(
                "out-of-bounds",
                "reject_sample.py",
                "cu_num_draft_tokens_ptr",
                True,
                "`tl.where(i == 0, 0, tl.load(cu + i - 1))`: the select does not guard the load, "
                "request 0 reads cu[-1] (vllm-ascend #16275: device error 507035 in production, "
                "fixed upstream after this snapshot)",
            ),
            V(
                "masked-out-of-bounds",
                "reject_sample.py",
                "cu_num_draft_tokens_ptr",
                True,
                "the same look-back with the lane masked out: issued on Ascend (#2332's "
                "reproducer is this shape: a lane before the base, masked)",
            ),
        ],
    ),
    Case(
        "mojo-npu-a2",
        MOJO,
        MOJO_HEAD,
        "snapshot head",
        ["mojo_opset"],
        "mojo",
        "mojo_a2",
        "mojo_opset ttx NPU A2 kernels: embedding_nf4_dequant_impl, rmsnorm fwd+bwd, "
        "layernorm fwd, swiglu fwd+bwd, silu, gelu, rope fwd",
        "74 tokens (2x37) incl. one id >= vocab and one id < 0, as its own test uses; "
        "[2,37,96]; rope 4/2 heads x 64",
        [
            V(
                "masked-out-of-bounds",
                "embedding.py",
                t,
                True,
                "the mask `token_mask & (__low_embedding_vec_idx < embedding_dim)` compares "
                "`start + tl.arange(0, BLOCK // 2) * 2`, a product, so the compiler issues the "
                "whole group row (its lowered IR loops over every lane): at the padding slots' "
                "id -1 and the id -2, rows before the table, and at the out-of-vocabulary id "
                "vocab+7, a row 7 past it (the first reported)",
            )
            for t in ("LUT_scale", "LUT_mean")
        ]
        + [
            V(
                "masked-out-of-bounds",
                "embedding.py",
                "input",
                True,
                "the padding slots' `tl.load(input + __token_idx, mask=__token_idx < token_num)` "
                "is a scalar load: an unconditional load and a select in its lowered IR, so the "
                "22 slots past the 74 tokens read past input",
            )
        ],
        note="no finding at the LUT_qweight load: `token_mask & __packed_vec_mask` is a scalar "
        "flag and'ed with a compare of a tl.arange plus scalars, so the copy is clipped to "
        "`token_mask * 32` elements (its lowered IR): a bad id's packed row is not read. "
        "Before the sanitizer followed how masks are built it reported the rows -1 and -2 "
        "there and missed the row vocab+7 at the scale and mean loads",
    ),
    Case(
        "sgl-kernel-npu",
        SGL,
        SGL_HEAD,
        "snapshot head",
        ["python/sgl_kernel_npu/sgl_kernel_npu"],
        "sgl",
        "sgl_kernels",
        "sgl-kernel-npu: rmsnorm_bias, l1_norm, fla l2norm_fwd, fla chunk_local_cumsum (varlen), "
        "argmax_softmax_prob_fused, add_gemma_rms_norm",
        "[74,96]; l2norm [2,37,4,64]; cumsum varlen cu=[0,37,50,123,190]; logits [5,1000]",
        [
            V(
                "duplicate-store",
                "l2norm.py",
                "y",
                True,
                "MBS = cdiv(296 rows, 48 cores) = 7 but BT = 109: each program's 109-row block "
                "overlaps the next 15 programs' rows, which store them again with the same "
                "bytes: 15x redundant work, not a race",
            ),
        ],
        src="python/sgl_kernel_npu",
    ),
    Case(
        "triton-ascend-tutorials",
        TA,
        TA_HEAD,
        "snapshot head",
        ["third_party/ascend/tutorials"],
        "tutorial",
        "ta_tutorials",
        "triton-ascend tutorials 01 vector add, 03 layer norm, 09 gather (with -1 indices), "
        "10 gather_sorted",
        "add 98,432; layer norm [74,96]; gather 74 indices into [50,96]",
        src="third_party/ascend/tutorials",
    ),
    # ---- known memory bugs: parent and fix --------------------------------------------
    Case(
        "fla-rwkv7-cm-bug",
        FLA,
        "3c4c54ae7397d37130d7101edd0f4eb596af896d",
        "parent of ebd4dd27 (#1103)",
        ["fla"],
        "fla",
        "fla_rwkv7",
        "`channel_mixing_rwkv7` fwd+bwd (rwkv_seq_mix, pow_and_relu, relu_square_bwd, mix_bwd)",
        "B=2 T=5 D=64, key dim 256",
        [
            V(
                "out-of-bounds",
                "channel_mixing.py",
                t,
                True,
                "unmasked 4096-wide block over 2,560 elements: the bug #1103 fixes",
            )
            for t in ("in_ptr", "out_ptr", "forward_input_ptr")
        ]
        + [
            V(
                "out-of-bounds",
                "channel_mixing.py",
                "dx_prev_ptr",
                True,
                "the dx_prev store masked by is_first_step without is_valid: tail lanes of a "
                "phantom batch, fixed by #1103",
            ),
        ]
        + RWKV_MASKED,
    ),
    Case(
        "fla-rwkv7-cm-fix",
        FLA,
        "ebd4dd27c0038e73cee514130f8c3efd203cef37",
        "ebd4dd27 (#1103)",
        ["fla"],
        "fla",
        "fla_rwkv7",
        "as above",
        "as above",
        RWKV_MASKED,
    ),
    Case(
        "fla-rotary-bug",
        FLA,
        "a76816626402b5d92e00f9071a431aaa29080020",
        "parent of 1ec27894 (#423)",
        ["fla"],
        "fla",
        "fla_rotary",
        "`rotary_embedding` interleaved, and with per-sequence seqlen_offsets",
        "x [2,100,2,32], cos/sin [128,16], 24 SMs (BT=8); x [2,16,2,32] with offsets [0,8], cos [20,16]",
        [
            V(
                "race",
                "rotary.py",
                "y",
                True,
                "interleaved branch masks o_cs only: batch 0's tail tile writes batch 1's rows "
                "(the output is wrong: max err 6.9); fixed by #423",
            ),
            V(
                "out-of-bounds",
                "rotary.py",
                "x",
                True,
                "the same tail tile of the last batch reads past x",
            ),
            V("out-of-bounds", "rotary.py", "y", True, "and writes past y"),
            V(
                "out-of-bounds",
                "rotary.py",
                "cos",
                True,
                "non-interleaved branch masks o_t only: rows offset+t >= TR of cos",
            ),
            V("out-of-bounds", "rotary.py", "sin", True, "same for sin"),
        ],
    ),
    Case(
        "fla-rotary-fix",
        FLA,
        "1ec27894427104a366f1521fc2d8dcd7087eb645",
        "1ec27894 (#423)",
        ["fla"],
        "fla",
        "fla_rotary",
        "as above",
        "as above",
        [
            V(
                "masked-out-of-bounds",
                "rotary.py",
                t,
                True,
                "the interleaved branch's mask has `o_d_repeat = tl.arange(0, BD) // 2` in it, "
                "so triton-ascend 3.2 has no box to clip the copy by: the last batch's tail tile "
                "(rows o_t >= T) is "
                + ("read whole, past x" if t == "x" else "read, selected and written back, past y")
                + "; later releases bound such a copy by the parsed row mask `m_t`",
            )
            for t in ("x", "y")
        ],
        note="no finding at cos/sin: when seqlen_offsets + T > TR the fixed kernel masks the "
        "cos/sin rows past the 20-row table with `o_cs < TR` in the non-interleaved branch, "
        "a mask the compiler clips the copy by",
    ),
    Case(
        "fla-conv-bug-short-last",
        FLA,
        "03a944d7d0f4e722e1e83c8aace65c3b51166314",
        "parent of 7cbe461b (#774)",
        ["fla"],
        "fla",
        "fla_conv",
        "`causal_conv1d` fwd+bwd with initial_state (triton backend)",
        "varlen cu=[0,38,40] (the short sequence last), D=64 W=4",
        [
            V(
                "out-of-bounds",
                "kernels.py",
                "dy",
                True,
                "mask_head_rows = o_t < i_w without o_t < T: rows past a 2-token sequence; the "
                "sequence is last, so past dy's storage; fixed by #774",
            ),
            V("masked-out-of-bounds", "kernels.py", "weight", True, CONV_WEIGHT),
        ],
        params={"cu": [0, 38, 40]},
        note=CONV_LOOK_BACK + "; " + CONV_DH0,
    ),
    Case(
        "fla-conv-bug-short-first",
        FLA,
        "03a944d7d0f4e722e1e83c8aace65c3b51166314",
        "parent of 7cbe461b (#774)",
        ["fla"],
        "fla",
        "fla_conv",
        "as above",
        "varlen cu=[0,2,40] (the short sequence first)",
        [V("masked-out-of-bounds", "kernels.py", "weight", True, CONV_WEIGHT)],
        params={"cu": [0, 2, 40]},
        note=CONV_LOOK_BACK
        + "; **false negative** (by design): the #774 bug at kernels.py:266 reads dy rows of the "
        "next sequence, inside dy's storage, and dw comes out wrong; only a short *last* "
        "sequence (case fla-conv-bug-short-last) takes it past the storage",
    ),
    Case(
        "fla-conv-fix-short-last",
        FLA,
        "7cbe461b10bde60180c32c5f9381a04d41887514",
        "7cbe461b (#774)",
        ["fla"],
        "fla",
        "fla_conv",
        "as above",
        "varlen cu=[0,38,40]",
        [V("masked-out-of-bounds", "kernels.py", "weight", True, CONV_WEIGHT)],
        params={"cu": [0, 38, 40]},
        note=CONV_LOOK_BACK + "; " + CONV_DH0,
    ),
    Case(
        "fla-layernorm-sm160-bug",
        FLA,
        "91d870f89f6f8f57adacd4c5c32606b0754a3f4d",
        "parent of f52529ee (#795)",
        ["fla"],
        "fla",
        "fla_layernorm",
        "`layer_norm`, `group_norm`, `rms_norm_gated` fwd+bwd with 160 SMs reported",
        "T=50 and T=7, D=64 (group norm 4x32)",
        [],
        params={"sm": 160},
        note="no finding, and none expected at the language level: #795's idle programs only form "
        "block pointers whose offsets are past the shape, and boundary_check clips every lane; "
        "what faulted on B200 is not visible to an interpreter",
    ),
    Case(
        "fla-layernorm-sm160-fix",
        FLA,
        "f52529ee8a7b17f4514fd32dbe22632ed9d55c76",
        "f52529ee (#795)",
        ["fla"],
        "fla",
        "fla_layernorm",
        "as above",
        "as above",
        [
            V("duplicate-store", t_file, t, True, LN_DUPLICATE + "; introduced by this fix")
            for t_file, t in (
                ("layernorm.py", "dx"),
                ("fused_norm_gate.py", "dx"),
                ("fused_norm_gate.py", "dg"),
            )
        ],
        params={"sm": 160},
    ),
    Case(
        "liger-softmax-before",
        LIGER,
        "8c4be2b3b0f508f4e9e6c84491cc142516529210",
        "parent of 131845b7 (#1139)",
        ["src/liger_kernel"],
        "liger",
        "liger_softmax",
        "Liger `_ascend` LigerSoftmaxFunction fwd+bwd, multi-block path",
        "[2,3,8200]",
        src="src",
    ),
    Case(
        "liger-softmax-bug",
        LIGER,
        "131845b77d47c561ce03e0950c540925dfd6ce54",
        "131845b7 (#1139)",
        ["src/liger_kernel"],
        "liger",
        "liger_softmax",
        "as above",
        "as above",
        [
            V(
                "duplicate-store",
                "softmax.py",
                "Y_ptr",
                True,
                "row_step = cdiv(n_rows, num_programs) with num_programs = n_rows: program p "
                "handles rows p..n-1, five programs store rows 1..5 again with the same bytes: "
                "the redundant work #1147 removes, not a race",
            ),
            V("duplicate-store", "softmax.py", "dx_ptr", True, "the same in the backward kernel"),
        ],
        src="src",
    ),
    Case(
        "liger-softmax-fix",
        LIGER,
        "3ebe3b1bdd81181b9c3138521fe435646e3102b5",
        "3ebe3b1b (#1147)",
        ["src/liger_kernel"],
        "liger",
        "liger_softmax",
        "as above",
        "as above",
        src="src",
    ),
    Case(
        "liger-ce-target-bug",
        LIGER,
        "0c2203ea331268a626bad6bf0426fe0e02420c7a",
        "parent of 51560182 (#588)",
        ["src/liger_kernel"],
        "liger",
        "liger_ce",
        "Liger (generic) `LigerCrossEntropyFunction` with targets out of range",
        "74 rows x vocab 200, target[0] = -5, target[-1] = 203",
        [
            V(
                "out-of-bounds",
                "cross_entropy.py",
                "X_ptr",
                True,
                "`tl.load(X_ptr + y)` with y = -5 in row 0 and y = 203 in the last row: before and "
                "past the logits; #588 adds the host check",
            ),
        ],
        src="src",
    ),
    Case(
        "liger-ce-target-fix",
        LIGER,
        "5156018225866e29320cf357c90ca077ae7e758b",
        "51560182 (#588)",
        ["src/liger_kernel"],
        "liger",
        "liger_ce",
        "as above",
        "as above",
        src="src",
    ),
    Case(
        "vllm-ascend-placeholder-bug",
        VLLM,
        "941ba056b9383dedcd11796ac6a77b1b5912d258",
        "parent of a3b10cb6f0 (#10043)",
        ["vllm_ascend/ops/triton", "vllm_ascend/sample"],
        "vllm",
        "vllm_placeholder",
        "vllm-ascend `rejection_sample`, random sampling, draft tokens = PLACEHOLDER (-1)",
        "3 requests x 3 placeholder drafts, vocab 64, with and without draft probs",
        [
            V(
                "out-of-bounds",
                "reject_sample.py",
                "target_probs_ptr",
                True,
                "`target_probs + token_idx * V + draft_token_id` with draft -1: token 0 reads (and, "
                "in sample_recovered_tokens, writes and restores) the element before target_probs; "
                "the bug #10043 fixes (other tokens hit the previous row: inside the storage, not "
                "visible to the sanitizer)",
            ),
            V("out-of-bounds", "reject_sample.py", "draft_probs_ptr", True, "same for draft_probs"),
            V(
                "out-of-bounds",
                "reject_sample.py",
                "cu_num_draft_tokens_ptr",
                True,
                "the #16275 look-back, present at both commits",
            ),
        ],
    ),
    Case(
        "vllm-ascend-placeholder-fix",
        VLLM,
        "a3b10cb6f02a54edde9a28c6da7bd02169cd3b39",
        "a3b10cb6f0 (#10043)",
        ["vllm_ascend/ops/triton", "vllm_ascend/sample"],
        "vllm",
        "vllm_placeholder",
        "as above",
        "as above",
        [
            V(
                "out-of-bounds",
                "reject_sample.py",
                "cu_num_draft_tokens_ptr",
                True,
                "the #16275 look-back, not part of #10043",
            ),
        ],
    ),
    # ---- minimal kernels: where the sanitizer is wrong or blind ------------------------
    Case(
        "repro-row-tail",
        "",
        "",
        "this repository",
        [],
        "repro",
        "repro_row_tail",
        "one masked spare row, read and written in two 32-column tiles",
        "x [4,64], grid (5,2)",
        note="no finding, as it should be: the spare row is masked out entirely in both of "
        "its 32-column tiles, an empty clipped copy",
    ),
    Case(
        "repro-inside-storage",
        "",
        "",
        "this repository",
        [],
        "repro",
        "repro_inside_storage",
        "a varlen kernel reading the next sequence's rows (no finding: inside the storage)",
        "x [10,8], cu=[0,3,10]",
        note="**false negative** (by design): lanes are checked against the whole storage, so a "
        "read past a sequence, row or view that stays inside the tensor is invisible",
    ),
    Case(
        "repro-cross-program-read",
        "",
        "",
        "this repository",
        [],
        "repro",
        "repro_cross_program_read",
        "program 0 stores a value that the other programs of the launch load",
        "grid 4",
        note="**false negative** (out of scope): `race` is store/store only; a load of an element "
        "another program of the launch stores is order-dependent on the device",
    ),
]


# how much of each project's package structure is emptied (per environment)
BLANK = {"vllm": "all", "mojo": "all", "sgl": "all", "liger": (), "tutorial": ()}


# -- parent: materialise, run, render ---------------------------------------------------
def git_dir(root: str, repo: str) -> str | None:
    owner, name = repo.split("/")
    for cand in (
        os.path.join(root, f"{owner}+{name}", "repo"),
        os.path.join(root, f"{owner}+{name}"),
        os.path.join(root, owner, f"{name}.git"),
        os.path.join(root, owner, name, ".git"),
    ):
        if os.path.isdir(cand) and (
            os.path.exists(os.path.join(cand, "HEAD"))
            or os.path.exists(os.path.join(cand, "objects"))
        ):
            return cand
    return None


def materialise(gdir: str, rev: str, paths: list, dest: str, blank) -> None:
    data = subprocess.run(
        ["git", "--git-dir", gdir, "archive", "--format=tar", rev, *paths],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    # a kernel module imports without the rest of its project
    inits = []
    if blank == "all":
        for top in paths:
            for dirpath, _, files in os.walk(os.path.join(dest, top)):
                if "__init__.py" in files:
                    inits.append(os.path.join(dirpath, "__init__.py"))
            parts = top.split("/")  # and the package roots above the archived folders
            inits += [os.path.join(dest, *parts[:i], "__init__.py") for i in range(1, len(parts))]
    else:
        inits = [os.path.join(dest, b) for b in blank]
    for init in inits:
        if os.path.exists(init):
            with open(init) as f:
                keep = [line for line in f if line.startswith("__version__")]
            with open(init, "w") as f:
                f.writelines(keep)


def run_case(case: Case, root: str, timeout: int, keep: str | None) -> dict:
    result = {"id": case.id, "findings": [], "checks": [], "counts": {}, "error": None}
    if keep:
        os.makedirs(keep, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f"sanitizer-{case.id}-", dir=keep)
    if case.repo:
        gdir = git_dir(root, case.repo)
        if gdir is None:
            result["error"] = f"no git directory for {case.repo} under {root}"
            return result
        try:
            materialise(gdir, case.rev, case.paths, work, BLANK.get(case.env, case.blank))
        except subprocess.CalledProcessError as e:
            result["error"] = f"git archive {case.rev[:10]}: {e.stderr.decode()[:200]}"
            return result
    env = dict(os.environ, **case.env_vars)
    env["TRITON_INTERPRET"] = "1"
    env["TORCHDYNAMO_DISABLE"] = "1"
    env.setdefault("PYTHONHASHSEED", "0")
    t0 = time.time()
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-W",
                "ignore",
                os.path.abspath(__file__),
                "--child",
                case.id,
                "--src",
                os.path.join(work, case.src),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=work,
        )
        out = proc.stdout
        payload = [line for line in out.splitlines() if line.startswith(MARK)]
        if payload:
            result.update(json.loads(payload[-1][len(MARK) :]))
        else:
            result["error"] = "no result: " + (proc.stderr or out)[-600:].replace("\n", " ")
    except subprocess.TimeoutExpired:
        result["error"] = f"timed out after {timeout} s"
    result["seconds"] = round(time.time() - t0, 1)
    if keep:
        result["workdir"] = work
    else:
        shutil.rmtree(work, ignore_errors=True)
    return result


def judge(case: Case, f: dict) -> str:
    """The verdict on a finding (true or false), or on a duplicate-store entry (right or
    wrong to be no finding)."""
    base = os.path.basename(f["path"])
    for v in case.verdicts:
        if v.kind == f["kind"] and v.file == base and v.tensor == f["tensor"]:
            if f["kind"] == DUPLICATE_STORE:
                return ("**right**: " if v.true else "**wrong**: ") + v.why
            return ("**true**: " if v.true else "**false**: ") + v.why
    return "not judged"


def md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render(results: list, args, versions: dict) -> str:
    by_id = {c.id: c for c in CASES}
    out = []
    out.append("# The sanitizer on public Ascend Triton code\n")
    out.append(
        "Each case runs a public project's kernels on CPU under triton-ascend's interpreter "
        "(`TRITON_INTERPRET=1`) through the project's own launch function, inside "
        "`with ascend_lint.sanitizer.Sanitizer()`; see the docstring of "
        "`benchmarks/sanitizer_real_code.py` for what is stubbed or filled in so that "
        "Ascend code runs there. The verdicts were written after reading each kernel; a "
        "finding no verdict matches prints as *not judged*. A masked-out lane is reported "
        "where triton-ascend 3.2 issues it (README: the masks its analysis parses are clipped "
        "copies; any other mask issues the whole block; a masked scalar load is issued), and "
        "where a verdict says so the lowered IR of the kernel was read to check it. Stores "
        "that repeat the bytes another program of the launch "
        "stored are listed as *not a finding* (the summary count of `--ascend-sanitize`). "
        "Nothing here ran on an NPU.\n"
    )
    out.append(
        f"* command: `python benchmarks/sanitizer_real_code.py {args.root_shown}`"
        + (f" --case {' '.join(args.case)}" if args.case else "")
    )
    out.append(f"* date: {datetime.date.today().isoformat()}")
    out.append("* versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    out.append(
        "* device properties given to the code: Atlas A2 (24 AI cores, 48 vector cores, 192 KiB UB) "
        "unless the case says otherwise; CPU only\n"
    )
    out.append(
        "| case | repository @ commit | kernels (launch functions) | shapes | numerics vs torch | "
        "findings (kind, file:line, tensor, lanes) | verdict |"
    )
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        c = by_id[r["id"]]
        where = f"{c.repo} @ `{c.rev[:10]}` ({c.label})" if c.repo else c.label
        if r.get("error"):
            checks = "not run: " + md_escape(r["error"][:300])
        else:
            checks = "<br>".join(md_escape(x) for x in r.get("checks", [])) or "-"
        duplicates = r.get("duplicates", [])
        if r.get("error") and not r.get("findings") and not duplicates:
            fnd, ver = "-", "-"
        elif not r.get("findings") and not duplicates:
            cnt = r.get("counts", {})
            fnd = (
                f"none ({cnt.get('launches', 0)} launches, {cnt.get('loads', 0):,} loads, "
                f"{cnt.get('stores', 0):,} stores, {cnt.get('atomics', 0):,} atomics)"
            )
            ver = c.note or "no finding"
        else:
            fl, vl = [], []
            for f in r.get("findings", []):
                fl.append(
                    f"`{f['kind']}` {os.path.basename(f['path'])}:{f['line']} "
                    f"{f['tensor']} ({f['lanes']:,} lanes, {f['programs']} programs)"
                )
                vl.append(judge(c, f))
            for d in duplicates:
                fl.append(
                    f"not a finding: {os.path.basename(d['path'])}:{d['line']} {d['tensor']}: "
                    f"{d['lanes']:,} lanes stored twice with the same bytes"
                )
                vl.append(judge(c, d))
            fnd = "<br>".join(md_escape(x) for x in fl)
            ver = "<br>".join(md_escape(x) for x in vl + ([c.note] if c.note else []))
        out.append(
            f"| {c.id} | {where} | {md_escape(c.kernels)} | {md_escape(c.shapes)} | {checks} | "
            f"{fnd} | {ver} |"
        )
    out.append("")
    out.append(
        "Run time per case (s): " + ", ".join(f"{r['id']} {r.get('seconds', '-')}" for r in results)
    )
    out.append("")
    return "\n".join(out)


def versions() -> dict:
    def pkg(name):
        try:
            from importlib.metadata import version

            return version(name)
        except Exception:
            return "?"

    sha = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    ).stdout.strip()
    return {
        "ascend-lint": f"{pkg('ascend-lint')} ({sha or '?'})",
        "triton-ascend": pkg("triton-ascend"),
        "torch": pkg("torch"),
        "numpy": pkg("numpy"),
        "python": platform.python_version(),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", nargs="?", help="directory of the repositories' git directories")
    p.add_argument("--case", action="append", default=[], help="run only this case (repeatable)")
    p.add_argument("--out", help="write the Markdown here as well as to stdout")
    p.add_argument("--json", help="write the raw results here")
    p.add_argument("--timeout", type=int, default=600, help="seconds per case")
    p.add_argument("--keep", help="materialise the cases under this directory (kept)")
    p.add_argument("--list", action="store_true")
    p.add_argument("--child")
    p.add_argument("--src")
    args = p.parse_args(argv)
    if args.child:
        return child(args.child, args.src)
    if args.list:
        for c in CASES:
            print(f"{c.id:32} {c.repo or '-':32} {c.rev[:10] or '-':10} {c.label}")
        return 0
    if not args.root:
        p.error("the mirror root is required")
    args.root_shown = args.root
    chosen = [c for c in CASES if not args.case or c.id in args.case]
    results = []
    for c in chosen:
        print(f"[{c.id}] ...", file=sys.stderr, flush=True)
        r = run_case(c, args.root, args.timeout, args.keep)
        print(
            f"[{c.id}] {len(r.get('findings', []))} findings, {r.get('seconds')} s"
            + (f", error: {r['error'][:200]}" if r.get("error") else ""),
            file=sys.stderr,
            flush=True,
        )
        results.append(r)
    text = render(results, args, versions())
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


# -- child: the CPU stand-ins and the drivers --------------------------------------------
DEVICE_PROPS = {
    "num_aicore": 24,
    "num_vectorcore": 48,
    "num_cube_core": 24,
    "multiprocessor_count": 24,
    "max_shared_mem": 192 * 1024,
}


def child(case_id: str, src: str) -> int:
    case = next(c for c in CASES if c.id == case_id)
    if src:
        sys.path.insert(0, src)
    os.environ.setdefault("ASCEND_UB_CAPACITY_BITS", str(192 * 1024 * 8))
    from ascend_lint.cpu_device import autotune

    autotune.install()
    import contextlib

    import torch

    if not hasattr(torch.cpu, "device"):  # FLA enters torch.<device>.device(index)
        torch.cpu.device = lambda *a, **k: contextlib.nullcontext()
    _interpreter_fills()
    torch.manual_seed(0)
    ctx = Ctx(case)
    try:
        globals()["drv_" + case.driver](ctx, **case.params)
    except Exception as e:  # report what ran before the failure
        import traceback

        traceback.print_exc()
        ctx.error = f"{type(e).__name__}: {str(e)[:300]}"
    finally:
        ctx.stop()
    payload = {
        "findings": ctx.findings(),
        "duplicates": ctx.duplicates(),
        "checks": ctx.checks,
        "counts": ctx.counts(),
        "error": ctx.error,
        "unattributed": ctx.unattributed(),
    }
    print(MARK + json.dumps(payload))
    return 0


class Ctx:
    """The sanitizer for the whole case, and the numeric checks."""

    def __init__(self, case):
        from ascend_lint.sanitizer import Sanitizer

        self.case = case
        self.sanitizer = Sanitizer()
        self.sanitizer.install()
        self.checks: list = []
        self.error = None

    def check(self, name, fn):
        t0 = time.time()
        try:
            err = fn()
            self.checks.append(
                f"{name}: max err {err:.1e}" if isinstance(err, float) else f"{name}: {err}"
            )
        except Exception as e:
            import traceback

            traceback.print_exc()
            self.checks.append(f"{name}: did not run ({type(e).__name__}: {str(e)[:120]})")
        print(f"{name} {self.checks[-1]} {time.time() - t0:.1f}s", file=sys.stderr, flush=True)

    def stop(self):
        self.sanitizer.uninstall()

    def findings(self):
        out = []
        for f in sorted(
            self.sanitizer.findings.values(), key=lambda f: (f.site.path, f.site.line, f.kind)
        ):
            d = f.as_dict()
            d["path"] = f.site.path
            out.append(
                {
                    k: d.get(k)
                    for k in (
                        "kind",
                        "path",
                        "line",
                        "function",
                        "kernel",
                        "op",
                        "tensor",
                        "shape",
                        "dtype",
                        "element_offset",
                        "lanes",
                        "occurrences",
                        "programs",
                        "detail",
                        "call_line",
                    )
                }
            )
        return out

    def duplicates(self):
        """Stores that repeated the bytes another program of the launch stored (counted
        by the sanitizer, not findings)."""
        return [
            {**d.as_dict(), "kind": DUPLICATE_STORE}
            for d in sorted(self.sanitizer.duplicates.values(), key=lambda d: (d.path, d.line))
        ]

    def counts(self):
        return self.sanitizer.counts.as_dict()

    def unattributed(self):
        return [
            {"kernel": u.kernel, "line": u.line, "op": u.op, "lanes": u.lanes}
            for u in self.sanitizer.unattributed.values()
        ]


def _interpreter_fills() -> None:
    import ast
    import re

    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    # launch options of triton-ascend the 3.2 interpreter would bind as kernel arguments
    names = [
        "enable_ubuf_saving",
        "auto_blockify_size",
        "enable_auto_blockify",
        "multibuffer",
        "unit_flag",
        "enable_nd2nz_on_vector",
        "optimize_dynamic_offset",
        "mix_mode",
    ]
    try:
        import dataclasses

        from triton.backends.ascend.compiler import NPUOptions

        names += [f.name for f in dataclasses.fields(NPUOptions)]
    except Exception:
        pass
    for n in names:
        if n not in I.RESERVED_KWS:
            I.RESERVED_KWS.append(n)

    # loop variables over range / tl.range are i32 tensors on the device
    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        fname = None
        if isinstance(it, ast.Call):
            fname = (
                it.func.attr if isinstance(it.func, ast.Attribute) else getattr(it.func, "id", None)
            )
        if fname == "range" and isinstance(node.target, ast.Name):
            node.body.insert(
                0,
                ast.Assign(
                    targets=[ast.Name(id=node.target.id, ctx=ast.Store())],
                    value=ast.Call(
                        func=ast.Attribute(
                            value=ast.Attribute(
                                value=ast.Attribute(
                                    value=ast.Name(id="triton", ctx=ast.Load()),
                                    attr="language",
                                    ctx=ast.Load(),
                                ),
                                attr="semantic",
                                ctx=ast.Load(),
                            ),
                            attr="to_tensor",
                            ctx=ast.Load(),
                        ),
                        args=[
                            ast.Name(id=node.target.id, ctx=ast.Load()),
                            ast.Name(id="interpreter_builder", ctx=ast.Load()),
                            ast.Constant(value=False),
                        ],
                        keywords=[],
                    ),
                ),
            )
        return node

    I.ASTTransformer.visit_For = visit_For

    # builtins a kernel module imported by name are not patched by the interpreter
    patch_lang = I._patch_lang

    def _patch_lang(fn):
        patch_lang(fn)
        g = fn.__globals__
        for name, value in list(g.items()):
            if tl.core.is_builtin(value):
                g[name] = lambda *a, member=value, **k: member(
                    *a,
                    **{x: y for x, y in k.items() if x != "_builder"},
                    _builder=I.interpreter_builder,
                )

    I._patch_lang = _patch_lang

    # reductions and scans over a negative axis
    apply = I.ReduceScanOpIneterface.apply

    def apply_normalised(self, input):
        first = input[0] if isinstance(input, tuple) else input
        if self.axis is not None:
            ax = getattr(self.axis, "value", self.axis)
            if ax < 0:
                self.axis = ax + len(first.shape)
        return apply(self, input)

    I.ReduceScanOpIneterface.apply = apply_normalised

    B = I.InterpreterBuilder
    if not hasattr(B, "get_int1_ty"):
        B.get_int1_ty = lambda self: tl.int1
    all_ones = B.get_all_ones_value

    def get_all_ones_value(self, type):
        if type == tl.int1:
            return I.TensorHandle(np.full(1, True, dtype=bool), tl.int1)
        return all_ones(self, type)

    B.get_all_ones_value = get_all_ones_value
    if not hasattr(B, "create_tanh"):
        B.create_tanh = lambda self, arg: I.TensorHandle(np.tanh(arg.data), arg.dtype.scalar)

    ops = {
        "tanh": np.tanh,
        "exp": np.exp,
        "log": np.log,
        "sqrt": np.sqrt,
        "sin": np.sin,
        "cos": np.cos,
        "log1p": np.log1p,
        "expm1": np.expm1,
        "pow": np.power,
        "rsqrt": lambda x: 1 / np.sqrt(x),
        "isnan": np.isnan,
        "isinf": np.isinf,
        "floor": np.floor,
        "ceil": np.ceil,
        "trunc": np.trunc,
        "atan": np.arctan,
        "atan2": np.arctan2,
        "fmod": np.fmod,
        "round": np.round,
    }

    def create_extern_elementwise(self, libName, libPath, symbol, argList, retType, isPure):
        name = re.sub(r"^(__hmf_|__nv_|__ocml_|__imf_)", "", symbol)
        name = re.sub(r"(f|Dh|Df|_f32|_f16|_bf16)$", "", name)
        if name not in ops:
            raise NotImplementedError(f"extern {symbol}")
        return I.TensorHandle(
            ops[name](*[a.data for a in argList]).astype(I._get_np_dtype(retType)), retType.scalar
        )

    B.create_extern_elementwise = create_extern_elementwise

    if "__call__" not in vars(tl.dtype):

        def dtype_call(self, value):
            v = getattr(value, "value", value)
            if isinstance(v, tl.tensor):
                return v.to(self)
            return tl.tensor(I.TensorHandle(np.array([v], dtype=I._get_np_dtype(self)), self), self)

        tl.dtype.__call__ = dtype_call


def _ascend_extensions() -> None:
    """get_element / extract_slice / insert_slice, the Ascend-only language extensions."""
    import types

    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    tag = "ascend_lint.storage"

    def _int(v):
        v = getattr(v, "value", v)
        if isinstance(v, tl.tensor):
            return int(np.asarray(v.handle.data).reshape(-1)[0])
        return int(v)

    def _slices(offsets, sizes, strides):
        return tuple(
            slice(_int(o), _int(o) + _int(s) * _int(st), _int(st))
            for o, s, st in zip(offsets, sizes, strides)
        )

    def get_element(src, indice, _builder=None):
        data = np.asarray(src.handle.data)
        v = data[tuple(_int(i) for i in indice)]
        return tl.tensor(TensorHandle(np.array([v], dtype=data.dtype), src.dtype), src.dtype)

    def extract_slice(ful, offsets, sizes, strides, _builder=None):
        sl = _slices(offsets, sizes, strides)
        d = np.ascontiguousarray(np.asarray(ful.handle.data)[sl])
        h = TensorHandle(d, ful.dtype)
        t = getattr(ful.handle, "attr", {}).get(tag)
        if t is not None:
            h.attr[tag] = np.ascontiguousarray(t[sl]) if isinstance(t, np.ndarray) else t
        return tl.tensor(h, tl.block_type(ful.dtype, list(d.shape)))

    def insert_slice(ful, sub, offsets, sizes, strides, _builder=None):
        sl = _slices(offsets, sizes, strides)
        d = np.array(ful.handle.data, copy=True)
        d[sl] = np.asarray(sub.handle.data).reshape(d[sl].shape)
        return tl.tensor(TensorHandle(d, ful.dtype), ful.type)

    cann = sys.modules.setdefault(
        "triton.language.extra.cann", types.ModuleType("triton.language.extra.cann")
    )
    ext = sys.modules.setdefault(
        "triton.language.extra.cann.extension",
        types.ModuleType("triton.language.extra.cann.extension"),
    )
    ext.get_element, ext.extract_slice, ext.insert_slice = get_element, extract_slice, insert_slice
    cann.extension = ext
    import triton.language.extra as extra

    extra.cann = cann
    # triton-ascend 3.2.0 declares extract_slice / insert_slice in tl, with no interpreter op
    for n, f in (
        ("get_element", get_element),
        ("extract_slice", extract_slice),
        ("insert_slice", insert_slice),
    ):
        setattr(tl, n, f)


def _fake_npu() -> None:
    import contextlib
    import types

    import torch

    if not hasattr(torch, "npu"):
        m = types.ModuleType("torch.npu")
        m.current_device = lambda: 0
        m.is_available = lambda: False
        m.device_count = lambda: 1
        m.get_device_name = lambda *a: "Ascend910B3"
        m.synchronize = lambda *a: None
        m.empty_cache = lambda *a: None
        m.device = lambda *a, **k: contextlib.nullcontext()
        m.current_stream = lambda *a: None
        torch.npu = m
        sys.modules["torch.npu"] = m


def _fake_driver(sm: int | None = None) -> None:
    from triton.runtime import autotuner
    from triton.runtime.driver import driver

    from ascend_lint.cpu_device import autotune

    props = dict(DEVICE_PROPS)
    if sm:
        # FLA's generic kernels size their grids from this GPU property: the case sets it.
        props["multiprocessor_count"] = sm  # noqa: ASC014

    class Utils:
        def get_device_properties(self, device=0):
            return dict(props)

    class Driver:
        utils = Utils()

        def get_benchmarker(self):
            return autotune.run_each_config_once

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_current_target(self):
            from triton.backends.compiler import GPUTarget

            return GPUTarget("npu", "Ascend910B3", 0)

        def is_active(self):
            return True

    driver.set_active(Driver())
    autotune._interpreter_accepts_config_options(autotuner.Config)


class _Stub:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else _Stub()

    def __getattr__(self, n):
        if n.startswith("__") and n.endswith("__"):
            raise AttributeError(n)
        return _Stub()

    def __getitem__(self, k):
        return _Stub()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __or__(self, o):
        return self

    __ror__ = __or__

    def __mro_entries__(self, bases):
        return (_StubBase,)


class _StubBase:
    def __init__(self, *a, **k):
        pass

    def __init_subclass__(cls, **k):
        pass


def _stub_modules(prefixes, real=None, fallback=False) -> None:
    """Stand-in modules for ``prefixes``: every attribute is a permissive stub, except the
    ``real`` ones.  With ``fallback``, only for modules no file provides."""
    import importlib.abc
    import importlib.machinery
    import types

    class StubModule(types.ModuleType):
        def __getattr__(self, n):
            if n.startswith("__") and n.endswith("__"):
                raise AttributeError(n)
            return _Stub()

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if any(name == p or name.startswith(p + ".") for p in prefixes):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            m = StubModule(spec.name)
            m.__path__ = []
            for k, v in (real or {}).get(spec.name, {}).items():
                setattr(m, k, v)
            return m

        def exec_module(self, module):
            pass

    if fallback:
        sys.meta_path.append(Finder())
    else:
        sys.meta_path.insert(0, Finder())


def _vllm_env() -> None:
    from types import SimpleNamespace as NS

    import torch
    import triton
    import triton.language as tl

    _ascend_extensions()
    _fake_npu()
    _fake_driver()

    class Logger:
        def __getattr__(self, n):
            return lambda *a, **k: None

    config = NS(
        rejection_sampler_config=NS(
            enable_block_verify=False,
            enable_entropy_verify=False,
            posterior_threshold=0.9,
            posterior_alpha=0.3,
        ),
        enable_reduce_sample=False,
    )
    _stub_modules(["vllm_ascend"], fallback=True)
    _stub_modules(
        [
            "vllm",
            "torch_npu",
            "vllm_ascend.ascend_config",
            "vllm_ascend.logger",
            "vllm_ascend.utils",
            "vllm_ascend.platform",
            "vllm_ascend.distributed",
            "vllm_ascend.quantization",
        ],
        real={
            "vllm.triton_utils": dict(tl=tl, triton=triton, HAS_TRITON=True),
            "vllm.logger": dict(logger=Logger(), init_logger=lambda *a, **k: Logger()),
            "vllm.v1.sample.rejection_sampler": dict(
                GREEDY_TEMPERATURE=0,
                MAX_SPEC_LEN=128,
                PLACEHOLDER_TOKEN_ID=-1,
                generate_uniform_probs=lambda n, nd, gens, device: torch.rand(
                    n, dtype=torch.float64
                ),
            ),
            "vllm_ascend.ascend_config": dict(get_ascend_config=lambda: config),
            "vllm.forward_context": dict(get_forward_context=lambda: NS(attn_metadata=None)),
            "vllm.distributed": dict(
                get_pcp_group=lambda: NS(world_size=1, rank_in_group=0),
                get_tp_group=lambda: NS(world_size=1, rank_in_group=0),
            ),
            "vllm.third_party.flash_linear_attention.ops.utils": dict(SUPPRESS_LEVEL=0),
        },
    )
    tensor = torch.tensor

    def no_pin(*a, pin_memory=False, **k):  # pinned host memory needs an accelerator
        return tensor(*a, **k)

    torch.tensor = no_pin
    from vllm_ascend.ops.triton.triton_utils import init_device_properties_triton

    init_device_properties_triton()


def gdn_ref(q, k, v, g, beta, scale, h0=None, cu=None):
    """The gated delta rule token by token, in fp32."""
    import torch

    B, T, H, K = q.shape
    o = torch.zeros(B, T, H, v.shape[-1])
    seqs = (
        [(b, 0, T) for b in range(B)]
        if cu is None
        else [(0, int(cu[i]), int(cu[i + 1])) for i in range(len(cu) - 1)]
    )
    finals = []
    for n, (b, s, e) in enumerate(seqs):
        S = torch.zeros(H, K, v.shape[-1]) if h0 is None else h0[n].float()
        for t in range(s, e):
            S = S * g[b, t].float().exp()[:, None, None]
            kt = k[b, t].float()
            u = beta[b, t].float()[:, None] * (v[b, t].float() - torch.einsum("hkv,hk->hv", S, kt))
            S = S + torch.einsum("hk,hv->hkv", kt, u)
            o[b, t] = torch.einsum("hkv,hk->hv", S, q[b, t].float() * scale)
        finals.append(S)
    return o, torch.stack(finals)


def _err(a, b) -> float:
    return float((a.float() - b.float()).abs().max())


# ---- drivers ----------------------------------------------------------------------------
def drv_fla_ascend(ctx: Ctx):
    import logging

    import fla.utils
    import fla.utils._device
    import torch
    import torch.nn.functional as F

    _fake_npu()
    _fake_driver()
    _ascend_extensions()
    fla.utils.IS_NPU = fla.utils._device.IS_NPU = True
    from fla.ops.backends import BaseBackend

    verify = BaseBackend.verify

    def verify_on_cpu(self, name, *a, **k):  # the backends' "input device is not NPU" check
        ok, why = verify(self, name, *a, **k)
        return (True, None) if (not ok and why and "not NPU" in why) else (ok, why)

    BaseBackend.verify = verify_on_cpu
    used = set()

    class Log(logging.Handler):
        def emit(self, r):
            m = r.getMessage()
            if "-> triton_ascend" in m:
                used.add(m.split("] ")[-1].split(" ->")[0])

    logging.getLogger("fla.ops.backends").addHandler(Log())
    logging.getLogger("fla.ops.backends").setLevel(logging.INFO)
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from fla.ops.utils.backends.triton_ascend.cumsum import (
        chunk_global_cumsum_npu,
        chunk_local_cumsum_npu,
    )

    torch.manual_seed(0)
    H, K, Vd = 2, 64, 64

    def run(B, T, cu=None, l2=False, gate=False):
        q, k = (
            torch.randn(B, T, H, K, requires_grad=True),
            torch.randn(B, T, H, K, requires_grad=True),
        )
        v = torch.randn(B, T, H, Vd, requires_grad=True)
        graw = torch.randn(B, T, H)
        g = (graw if gate else F.logsigmoid(graw)).requires_grad_()
        beta = torch.rand(B, T, H).requires_grad_()
        N = B if cu is None else len(cu) - 1
        h0 = (torch.randn(N, H, K, Vd) * 0.1).requires_grad_()
        extra = (
            dict(use_gate_in_kernel=True, A_log=torch.randn(H), dt_bias=torch.randn(H))
            if gate
            else {}
        )
        kk = k if l2 else F.normalize(k, dim=-1)
        o, ht = chunk_gated_delta_rule(
            q,
            kk,
            v,
            g,
            beta,
            initial_state=h0,
            output_final_state=True,
            cu_seqlens=cu,
            use_qk_l2norm_in_kernel=l2,
            **extra,
        )
        kk = None
        go, ght = torch.randn_like(o), torch.randn_like(ht)
        grads = torch.autograd.grad((o, ht), (q, k, v, g, beta, h0), (go, ght))
        if gate:
            return f"ran (o {tuple(o.shape)})"
        qq, kr = (
            (F.normalize(q, dim=-1), F.normalize(k, dim=-1)) if l2 else (q, F.normalize(k, dim=-1))
        )
        ro, rht = gdn_ref(qq, kr, v, g, beta, K**-0.5, h0, cu)
        rgrads = torch.autograd.grad((ro, rht), (q, k, v, g, beta, h0), (go, ght))
        return max([_err(o, ro), _err(ht, rht)] + [_err(a, b) for a, b in zip(grads, rgrads)])

    cu = torch.tensor([0, 37, 50, 123])
    ctx.check("GDN fwd+bwd B=2 T=100 (o, state, all grads)", lambda: run(2, 100))
    ctx.check("GDN fwd+bwd varlen", lambda: run(1, 123, cu))
    ctx.check("GDN fwd+bwd qk-l2norm in kernel", lambda: run(2, 80, l2=True))
    ctx.check("GDN fwd+bwd gate in kernel, varlen", lambda: run(1, 123, cu, gate=True))

    def local_ref(g, BT, cuts):
        out = torch.empty_like(g, dtype=torch.float)
        for a, b in cuts:
            for t in range(a, b, BT):
                e = min(t + BT, b)
                out[:, t:e] = g[:, t:e].float().cumsum(1)
        return out

    def cumsums():
        e = 0.0
        for shape in ((2, 100, 4), (2, 100, 4, 24)):
            g = torch.randn(*shape)
            e = max(
                e,
                _err(chunk_local_cumsum_npu(g, 16), local_ref(g, 16, [(0, 100)])),
                _err(chunk_global_cumsum_npu(g), g.cumsum(1)),
            )
        cuts = list(zip(cu[:-1].tolist(), cu[1:].tolist()))
        for shape in ((1, 123, 4), (1, 123, 4, 24)):
            g = torch.randn(*shape)
            r = torch.cat([g[:, a:b].cumsum(1) for a, b in cuts], 1)
            e = max(
                e,
                _err(chunk_local_cumsum_npu(g, 16, cu_seqlens=cu), local_ref(g, 16, cuts)),
                _err(chunk_global_cumsum_npu(g, cu_seqlens=cu), r),
            )
        return e

    ctx.check("chunk_local/global_cumsum scalar+vector, fixed+varlen", cumsums)

    from fla.modules.conv import causal_conv1d
    from fla.modules.fused_norm_gate import rms_norm_gated
    from fla.modules.layernorm import layer_norm, rms_norm
    from fla.modules.rotary import rotary_embedding, rotary_embedding_ref
    from fla.ops.kda import chunk_kda

    def kda():
        q, k, v = (torch.randn(2, 64, 2, 64, requires_grad=True) for _ in range(3))
        gk = F.logsigmoid(torch.randn(2, 64, 2, 64)).requires_grad_()
        beta = torch.rand(2, 64, 2).requires_grad_()
        o, _ = chunk_kda(q, k, v, gk, beta, use_qk_l2norm_in_kernel=True)
        o.sum().backward()
        return f"ran (o {tuple(o.shape)})"

    def norms():
        x, w, b = (
            torch.randn(2, 37, 96, requires_grad=True),
            torch.randn(96, requires_grad=True),
            torch.randn(96, requires_grad=True),
        )
        y = layer_norm(x, w, b)
        gy = torch.randn_like(y)
        ga = torch.autograd.grad(y, (x, w, b), gy)
        gb = torch.autograd.grad(F.layer_norm(x, (96,), w, b, 1e-5), (x, w, b), gy)
        e = max(
            [_err(y, F.layer_norm(x, (96,), w, b, 1e-5))] + [_err(p, r) for p, r in zip(ga, gb)]
        )
        rms_norm(x, w, None).sum().backward()
        rms_norm_gated(x, torch.randn(2, 37, 96, requires_grad=True), w, b).sum().backward()
        return f"layer_norm fwd+bwd max err {e:.1e}; rms_norm, rms_norm_gated ran"

    def conv():
        x = torch.randn(1, 123, 64, requires_grad=True)
        w = torch.randn(64, 4, requires_grad=True)
        y = causal_conv1d(x, w, cu_seqlens=cu)
        y = y[0] if isinstance(y, tuple) else y
        ref = []
        for a, b in zip(cu[:-1].tolist(), cu[1:].tolist()):
            xs = torch.cat([torch.zeros(3, 64), x[0, a:b]], 0)
            ref.append(torch.stack([(xs[t : t + 4] * w.T).sum(0) for t in range(b - a)]))
        y.sum().backward()
        return _err(y, torch.cat(ref)[None])

    def rot():
        x, c, s = torch.randn(2, 100, 2, 32), torch.randn(128, 16), torch.randn(128, 16)
        return _err(rotary_embedding(x, c, s), rotary_embedding_ref(x, c[:100], s[:100]))

    ctx.check("chunk_kda fwd+bwd B=2 T=64", kda)
    ctx.check("norms", norms)
    ctx.check("causal_conv1d fwd (+bwd ran) varlen", conv)
    ctx.check("rotary_embedding", rot)
    ctx.checks.append("triton_ascend backends used: " + ", ".join(sorted(used)))


def drv_fla_generic(ctx: Ctx):
    import torch
    import torch.nn.functional as F
    from fla.modules.l2norm import l2norm
    from fla.modules.layernorm import layer_norm
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule

    _fake_driver()
    torch.manual_seed(0)
    H, K, Vd = 2, 64, 64

    def gdn():
        q, k = torch.randn(2, 100, H, K), F.normalize(torch.randn(2, 100, H, K), dim=-1)
        v, g, beta = (
            torch.randn(2, 100, H, Vd),
            F.logsigmoid(torch.randn(2, 100, H)),
            torch.rand(2, 100, H),
        )
        h0 = torch.randn(2, H, K, Vd) * 0.1
        o, ht = chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0, output_final_state=True)
        ro, rht = gdn_ref(q, k, v, g, beta, K**-0.5, h0)
        return max(_err(o, ro), _err(ht, rht))

    def l2():
        x = torch.randn(2, 37, 4, 64, requires_grad=True)
        y = l2norm(x)
        gy = torch.randn_like(y)
        (gx,) = torch.autograd.grad(y, x, gy)
        (rgx,) = torch.autograd.grad(F.normalize(x, dim=-1, eps=1e-6), x, gy)
        return max(_err(y, F.normalize(x, dim=-1, eps=1e-6)), _err(gx, rgx))

    def ln():
        x, w, b = (
            torch.randn(50, 64, requires_grad=True),
            torch.randn(64, requires_grad=True),
            torch.randn(64, requires_grad=True),
        )
        y = layer_norm(x, w, b)
        gy = torch.randn_like(y)
        ga = torch.autograd.grad(y, (x, w, b), gy)
        gb = torch.autograd.grad(F.layer_norm(x, (64,), w, b, 1e-5), (x, w, b), gy)
        return max(
            [_err(y, F.layer_norm(x, (64,), w, b, 1e-5))] + [_err(a, c) for a, c in zip(ga, gb)]
        )

    ctx.check("chunk_gated_delta_rule fwd B=2 T=100", gdn)
    ctx.check("l2norm fwd+bwd", l2)
    ctx.check("layer_norm fwd+bwd T=50", ln)


def drv_fla_rwkv7(ctx: Ctx):
    import torch
    from fla.ops.rwkv7.channel_mixing import channel_mixing_rwkv7, channel_mixing_rwkv7_torch

    torch.manual_seed(0)
    B, T, D = 2, 5, 64

    def run():
        x, xp, xk = torch.randn(B, T, D), torch.randn(B, D), torch.randn(1, 1, D)
        kw, vw = torch.randn(D, 4 * D) * 0.1, torch.randn(4 * D, D) * 0.1
        ins = [t.clone().requires_grad_() for t in (x, xp, xk, kw, vw)]
        o, _ = channel_mixing_rwkv7(*ins, inplace=False)
        refs = [t.clone().requires_grad_() for t in (x, xp, xk, kw, vw)]
        r, _ = channel_mixing_rwkv7_torch(*refs)
        go = torch.randn_like(o)
        ga = torch.autograd.grad(o, ins, go)
        gb = torch.autograd.grad(r, refs, go)
        return max([_err(o, r)] + [_err(a, c) for a, c in zip(ga, gb)])

    ctx.check("channel mixing fwd+bwd (output and all grads)", run)


def drv_fla_rotary(ctx: Ctx):
    import torch
    from fla.modules.rotary import rotary_embedding, rotary_embedding_ref

    _fake_driver()
    torch.manual_seed(0)

    def interleaved():
        x = torch.randn(2, 100, 2, 32)
        cos, sin = torch.randn(128, 16), torch.randn(128, 16)
        y = rotary_embedding(x, cos, sin, interleaved=True)
        return _err(y, rotary_embedding_ref(x, cos[:100], sin[:100], interleaved=True))

    def offsets():
        x = torch.randn(2, 16, 2, 32)
        cos, sin = torch.randn(20, 16), torch.randn(20, 16)
        rotary_embedding(x, cos, sin, seqlen_offsets=torch.tensor([0, 8], dtype=torch.int32))
        return "ran (offset 8 + 16 tokens > 20 table rows)"

    ctx.check("interleaved, B=2 T=100", interleaved)
    ctx.check("seqlen_offsets tensor", offsets)


def drv_fla_conv(ctx: Ctx, cu):
    import torch
    from fla.modules.conv import causal_conv1d

    _fake_driver()
    torch.manual_seed(0)
    D, W = 64, 4
    cu = torch.tensor(cu)
    Tt = int(cu[-1])

    def ref(x, w, h0):
        ys = []
        for n, (a, b) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
            xs = torch.cat([h0[n, :, 1:].T, x[0, a:b]], 0)
            ys.append(torch.stack([(xs[t : t + W] * w.T).sum(0) for t in range(b - a)]))
        return torch.cat(ys)[None]

    def run():
        x, w, h0 = torch.randn(1, Tt, D), torch.randn(D, W), torch.randn(len(cu) - 1, D, W)
        ins = [t.clone().requires_grad_() for t in (x, w, h0)]
        y = causal_conv1d(ins[0], ins[1], initial_state=ins[2], cu_seqlens=cu)
        y = y[0] if isinstance(y, tuple) else y
        refs = [t.clone().requires_grad_() for t in (x, w, h0)]
        r = ref(*refs)
        gy = torch.randn_like(y)
        ga = torch.autograd.grad(y, ins, gy)
        gb = torch.autograd.grad(r, refs, gy)
        return f"y {_err(y, r):.1e}, dx {_err(ga[0], gb[0]):.1e}, dw {_err(ga[1], gb[1]):.1e}"

    ctx.check(f"fwd+bwd cu={cu.tolist()} (max err)", run)


def drv_fla_layernorm(ctx: Ctx, sm):
    import torch
    from fla.modules.fused_norm_gate import rms_norm_gated
    from fla.modules.layernorm import group_norm, layer_norm

    _fake_driver(sm)
    torch.manual_seed(0)

    def run():
        for T in (50, 7):
            x, w, b = (
                torch.randn(T, 64, requires_grad=True),
                torch.randn(64, requires_grad=True),
                torch.randn(64, requires_grad=True),
            )
            layer_norm(x, w, b).sum().backward()
            xg, wg, bg = (
                torch.randn(T, 128, requires_grad=True),
                torch.randn(128, requires_grad=True),
                torch.randn(128, requires_grad=True),
            )
            y = group_norm(xg, wg, bg, num_groups=4)
            (y * torch.randn_like(y)).sum().backward()
            rms_norm_gated(x, torch.randn(T, 64, requires_grad=True), w, b).sum().backward()
        return "ran"

    ctx.check(f"fwd+bwd with {sm} SMs", run)


def _liger_env():
    _fake_npu()
    _fake_driver()
    _stub_modules(["triton.tools.tensor_descriptor"])


def drv_liger_ascend(ctx: Ctx):
    import importlib

    import torch
    import torch.nn.functional as F

    _liger_env()

    def M(n):
        return importlib.import_module("liger_kernel.ops.backends._ascend.ops." + n)

    torch.manual_seed(0)
    B, T, H = 2, 37, 96

    def leaf(*s):
        return torch.randn(*s, requires_grad=True)

    def gerr(out, ref, *ins):
        g = torch.randn_like(ref)
        ga = torch.autograd.grad(out, ins, g, retain_graph=True, allow_unused=True)
        gb = torch.autograd.grad(ref, ins, g, allow_unused=True)
        e = _err(out, ref)
        for a, b in zip(ga, gb):
            if a is not None and b is not None:
                e = max(e, _err(a, b))
        return e

    def rms(x, w, eps=1e-6):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def t_rms():
        x, w = leaf(B, T, H), leaf(H)
        return gerr(
            M("rms_norm").LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False),
            rms(x, w),
            x,
            w,
        )

    def t_ln():
        x, w, b = leaf(B * T, H), leaf(H), leaf(H)
        return gerr(
            M("layer_norm").LigerLayerNormFunction.apply(x, w, b, 1e-6),
            F.layer_norm(x, (H,), w, b, 1e-6),
            x,
            w,
            b,
        )

    def t_swiglu():
        a, b = leaf(B, T, H), leaf(B, T, H)
        return gerr(M("swiglu").LigerSiLUMulFunction.apply(a, b), F.silu(a) * b, a, b)

    def t_geglu():
        a, b = leaf(B, T, H), leaf(B, T, H)
        return gerr(
            M("geglu").LigerGELUMulFunction.apply(a, b), F.gelu(a, approximate="tanh") * b, a, b
        )

    def t_rope():
        q, k = leaf(B, 4, T, 64), leaf(B, 2, T, 64)
        ang = torch.arange(T)[None, :, None].float() * (
            1.0 / 10000 ** (torch.arange(0, 64, 2).float() / 64)
        )
        emb = torch.cat([ang, ang], -1)
        cos, sin = emb.cos(), emb.sin()
        qo, ko = M("rope").LigerRopeFunction.apply(q, k, cos, sin)

        def rot(x):
            x1, x2 = x.chunk(2, -1)
            return torch.cat([-x2, x1], -1)

        return max(
            gerr(qo, q * cos[:, None] + rot(q) * sin[:, None], q),
            gerr(ko, k * cos[:, None] + rot(k) * sin[:, None], k),
        )

    def t_ce():
        x = leaf(B * T, 200)
        t = torch.randint(0, 200, (B * T,))
        t[3] = -100
        out = M("cross_entropy").LigerCrossEntropyFunction.apply(x, t, None, -100)
        out = out[0] if isinstance(out, tuple) else out
        return gerr(out, F.cross_entropy(x, t, ignore_index=-100), x)

    def t_softmax():
        x = leaf(B * T, H)
        return gerr(M("softmax").LigerSoftmaxFunction.apply(x), torch.softmax(x, -1), x)

    def t_gn():
        x, w, b = leaf(B, 8, 50), leaf(8), leaf(8)
        return gerr(
            M("group_norm").LigerGroupNormFunction.apply(x, w, b, 8, 4, 1e-6),
            F.group_norm(x, 4, w, b, 1e-6),
            x,
            w,
            b,
        )

    def t_kl():
        yp = torch.log_softmax(torch.randn(B * T, 300), -1).requires_grad_()
        yt = torch.softmax(torch.randn(B * T, 300), -1)
        return gerr(
            M("kl_div").LigerKLDivLossFunction.apply(yp, yt, "batchmean", False, 1e-10),
            F.kl_div(yp, yt, reduction="batchmean"),
            yp,
        )

    def t_jsd():
        x = torch.log_softmax(torch.randn(B * T, 300), -1).requires_grad_()
        t = torch.log_softmax(torch.randn(B * T, 300), -1)
        m = (0.5 * (x.exp() + t.exp())).log()
        r = (
            0.5
            * (
                F.kl_div(m, x, log_target=True, reduction="sum")
                + F.kl_div(m, t, log_target=True, reduction="sum")
            )
            / (B * T)
        )
        return gerr(M("jsd").LigerJSDFunction.apply(x, t, None, 0.5, -100), r, x)

    def t_dyt():
        x, a, g, b = leaf(B, T, H), leaf(1), leaf(H), leaf(H)
        return gerr(
            M("dyt").LigerDyTFunction.apply(x, a, g, b), g * torch.tanh(a * x) + b, x, a, g, b
        )

    def t_tvd():
        p = torch.softmax(torch.randn(B * T, 300), -1).requires_grad_()
        q = torch.softmax(torch.randn(B * T, 300), -1)
        return gerr(
            M("tvd").LigerTVDLossFunction.apply(p, q, None, "batchmean", -100),
            0.5 * (p - q).abs().sum() / (B * T),
            p,
        )

    def t_addrms():
        x, r, w = leaf(B, T, H), leaf(B, T, H), leaf(H)
        y, s = M("fused_add_rms_norm").LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)
        return max(gerr(y, rms(x + r, w), x, r, w), _err(s, x + r))

    def t_emb():
        E, idx = leaf(100, H), torch.randint(0, 100, (B, T))
        return gerr(M("embedding").LigerEmbeddingFunction.apply(E, idx), F.embedding(idx, E), E)

    def t_poly():
        x, w, b = leaf(B, T, H), leaf(3), torch.randn((), requires_grad=True)

        def n(u):
            return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + 1e-6)

        return gerr(
            M("poly_norm").LigerPolyNormFunction.apply(x, w, b, 1e-6, False),
            w[0] * n(x**3) + w[1] * n(x**2) + w[2] * n(x) + b,
            x,
            w,
            b,
        )

    def t_flce():
        x, W = leaf(B * T, H), leaf(200, H)
        t = torch.randint(0, 200, (B * T,))
        out = M("fused_linear_cross_entropy").LigerFusedLinearCrossEntropyFunction.apply(x, W, t)
        out = out[0] if isinstance(out, tuple) else out
        return gerr(out, F.cross_entropy(x @ W.T, t), x, W)

    for name, fn in (
        ("rms_norm", t_rms),
        ("layer_norm", t_ln),
        ("swiglu", t_swiglu),
        ("geglu", t_geglu),
        ("rope", t_rope),
        ("cross_entropy", t_ce),
        ("softmax", t_softmax),
        ("group_norm", t_gn),
        ("kl_div", t_kl),
        ("jsd", t_jsd),
        ("dyt", t_dyt),
        ("tvd", t_tvd),
        ("fused_add_rms_norm", t_addrms),
        ("embedding", t_emb),
        ("poly_norm", t_poly),
        ("fused_linear_cross_entropy", t_flce),
    ):
        ctx.check(name, fn)


def drv_liger_softmax(ctx: Ctx):
    import torch

    _liger_env()
    from liger_kernel.ops.backends._ascend.ops.softmax import LigerSoftmaxFunction

    torch.manual_seed(0)

    def run():
        x = torch.randn(2, 3, 8200, requires_grad=True)
        y = LigerSoftmaxFunction.apply(x)
        g = torch.randn_like(y)
        (dx,) = torch.autograd.grad(y, x, g)
        r = torch.softmax(x, -1)
        (rdx,) = torch.autograd.grad(r, x, g)
        return max(_err(y, r), _err(dx, rdx))

    ctx.check("softmax fwd+bwd, 8200 columns (multi-block)", run)


def drv_liger_ce(ctx: Ctx):
    import torch

    _stub_modules(["triton.tools.tensor_descriptor"])
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction

    torch.manual_seed(0)

    def run():
        x = torch.randn(74, 200, requires_grad=True)
        t = torch.randint(0, 200, (74,))
        t[-1], t[0] = 203, -5
        try:
            out = LigerCrossEntropyFunction.apply(x, t, None, -100)
        except AssertionError as e:
            return f"host assertion: {e}"
        return f"ran, loss {float(out[0] if isinstance(out, tuple) else out):.3f}"

    ctx.check("targets -5 and 203 of 200", run)


def drv_vllm_gdn(ctx: Ctx):
    import torch

    _vllm_env()
    from vllm_ascend.ops.triton.fla.chunk_delta_h import chunk_gated_delta_rule_fwd_h
    from vllm_ascend.ops.triton.fla.chunk_o import chunk_fwd_o
    from vllm_ascend.ops.triton.fla.chunk_scaled_dot_kkt import chunk_scaled_dot_kkt_fwd
    from vllm_ascend.ops.triton.fla.cumsum import chunk_local_cumsum
    from vllm_ascend.ops.triton.fla.l2norm import l2norm_fwd
    from vllm_ascend.ops.triton.fla.solve_tril import solve_tril
    from vllm_ascend.ops.triton.fla.utils import prepare_chunk_indices
    from vllm_ascend.ops.triton.fla.wy_fast import recompute_w_u_fwd

    torch.manual_seed(0)
    H, K, Vd = 2, 64, 64
    cu = torch.tensor([0, 37, 50, 123, 190])
    T = 190

    def run():
        q, k = torch.randn(1, T, H, K), torch.randn(1, T, H, K)
        v, g, beta = (
            torch.randn(1, T, H, Vd),
            torch.nn.functional.logsigmoid(torch.randn(1, T, H)),
            torch.rand(1, T, H),
        )
        h0 = torch.randn(4, H, K, Vd) * 0.1
        q, k = l2norm_fwd(q), l2norm_fwd(k)
        ci = prepare_chunk_indices(cu, 64)
        gc = chunk_local_cumsum(g, chunk_size=64, cu_seqlens=cu)
        A = chunk_scaled_dot_kkt_fwd(
            k=k, beta=beta, g_cumsum=gc, cu_seqlens=cu, chunk_indices=ci, output_dtype=torch.float32
        )
        A = solve_tril(A=A, cu_seqlens=cu, chunk_indices_bt=ci, output_dtype=k.dtype)
        w, u = recompute_w_u_fwd(
            k=k, v=v, beta=beta, A=A, g_cumsum=gc, cu_seqlens=cu, chunk_indices=ci
        )
        h, v_new, ht = chunk_gated_delta_rule_fwd_h(
            k=k, w=w, u=u, g=gc, initial_state=h0, output_final_state=True, cu_seqlens=cu
        )
        o = chunk_fwd_o(q=q, k=k, v=v_new, h=h, g=gc, scale=K**-0.5, cu_seqlens=cu)
        ro, rht = gdn_ref(q, k, v, g, beta, K**-0.5, h0, cu)
        return max(_err(o, ro), _err(ht, rht))

    ctx.check("chain output and final state vs token-by-token", run)


def drv_vllm_reject(ctx: Ctx):
    from types import SimpleNamespace as NS

    import torch

    _vllm_env()
    from vllm_ascend.sample.rejection_sampler import rejection_sample

    torch.manual_seed(0)
    Vs = 64
    cu = torch.tensor([3, 6, 9], dtype=torch.int32)
    draft = torch.randint(0, Vs, (9,), dtype=torch.int32)
    bonus = torch.randint(0, Vs, (3, 1), dtype=torch.int32)

    def greedy():
        logits = torch.randn(9, Vs)
        logits[torch.arange(9), draft.long()] += 10  # drafts accepted
        out = rejection_sample(
            draft,
            [3, 3, 3],
            3,
            cu,
            None,
            logits,
            bonus,
            NS(all_greedy=True, all_random=False, temperature=torch.zeros(3), generators={}),
        )
        expect = torch.cat([draft.view(3, 3), bonus], 1)
        return (
            "matches greedy reference" if torch.equal(out, expect) else f"differs: {out.tolist()}"
        )

    def random():
        meta = NS(all_greedy=False, all_random=True, temperature=torch.ones(3), generators={})
        for dp in (None, torch.softmax(torch.randn(9, Vs), -1)):
            out = rejection_sample(draft, [3, 3, 3], 3, cu, dp, torch.randn(9, Vs), bonus, meta)
        return f"ran (last {out.tolist()})"

    ctx.check("greedy", greedy)
    ctx.check("random", random)


def drv_vllm_placeholder(ctx: Ctx):
    from types import SimpleNamespace as NS

    import torch

    _vllm_env()
    from vllm_ascend.sample.rejection_sampler import rejection_sample

    torch.manual_seed(0)
    cu = torch.tensor([3, 6, 9], dtype=torch.int32)
    draft = torch.full((9,), -1, dtype=torch.int32)
    meta = NS(all_greedy=False, all_random=True, temperature=torch.ones(3), generators={})

    def run():
        outs = []
        for dp in (None, torch.softmax(torch.randn(9, 64), -1)):
            out = rejection_sample(
                draft,
                [3, 3, 3],
                3,
                cu,
                dp,
                torch.randn(9, 64),
                torch.randint(0, 64, (3, 1), dtype=torch.int32),
                meta,
            )
            outs.append(f"{'with' if dp is not None else 'without'} draft probs: {out.tolist()}")
        return "ran; " + "; ".join(outs)

    ctx.check("placeholder drafts", run)


def drv_mojo_a2(ctx: Ctx):
    import importlib

    import torch
    import torch.nn.functional as F

    _fake_npu()
    _fake_driver()
    _ascend_extensions()
    _stub_modules(["mojo_opset"], fallback=True)

    def M(n):
        return importlib.import_module("mojo_opset.backends.ttx.kernels.npu.a2." + n)

    torch.manual_seed(0)
    B, T, H = 2, 37, 96

    def emb():
        m = M("over_encoding.embedding")
        Vv, D, G = 50, 64, 16
        qw = torch.randint(0, 256, (Vv, D // 2), dtype=torch.uint8)
        sc, mn = torch.rand(Vv, D // G), torch.randn(Vv, D // G)
        ids = torch.randint(0, Vv, (B, T))
        ids[0, 3], ids[1, 5] = Vv + 7, -2
        out = m.embedding_nf4_dequant_impl(
            ids, qw, sc, mn, group_size=G, output_dtype=torch.float32
        )
        cb = m.get_nf4_codebook(device="cpu", dtype=torch.float16).float()
        deq = torch.stack([cb[(qw & 15).long()], cb[(qw >> 4).long()]], -1).reshape(
            Vv, D
        ) * sc.repeat_interleave(G, 1) + mn.repeat_interleave(G, 1)
        valid = (ids >= 0) & (ids < Vv)
        ref = torch.zeros(B, T, D)
        ref[valid] = deq[ids[valid]]
        return _err(out, ref)

    def rms():
        x, w = torch.randn(B, T, H), torch.randn(H)
        y, rstd = M("rmsnorm").rmsnorm_fwd_impl(x, w, 1e-6, 0.0, 0)
        dy = torch.randn(B, T, H)
        dx, dw = M("rmsnorm").rmsnorm_bwd_impl(dy, x, w, rstd, 0.0, 0, x.dtype)[:2]
        xx, ww = x.clone().requires_grad_(), w.clone().requires_grad_()
        r = xx * torch.rsqrt(xx.pow(2).mean(-1, keepdim=True) + 1e-6) * ww
        r.backward(dy)
        return max(_err(y.view_as(r), r), _err(dx.view_as(x), xx.grad), _err(dw, ww.grad))

    def ln():
        x, w, b = torch.randn(B, T, H), torch.randn(H), torch.randn(H)
        y = M("layernorm").layernorm_fwd_impl(x, w, b, 1e-6)[0]
        return _err(y.view_as(x), F.layer_norm(x, (H,), w, b, 1e-6))

    def sw():
        a, b = torch.randn(B, T, H), torch.randn(B, T, H)
        c = M("swiglu").swiglu_fwd_impl(a, b)
        dc = torch.randn_like(c)
        da, db = M("swiglu").swiglu_bwd_impl(dc, a, b)
        aa, bb = a.clone().requires_grad_(), b.clone().requires_grad_()
        (F.silu(aa) * bb).backward(dc)
        return max(_err(c, F.silu(a) * b), _err(da, aa.grad), _err(db, bb.grad))

    def si():
        x = torch.randn(B, T, H)
        return _err(M("silu").silu_fwd_impl(x), F.silu(x))

    def ge():
        x = torch.randn(B, T, H)
        y = M("gelu").gelu_fwd_impl(x)
        return min(_err(y, F.gelu(x)), _err(y, F.gelu(x, approximate="tanh")))

    def rope():
        q, k = torch.randn(B, T, 4, 64), torch.randn(B, T, 2, 64)
        ang = torch.arange(T)[:, None] * (1.0 / 10000 ** (torch.arange(0, 64, 2) / 64))[None]
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
        qo, ko = M("rope").rope_fwd_impl(q, k, cos, sin, head_first=False)

        def rot(x):
            x1, x2 = x.chunk(2, -1)
            return torch.cat([-x2, x1], -1)

        return max(
            _err(qo, q * cos[None, :, None] + rot(q) * sin[None, :, None]),
            _err(ko, k * cos[None, :, None] + rot(k) * sin[None, :, None]),
        )

    for name, fn in (
        ("embedding_nf4_dequant (ids -2 and vocab+7)", emb),
        ("rmsnorm fwd+bwd", rms),
        ("layernorm fwd", ln),
        ("swiglu fwd+bwd", sw),
        ("silu fwd", si),
        ("gelu fwd", ge),
        ("rope fwd", rope),
    ):
        ctx.check(name, fn)


def drv_sgl_kernels(ctx: Ctx):
    import importlib

    import torch
    import torch.nn.functional as F

    _fake_npu()
    _fake_driver()
    _ascend_extensions()
    _stub_modules(["torch_npu"])
    _stub_modules(["sgl_kernel_npu"], fallback=True)

    def M(n):
        return importlib.import_module("sgl_kernel_npu." + n)

    torch.manual_seed(0)
    N, H = 74, 96

    def rms(x, w, eps=1e-6):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def rmsb():
        x, w, b = torch.randn(N, H), torch.randn(H), torch.randn(H)
        y = M("norm.rmsnorm_bias").rmsnorm_bias(x, w, b, 1e-6)
        return _err(y[0] if isinstance(y, tuple) else y, rms(x, w) + b)

    def l1():
        x = torch.rand(N, H) + 0.1
        return _err(M("norm.l1_norm").l1_norm(x), x / x.sum(-1, keepdim=True))

    def l2():
        x = torch.randn(2, 37, 4, 64)
        return _err(M("fla.l2norm").l2norm_fwd(x), F.normalize(x, dim=-1, eps=1e-6))

    def cums():
        cu = torch.tensor([0, 37, 50, 123, 190])
        g = torch.randn(1, 190, 4)
        o = M("fla.cumsum").chunk_local_cumsum(g, 64, cu_seqlens=cu)
        r = torch.empty_like(g)
        for a, b in zip(cu[:-1].tolist(), cu[1:].tolist()):
            for t in range(a, b, 64):
                e = min(t + 64, b)
                r[:, t:e] = g[:, t:e].cumsum(1)
        return _err(o, r)

    def amax():
        lg = torch.randn(5, 1000)
        ids, p = M("sample.argmax_softmax_prob").argmax_softmax_prob_fused(lg)
        return max(float((ids - lg.argmax(-1)).abs().max()), _err(p, lg.softmax(-1).max(-1).values))

    def gemma():
        x, r, w = torch.randn(N, H), torch.randn(N, H), torch.randn(H)
        return _err(
            M("norm.add_rmsnorm_bias").add_gemma_rms_norm(x, w, r, 1e-6)[0], rms(x + r, 1 + w)
        )

    for name, fn in (
        ("rmsnorm_bias", rmsb),
        ("l1_norm", l1),
        ("fla l2norm_fwd", l2),
        ("fla chunk_local_cumsum varlen", cums),
        ("argmax_softmax_prob_fused", amax),
        ("add_gemma_rms_norm", gemma),
    ):
        ctx.check(name, fn)


def drv_ta_tutorials(ctx: Ctx):
    import ast
    import types

    import torch
    import torch.nn.functional as F

    _fake_npu()
    _fake_driver()
    _stub_modules(["torch_npu"])

    def load(fname):
        """The tutorial's imports, functions and classes (not its top-level demo)."""
        path = os.path.join(ctx_src(), fname)
        with open(path) as f:
            tree = ast.parse(f.read())
        tree.body = [
            n
            for n in tree.body
            if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
        ]
        mod = types.ModuleType(fname.replace("-", "_")[:-3])
        mod.__file__ = path
        exec(compile(tree, path, "exec"), mod.__dict__)
        return mod

    torch.manual_seed(0)

    def add():
        m = load("01-vector-add.py")
        x, y = torch.rand(98432), torch.rand(98432)
        return _err(m.add(x, y), x + y)

    def ln():
        m = load("03-layer-norm.py")
        x, w, b = torch.randn(74, 96), torch.rand(96), torch.rand(96)
        return _err(m.layer_norm(x, (96,), w, b, 1e-5), F.layer_norm(x, (96,), w, b, 1e-5))

    def gather():
        m = load("09-gather.py")
        emb = torch.randn(50, 96)
        idx = torch.randint(-1, 50, (74,), dtype=torch.int32)
        return _err(m.triton_gather(emb, idx), m.torch_gather(emb, idx))

    def gather_sorted():
        m = load("10-gather_sorted.py")
        emb = torch.randn(50, 96)
        emb[0] = 1.0
        s = torch.sort(torch.randint(0, 50, (74,), dtype=torch.int32))[0]
        aux = torch.randperm(74).to(torch.int32)
        return _err(m.triton_gather_sorted(emb, s, aux), m.torch_gather_sorted(emb, s, aux))

    for name, fn in (
        ("01 vector add", add),
        ("03 layer norm", ln),
        ("09 gather, -1 indices", gather),
        ("10 gather_sorted", gather_sorted),
    ):
        ctx.check(name, fn)


def ctx_src() -> str:
    return sys.path[0]


# ---- minimal kernels (this file's own code) ----------------------------------------------
def _repro_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def copy_rows(x, y, n_rows, D: tl.constexpr, BD: tl.constexpr):
        r = tl.program_id(0)  # one row per program
        d = tl.program_id(1) * BD + tl.arange(0, BD)
        m = (r < n_rows) & (d < D)  # the spare program's row is masked out
        tl.store(y + r * D + d, tl.load(x + r * D + d, mask=m, other=0.0), mask=m)

    @triton.jit
    def seq_sums(x, cu, out, D: tl.constexpr, MAXLEN: tl.constexpr):
        n = tl.program_id(0)
        bos = tl.load(cu + n)  # the end, tl.load(cu + n + 1), is never consulted
        t = tl.arange(0, MAXLEN)
        d = tl.arange(0, D)
        # bug: reads MAXLEN rows whatever the length: a short sequence reads the next one's rows
        v = tl.load(x + (bos + t)[:, None] * D + d[None, :])
        tl.store(out + n * D + d, tl.sum(v, axis=0))

    @triton.jit
    def scale_by_max(x, ws, y, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        o = pid * BLOCK + tl.arange(0, BLOCK)
        if pid == 0:  # program 0 publishes the max ...
            tl.store(ws, tl.max(tl.abs(tl.load(x + tl.arange(0, BLOCK))), axis=0))
        s = tl.load(ws)  # ... which the other programs read, in whatever order they run
        tl.store(y + o, tl.load(x + o, mask=o < n) / s, mask=o < n)

    return copy_rows, seq_sums, scale_by_max


def drv_repro_row_tail(ctx: Ctx):
    import torch

    copy_rows, _, _ = _repro_kernels()
    x = torch.randn(4, 64)
    y = torch.empty_like(x)

    def run():
        copy_rows[(5, 2)](x, y, 4, D=64, BD=32)
        return _err(y, x)

    ctx.check("copy with one spare row", run)


def drv_repro_inside_storage(ctx: Ctx):
    import torch

    _, seq_sums, _ = _repro_kernels()
    x = torch.randn(10, 8)
    cu = torch.tensor([0, 3, 10], dtype=torch.int32)
    out = torch.empty(2, 8)

    def run():
        seq_sums[(2,)](x, cu, out, D=8, MAXLEN=4)
        return f"sequence 0 sum err {_err(out[0], x[0:3].sum(0)):.2f} (reads row 3 of sequence 1)"

    ctx.check("varlen sums", run)


def drv_repro_cross_program_read(ctx: Ctx):
    import torch

    _, _, scale_by_max = _repro_kernels()
    x = torch.randn(64)
    ws = torch.zeros(1)
    y = torch.empty_like(x)

    def run():
        scale_by_max[(4,)](x, ws, y, 64, BLOCK=16)
        return f"{_err(y, x / x[:16].abs().max()):.1e} (correct only because program 0 runs first here)"

    ctx.check("scale by program 0's max", run)


if __name__ == "__main__":
    sys.exit(main())
