"""ASC022 ub-overflow: the lower bound against public figures, the liveness it rests on,
and the `target` setting that chooses the budget."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from lint_helpers import lint_code

from ascend_lint.cache import content_key
from ascend_lint.cli import main
from ascend_lint.engine import lint_source
from ascend_lint.index import KernelIndex
from ascend_lint.options import LintOptions
from ascend_lint.ub_model import get_target

A2 = get_target("ascend910b")

# The shape of computation of sgl-kernel-npu's `move_cache_dynamic_last_kernel_h_block`
# (PR #477): per layer, per block of H, one [H_BLOCK, BV, BK] state tile loaded from an
# fp32 cache and stored back. At H_BLOCK=2, BV=BK=128 the compiler reported
# "ub overflow, requires 2097152 bits while 1572864 bits available".
STATE_COPY = """
import torch
import triton
import triton.language as tl

@triton.jit
def gather_states(dst, src, index, n_layers, n_heads, layer_stride,
                  HB: tl.constexpr, BV: tl.constexpr, BK: tl.constexpr):
    slot = tl.load(index + tl.program_id(0))
    o_h = tl.arange(0, HB)
    o_v = tl.arange(0, BV)
    o_k = tl.arange(0, BK)
    tile = o_h[:, None, None] * (BV * BK) + o_v[None, :, None] * BK + o_k[None, None, :]
    for layer in range(n_layers):
        for h0 in range(0, n_heads, HB):
            base = layer * layer_stride + (slot * n_heads + h0) * BV * BK
            mask = (h0 + o_h)[:, None, None] < n_heads
            states = tl.load(src + base + tile, mask=mask, other=0.0)
            tl.store(dst + base + tile, states, mask=mask)

def gather(index, n_layers, n_heads, head_v, head_k, h_block):
    cache = torch.zeros((n_layers, 8, n_heads, head_v, head_k), dtype=torch.float32)
    out = cache.new_empty(cache.shape)
    gather_states[(index.numel(),)](
        out, cache, index, n_layers, n_heads, cache.stride(0),
        HB=h_block, BV=128, BK=128,
    )
"""


def _peaks(code: str, target: str = "ascend910b") -> dict[str, list[int]]:
    index = KernelIndex.build(ast.parse(textwrap.dedent(code)))
    out = {}
    for fn in index.kernels:
        peaks = [
            index.tiles.peak(fn, c.values, get_target(target)) for c in index.tiles.configs(fn)
        ]
        out[fn.name] = [p.bits if p else 0 for p in peaks]
    return out


def test_calibration_reproduces_the_reported_bits_of_sgl_kernel_npu_pr_477():
    code = STATE_COPY.replace("h_block):", "h_block=2):").replace("HB=h_block", "HB=2")
    assert _peaks(code) == {"gather_states": [2_097_152]}
    (finding,) = lint_code(code, select="ASC022").diagnostics
    assert "needs at least 2,097,152 bits of 1,572,864" in finding.message
    assert "HB=2, BV=128, BK=128" in finding.message
    assert "x2 multibuffer" in finding.message


def test_the_fixed_block_of_that_kernel_fits():
    # PR #477's fix tiles V and K: half the tile is within the budget, no finding.
    code = STATE_COPY.replace("HB=h_block, BV=128", "HB=1, BV=128")
    assert _peaks(code) == {"gather_states": [1_048_576]}
    assert lint_code(code, select="ASC022").diagnostics == []


def test_a_value_the_launch_does_not_fix_leaves_the_estimate_out():
    # HB comes from a caller nobody in the module shows: no number, no finding.
    assert _peaks(STATE_COPY) == {"gather_states": [0]}
    assert lint_code(STATE_COPY, select="ASC022").diagnostics == []


def test_an_unknown_element_type_counts_one_byte():
    code = STATE_COPY.replace(
        "cache = torch.zeros((n_layers, 8, n_heads, head_v, head_k), dtype=torch.float32)",
        "cache = make_cache()",
    ).replace("HB=h_block", "HB=2")
    assert _peaks(code) == {"gather_states": [2 * 128 * 128 * 1 * 8 * 2]}


@pytest.mark.parametrize(
    ("allocation", "bytes_"),
    [
        ("torch.zeros(SHAPE, dtype=torch.bfloat16)", 2),
        ("torch.empty(SHAPE, dtype=torch.float16)", 2),
        ("index.new_zeros(SHAPE, dtype=torch.int8)", 1),
        ("torch.empty(SHAPE).float()", 4),
        ("torch.empty(SHAPE).to(torch.float16)", 2),
    ],
)
def test_host_dtype_sets_the_element_size(allocation, bytes_):
    shape = "(n_layers, 8, n_heads, head_v, head_k)"
    code = STATE_COPY.replace(
        f"torch.zeros({shape}, dtype=torch.float32)", allocation.replace("SHAPE", shape)
    ).replace("HB=h_block", "HB=2")
    assert _peaks(code) == {"gather_states": [2 * 128 * 128 * bytes_ * 8 * 2]}


def test_a5_has_more_room_than_a2():
    # one fp32 [4, 14336] tile: 1,835,008 bits, over A2, within A5.
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BN": 14336})], key=["N"])
    @triton.jit
    def square(x, y, N, BN: tl.constexpr):
        o = tl.arange(0, 4)[:, None] * N + tl.arange(0, BN)[None, :]
        a = tl.load(x + o).to(tl.float32)
        tl.store(y + o, a * a)
    """
    assert _peaks(code) == {"square": [4 * 14336 * 4 * 8]}
    assert (
        len(lint_source("k.py", textwrap.dedent(code).encode(), frozenset({"ASC022"})).diagnostics)
        == 1
    )
    on_a5 = lint_source("k.py", textwrap.dedent(code).encode(), frozenset({"ASC022"}), target="a5")
    assert on_a5.diagnostics == []


def test_tiles_used_one_after_the_other_are_not_summed():
    # `a` is dead once `b` is computed: the peak is one tile, not two.
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BN": 32768})], key=["N"])
    @triton.jit
    def chain(x, y, BN: tl.constexpr):
        o = tl.arange(0, BN)
        a = tl.load(x + o).to(tl.float32)
        b = tl.exp(a)
        c = tl.sqrt(b)
        tl.store(y + o, c)
    """
    assert _peaks(code) == {"chain": [32768 * 4 * 8]}
    assert lint_code(code, select="ASC022").diagnostics == []


def test_what_a_later_iteration_reads_stays_live_through_the_loop():
    # `w` is loaded once and read in every iteration: live with the loop's tiles.
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def scale_rows(x, y, w, n, BN: tl.constexpr = 32768):
        o = tl.arange(0, BN)
        weight = tl.load(w + o).to(tl.float32)
        for i in range(n):
            row = tl.load(x + i * BN + o).to(tl.float32)
            tl.store(y + i * BN + o, row * weight)
    """
    assert _peaks(code) == {"scale_rows": [2 * 32768 * 4 * 8]}
    (finding,) = lint_code(code, select="ASC022").diagnostics
    assert "the parameter defaults" in finding.message and "live together" in finding.message


def test_last_dimension_is_padded_and_unit_dimensions_dropped():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def col(x, y, BM: tl.constexpr = 8, BN: tl.constexpr = 3):
        o = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
        a = tl.load(x + o).to(tl.float32)
        s = tl.sum(a, axis=1)
        r = tl.zeros([BM, 1], dtype=tl.float32)
        tl.store(y + o, a / s[:, None] + r)
    """
    # a: [8, 3] fp32 -> 8 rows of 32 bytes; s: [8] fp32 = 32 bytes; r: [8, 1] -> [8]
    assert _peaks(code) == {"col": [(8 * 32 + 32 + 32) * 8]}


def test_mixed_kernels_count_only_what_a_dot_feeds():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BM": 512, "BN": 512, "BK": 128})], key=["K"])
    @triton.jit
    def attn(q, k, o, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = tl.load(q + rm[:, None] * BK + rk[None, :])
        b = tl.load(k + rk[:, None] * BN + rn[None, :])
        s = tl.dot(a, b)
        p = tl.exp(s - tl.max(s, axis=1)[:, None])
        tl.store(o + rm[:, None] * BN + rn[None, :], p)
    """
    # only `p` ([BM / 2, BN] fp32 per vector core): 256 * 512 * 4 bytes, over the budget;
    # the loads and the dot result itself are not counted
    assert _peaks(code) == {"attn": [256 * 512 * 4 * 8]}
    (finding,) = lint_code(code, select="ASC022").diagnostics
    assert "`p` [BM, BN] = 512x512 x 4 B held" in finding.message
    smaller = code.replace('"BM": 512, "BN": 512', '"BM": 128, "BN": 256')
    assert _peaks(smaller) == {"attn": [64 * 256 * 4 * 8]}


def test_a_dot_accumulator_stays_with_the_cube_core():
    code = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BM": 512, "BN": 512, "BK": 256})], key=["K"])
    @triton.jit
    def mm(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in range(0, K, BK):
            acc += tl.dot(tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * BN + rn[None, :]))
        out = acc * 2.0
        tl.store(c + rm[:, None] * BN + rn[None, :], out)
    """
    # `acc` is not counted; `out`, a vector op on it, is: [256, 512] fp32
    assert _peaks(code) == {"mm": [256 * 512 * 4 * 8]}


def test_pointer_tiles_and_scalar_loads_are_not_data():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def rows(x, starts, BN: tl.constexpr = 65536):
        start = tl.load(starts + tl.program_id(0)).to(tl.int64)
        p = x + start + tl.arange(0, BN)
        offs = start * 2 + tl.arange(0, BN)
        tl.store(p, 0.0)
        tl.store(x + offs, 1.0)
    """
    assert _peaks(code) == {"rows": [0]}


def test_unbounded_block_of_a_token_count():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def cumsum_tokens(x, y, n, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        v = tl.load(x + o, mask=o < n, other=0).to(tl.float32)
        tl.store(y + o, tl.cumsum(v, axis=0), mask=o < n)

    def run(x, y):
        n_tokens = x.numel()
        cumsum_tokens[(1,)](x, y, n_tokens, BLOCK=triton.next_power_of_2(n_tokens))
    """
    (finding,) = lint_code(code, select="ASC022").diagnostics
    assert finding.start.row == 13
    assert "from `n_tokens` > 32,768 (`BLOCK` = 65,536)" in finding.message


def test_capped_or_small_model_dimension_blocks_are_not_reported():
    template = """
    import triton
    import triton.language as tl

    @triton.jit
    def head_norm(x, y, BK: tl.constexpr):
        o = tl.arange(0, BK)
        v = tl.load(x + tl.program_id(0) * BK + o).to(tl.float32)
        tl.store(y + tl.program_id(0) * BK + o, v / tl.sum(v * v, axis=0))

    def run(q, y):
        K = q.shape[-1]
        head_norm[(q.shape[0],)](q, y, BK=BLOCK)
    """
    # a head dim: bounded by the model, which the code does not show
    assert (
        lint_code(template.replace("BLOCK", "triton.next_power_of_2(K)"), "ASC022").diagnostics
        == []
    )
    capped = "min(triton.next_power_of_2(q.numel()), 4096)"
    assert lint_code(template.replace("BLOCK", capped), "ASC022").diagnostics == []


# ----------------------------------------------------------------- the target setting
OVER_A2 = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, y, BN: tl.constexpr = 57344):
        o = tl.arange(0, BN)
        a = tl.load(x + o).to(tl.float32)
        tl.store(y + o, a)
    """
)  # 57,344 fp32 = 1,835,008 bits: over A2's 1,572,864, within A5's 2,031,616


def _codes(capsys, *args):
    code = main(["check", "--no-cache", "--output-format", "json", "--select", "ASC022", *args])
    out, err = capsys.readouterr()
    return code, [d["code"] for d in json.loads(out)] if out.strip().startswith("[") else out, err


def test_target_from_the_command_line(project, capsys):
    (project / "k.py").write_text(OVER_A2)
    assert _codes(capsys, "k.py")[:2] == (1, ["ASC022"])
    assert _codes(capsys, "--target", "ascend910_95", "k.py")[:2] == (0, [])
    assert _codes(capsys, "--target", "A5", "k.py")[:2] == (0, [])
    assert _codes(capsys, "--target", "a3", "k.py")[:2] == (1, ["ASC022"])


def test_target_from_pyproject_and_show_settings(project, capsys):
    (project / "pyproject.toml").write_text('[tool.ascend-lint]\ntarget = "Ascend910_95"\n')
    (project / "k.py").write_text(OVER_A2)
    assert _codes(capsys, "k.py")[:2] == (0, [])
    assert main(["check", "--show-settings", "k.py"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == "ascend910_95"


def test_unknown_target_is_a_usage_error_with_a_suggestion(project, capsys):
    (project / "k.py").write_text(OVER_A2)
    code, _, err = _codes(capsys, "--target", "ascend910c", "k.py")
    assert code == 2 and "unknown target `ascend910c`; did you mean `ascend910b`?" in err
    (project / "pyproject.toml").write_text('[tool.ascend-lint]\ntarget = "ascend_910_93"\n')
    code, _, err = _codes(capsys, "k.py")
    assert code == 2 and "did you mean `ascend910_93`?" in err
    (project / "pyproject.toml").write_text("[tool.ascend-lint]\ntarget = 910\n")
    code, _, err = _codes(capsys, "k.py")
    assert code == 2 and "`target` must be a str" in err


def test_cache_keys_differ_by_target():
    codes = frozenset({"ASC022"})
    a2 = LintOptions(codes, target="ascend910b")
    a5 = LintOptions(codes, target="ascend910_95")
    assert content_key(b"x", a2) != content_key(b"x", a5)


def test_cached_results_are_not_reused_across_targets(project, capsys):
    (project / "k.py").write_text(OVER_A2)
    run = ["check", "--output-format", "json", "--select", "ASC022", "k.py"]
    assert main(run) == 1
    capsys.readouterr()
    assert main([*run, "--target", "a5"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_count_bounded_by_a_min_upstream_is_not_unbounded():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def merge(x, y, n, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        v = tl.load(x + o, mask=o < n, other=0).to(tl.float32)
        tl.store(y + o, v, mask=o < n)

    def run(x, y, limit):
        n_tokens = x.numel()
        group = min(limit, n_tokens)
        merge[(1,)](x, y, group, BLOCK=triton.next_power_of_2(group * 4))
    """
    assert lint_code(code, select="ASC022").diagnostics == []
    uncapped = code.replace("min(limit, n_tokens)", "n_tokens + limit")
    assert len(lint_code(uncapped, select="ASC022").diagnostics) == 1


def test_each_launch_is_its_own_configuration():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def fill(y, BN: tl.constexpr):
        o = tl.arange(0, BN)
        z = tl.zeros([BN], dtype=tl.float32)
        tl.store(y + o, z + 1.0)

    def small(y):
        fill[(1,)](y, BN=1024)

    def large(y):
        fill[(1,)](y, BN=65536)
    """
    assert _peaks(code) == {"fill": [1024 * 32, 65536 * 32]}
    (finding,) = lint_code(code, select="ASC022").diagnostics
    assert finding.start.row == 15 and "BN=65536 (the launch at line 15)" in finding.message


def test_constexpr_branches_count_only_where_the_config_compiles_them():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def norm(x, y, N, BN: tl.constexpr, ONE_PASS: tl.constexpr):
        o = tl.arange(0, BN)
        if ONE_PASS:
            row = tl.load(x + o).to(tl.float32)
            tl.store(y + o, row / tl.sum(row, axis=0))
        else:
            total = tl.zeros([1024], dtype=tl.float32)
            for i in range(0, N, 1024):
                total += tl.load(x + i + tl.arange(0, 1024)).to(tl.float32)
            tl.store(y, tl.sum(total, axis=0))

    def run(x, y):
        norm[(1,)](x, y, x.numel(), BN=65536, ONE_PASS=FLAG)
    """

    def peaks(flag):
        return _peaks(code.replace("FLAG", flag))["norm"]

    assert peaks("0") == [1024 * 4 * 8]  # the whole-row side is not compiled
    assert peaks("1") == peaks("True") == [65536 * 4 * 8]
    # a flag the launch does not fix: neither side is provably compiled
    assert peaks("x.numel() <= 65536") == [0]
    assert len(lint_code(code.replace("FLAG", "1"), select="ASC022").diagnostics) == 1
    assert lint_code(code.replace("FLAG", "x.numel() <= 65536"), select="ASC022").diagnostics == []


def test_views_aliases_and_casts_of_named_tiles_are_not_buffers_of_their_own():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def views(x, y, BN: tl.constexpr = 16384):
        o = tl.arange(0, BN)
        a = tl.load(x + o).to(tl.float32)
        b = a
        c = a[None, :]
        d = tl.reshape(a, (1, BN))
        e = a.to(tl.float32)
        tl.store(y + o, a + b + tl.sum(c, axis=0) + tl.sum(d, axis=0) + e)
    """
    assert _peaks(code) == {"views": [16384 * 4 * 8]}
