"""The ASC001 gate fix as text: where it is offered, what it writes, where it is not.

The numbers (original and fixed kernels run side by side) are in
tests/kernels/test_gate_contig_fix.py; this file needs neither torch nor triton.
"""

import io
import json
import textwrap

import pytest

from ascend_lint.diagnostics import Applicability
from ascend_lint.engine import lint_source
from ascend_lint.fixes import fix_source
from ascend_lint.reporters import REPORTERS
from ascend_lint.settings import ALL_CODES

UNSAFE = frozenset({Applicability.SAFE, Applicability.UNSAFE})
ASC001 = frozenset({"ASC001"})
LAYOUT = frozenset({"ASC001", "ASC002"})

HEADER = """\
import torch
import triton
import triton.language as tl
"""

VARLEN_KERNEL = """
@triton.jit
def k(g, o, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))
"""

FIXED_VARLEN = (
    HEADER
    + """
@triton.jit
def k(g, o, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    # The stored time length, before varlen rebinds `T`.
    T_seq = T
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g + bos + i_h * T_seq, (T,), (1,), (i_t * BT,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))


def launch(g, o, cu_seqlens):
    B, T, HV = g.shape
    k[(4, HV)](g.transpose(1, 2).contiguous() if HV != 1 else g, o, cu_seqlens, T, HV=HV, BT=64, G_T_CONTIG=HV != 1)
"""
)


def _source(kernel: str, host: str) -> str:
    return HEADER + kernel + "\n\n" + textwrap.dedent(host).strip("\n") + "\n"


VARLEN = _source(
    VARLEN_KERNEL,
    """
    def launch(g, o, cu_seqlens):
        B, T, HV = g.shape
        k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)
    """,
)


def _asc001(text: str):
    return [d for d in lint_source("x.py", text.encode(), ASC001).diagnostics]


def test_offered_as_one_unsafe_fix_over_kernel_and_launcher():
    (finding,) = _asc001(VARLEN)
    fix = finding.fix
    assert fix.applicability is Applicability.UNSAFE
    rows = sorted({e.start.row for e in fix.edits})
    assert rows[0] < 12 < rows[-1]  # the kernel signature ... the launch line


def test_applied_with_unsafe_fixes_only_and_converges():
    safe_only = fix_source("x.py", VARLEN.encode(), ASC001, frozenset({Applicability.SAFE}))
    assert safe_only.fixed == VARLEN.encode()
    outcome = fix_source("x.py", VARLEN.encode(), ASC001, UNSAFE)
    assert outcome.error is None
    assert outcome.fixed.decode() == FIXED_VARLEN
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []
    again = fix_source("x.py", outcome.fixed, ASC001, UNSAFE)
    assert again.fixed == outcome.fixed and not again.applied


def test_dict_launch_gets_the_flag_next_to_the_gate():
    text = _source(
        VARLEN_KERNEL,
        """
        def launch(g, o, cu_seqlens):
            B, T, HV = g.shape
            kw = {
                'g': g,
                'o': o,
                'HV': HV,
            }
            k[(4, HV)](cu_seqlens=cu_seqlens, T=T, BT=64, **kw)
        """,
    )
    outcome = fix_source("x.py", text.encode(), ASC001, UNSAFE)
    fixed = outcome.fixed.decode()
    assert "        'g': g.transpose(1, 2).contiguous() if HV != 1 else g,\n" in fixed
    assert "        'G_T_CONTIG': HV != 1,\n" in fixed
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []


def test_optional_gate_is_not_transposed_when_missing():
    text = _source(
        VARLEN_KERNEL,
        """
        def launch(o, cu_seqlens, T, HV, g=None):
            k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)
        """,
    )
    fixed = fix_source("x.py", text.encode(), ASC001, UNSAFE).fixed.decode()
    assert "g.transpose(1, 2).contiguous() if g is not None and HV != 1 else g" in fixed


IN_PLACE_KERNEL = VARLEN_KERNEL.replace(
    "tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))",
    "tl.store(p_g, tl.load(p_g, boundary_check=(0,)) * 2, boundary_check=(0,))",
)


def test_tensor_updated_in_place_is_copied_in_and_back():
    """The kernel reads and writes `g`: the launch gets a [.., HV, T] copy of it, and
    its values go back into the caller's `g` right after, in the caller's layout."""
    text = _source(
        IN_PLACE_KERNEL,
        """
        def launch(g, o, cu_seqlens):
            B, T, HV = g.shape
            k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)  # doubles g
        """,
    )
    outcome = fix_source("x.py", text.encode(), ASC001, UNSAFE)
    fixed = outcome.fixed.decode()
    assert (
        "    g_t = g.transpose(-1, -2).contiguous() if HV != 1 else g\n"
        "    k[(4, HV)](g_t, o, cu_seqlens, T, HV=HV, BT=64, G_T_CONTIG=HV != 1)  # doubles g\n"
        "    if g_t is not g:\n"
        "        g.copy_(g_t.transpose(-1, -2))\n"
    ) in fixed
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []


def test_fresh_output_is_not_copied_in():
    """`torch.empty` holds nothing yet: the [.., HV, T] buffer is allocated, not copied;
    a name already taken in the launcher is not reused for it."""
    text = _source(
        IN_PLACE_KERNEL,
        """
        def launch(x, o, cu_seqlens):
            B, T, HV = x.shape
            g = torch.empty(B, T, HV)
            g_t = x.shape
            k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)
            return g
        """,
    )
    fixed = fix_source("x.py", text.encode(), ASC001, UNSAFE).fixed.decode()
    assert "g_t2 = g.new_empty(g.transpose(-1, -2).shape) if HV != 1 else g\n" in fixed
    assert "g.copy_(g_t2.transpose(-1, -2))" in fixed


def test_output_used_before_the_launch_is_copied_in():
    text = _source(
        IN_PLACE_KERNEL,
        """
        def launch(o, cu_seqlens, T, HV):
            g = torch.empty(1, T, HV)
            g.fill_(1.0)
            k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)
            return g
        """,
    )
    fixed = fix_source("x.py", text.encode(), ASC001, UNSAFE).fixed.decode()
    assert "g_t = g.transpose(-1, -2).contiguous() if HV != 1 else g\n" in fixed


@pytest.mark.parametrize(
    "kernel,host",
    [
        pytest.param(
            IN_PLACE_KERNEL,
            "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
            "    kw = dict(g=g, o=o)\n    k[(4, HV)](cu_seqlens=cu_seqlens, T=T, HV=HV, BT=64, **kw)",
            id="written-tensor-set-in-a-dict",
        ),
        pytest.param(
            IN_PLACE_KERNEL,
            "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
            "    handle = k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)\n    return handle",
            id="written-tensor-launch-value-used",
        ),
        pytest.param(
            IN_PLACE_KERNEL,
            "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
            "    k[(4, HV)](g, g, cu_seqlens, T, HV=HV, BT=64)",
            id="written-tensor-bound-twice",
        ),
        pytest.param(
            VARLEN_KERNEL,
            "",
            id="launched-from-another-file",
        ),
        pytest.param(
            VARLEN_KERNEL,
            "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
            "    k[(4, HV)](g.float(), o, cu_seqlens, T, HV=HV, BT=64)",
            id="gate-is-an-expression",
        ),
        pytest.param(
            VARLEN_KERNEL,
            "def run(kernel, g, o, cu_seqlens, T, HV):\n"
            "    kernel[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)\n\n"
            "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
            "    run(k, g, o, cu_seqlens, T, HV)",
            id="through-a-launch-helper",
        ),
        pytest.param(
            """
@triton.jit
def k(g, o, T, H: tl.constexpr, BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    p_g = tl.make_block_ptr(g + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_h * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))
""",
            "def launch(g, o):\n    H = g.shape[-1]\n    T = g.numel() // H\n"
            "    k[(4, H)](g, o, T, H=H, BT=64)",
            id="flattened-time-axis",
        ),
        pytest.param(
            VARLEN_KERNEL
            + """

@triton.jit
def w(g, T, HV: tl.constexpr):
    tl.store(g + tl.program_id(0), 1.0)
""",
            "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
            "    kw = dict(g=g, o=o, HV=HV)\n    w[(4,)](g, T, HV=HV)\n"
            "    k[(4, HV)](cu_seqlens=cu_seqlens, T=T, BT=64, **kw)",
            id="dict-built-before-another-kernel-writes-the-gate",
        ),
        pytest.param(
            """
@triton.jit
def k(g, o, cu_seqlens, total, T, HV: tl.constexpr, BT: tl.constexpr):
    i_k, i_t, i_nh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    g += i_k * total * HV + bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))
""",
            "def launch(g, o, cu_seqlens):\n    NK, B, T, HV = g.shape\n"
            "    k[(NK, 4, HV)](g, o, cu_seqlens, B * T, T, HV=HV, BT=64)",
            id="whole-planes-counted-by-an-argument",
        ),
    ],
)
def test_not_offered(kernel, host):
    text = HEADER + kernel + "\n\n" + host + "\n"
    findings = _asc001(text)
    assert findings
    for finding in findings:
        assert finding.fix is None or finding.fix.applicability is Applicability.DISPLAY_ONLY


def test_a_helper_shared_by_two_tensors_is_not_rewritten():
    kernel = """
@triton.jit
def at(x, i, HV: tl.constexpr):
    return tl.load(x + i * HV)


@triton.jit
def k(g, beta, o, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b = tl.load(p_g, boundary_check=(0,)) + at(g + bos * HV + i_h, 0, HV)
    tl.store(o + i_nh * BT + tl.arange(0, BT), b + at(beta + bos * HV + i_h, 0, HV))
"""
    host = (
        "def launch(g, beta, o, cu_seqlens):\n    B, T, HV = g.shape\n"
        "    k[(4, HV)](g, beta, o, cu_seqlens, T, HV=HV, BT=64)"
    )
    (finding,) = _asc001(HEADER + kernel + "\n\n" + host + "\n")
    assert finding.fix is None or finding.fix.applicability is Applicability.DISPLAY_ONLY


@pytest.mark.parametrize("fmt", ["sarif", "rdjson", "json"])
def test_machine_formats_carry_every_edit(fmt):
    (finding,) = _asc001(VARLEN)
    out = io.StringIO()
    REPORTERS[fmt]([finding], out)
    data = json.loads(out.getvalue())
    if fmt == "sarif":
        (result,) = data["runs"][0]["results"]
        (change,) = result["fixes"][0]["artifactChanges"]
        carried = change["replacements"]
    elif fmt == "rdjson":
        carried = data["diagnostics"][0]["suggestions"]
    else:
        carried = data[0]["fix"]["edits"]
    assert len(carried) == len(finding.fix.edits) >= 4


def test_not_offered_when_a_heuristic_reads_the_gate():
    kernel = '\n@triton.heuristics({"WIDE": lambda args: args["g"].shape[-1] > 4})' + VARLEN_KERNEL
    kernel = kernel.replace("BT: tl.constexpr)", "BT: tl.constexpr, WIDE: tl.constexpr)")
    host = (
        "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
        "    k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)"
    )
    (finding,) = _asc001(HEADER + kernel + "\n\n" + host + "\n")
    assert finding.fix is None or finding.fix.applicability is Applicability.DISPLAY_ONLY
    # `args["g"] is not None` is no reason to refuse: the copy is None exactly when g is.
    kernel = kernel.replace('args["g"].shape[-1] > 4', 'args["g"] is not None')
    (finding,) = _asc001(HEADER + kernel + "\n\n" + host + "\n")
    assert finding.fix.applicability is Applicability.UNSAFE


def test_a_gate_set_to_none_on_some_path_is_checked_before_the_copy():
    text = _source(
        VARLEN_KERNEL,
        """
        def launch(o, cu_seqlens, g_raw, T, HV):
            g = g_raw.cumsum(1) if g_raw is not None else None
            k[(4, HV)](g=g, o=o, cu_seqlens=cu_seqlens, T=T, HV=HV, BT=64)
        """,
    )
    fixed = fix_source("x.py", text.encode(), ASC001, UNSAFE).fixed.decode()
    assert "g=g.transpose(1, 2).contiguous() if g is not None and HV != 1 else g," in fixed


def test_crlf_file_keeps_its_line_endings():
    crlf = VARLEN.replace("\n", "\r\n").encode()
    outcome = fix_source("x.py", crlf, ASC001, UNSAFE)
    assert outcome.error is None and outcome.applied
    assert b"\n" not in outcome.fixed.replace(b"\r\n", b"")
    assert outcome.fixed.decode().replace("\r\n", "\n") == FIXED_VARLEN


def test_a_pointer_in_a_container_is_not_followed():
    kernel = VARLEN_KERNEL.replace(
        "    tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))",
        "    both = (g, o)\n"
        "    tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))",
    )
    host = (
        "def launch(g, o, cu_seqlens):\n    B, T, HV = g.shape\n"
        "    k[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)"
    )
    (finding,) = _asc001(HEADER + kernel + "\n\n" + host + "\n")
    assert finding.fix is None or finding.fix.applicability is Applicability.DISPLAY_ONLY


def test_leading_axis_is_kept_and_the_last_two_dimensions_swapped():
    """`g` is [NK, B, T, HV] (per-K-block partials): `i_k * all * HV` with `all = B * T`
    is whole [T, HV] planes, the same offset in [NK, B, HV, T], so it is kept, and the
    host swaps the last two dimensions (dimensions 1 and 2 would be B and T)."""
    text = _source(
        """
@triton.jit
def k(g, o, T, B: tl.constexpr, HV: tl.constexpr, BT: tl.constexpr):
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // HV, i_bh % HV
    all = B * T
    bos = i_b * T
    g += i_k * all * HV + bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_bh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))
""",
        """
        def launch(g, o):
            NK, B, T, HV = g.shape
            k[(NK, 4, B * HV)](g, o, T, B=B, HV=HV, BT=64)
        """,
    )
    outcome = fix_source("x.py", text.encode(), ASC001, UNSAFE)
    fixed = outcome.fixed.decode()
    assert "g += i_k * all * HV + i_b * HV * T + i_h * T\n" in fixed
    assert "k[(NK, 4, B * HV)](g.transpose(-1, -2).contiguous() if HV != 1 else g," in fixed
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []


def test_leading_axis_counted_with_an_int64_cast_is_kept():
    """`all = tl.cast(B, tl.int64) * T`, as ASC007's fix writes `(B * T).to(tl.int64)`,
    still counts whole [T, HV] planes."""
    text = _source(
        """
@triton.jit
def k(g, o, T, B: tl.constexpr, HV: tl.constexpr, BT: tl.constexpr):
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // HV, i_bh % HV
    all = tl.cast(B, tl.int64) * T
    bos = tl.cast(i_b, tl.int64) * T
    g += i_k * all * HV + bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_bh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))
""",
        """
        def launch(g, o):
            NK, B, T, HV = g.shape
            k[(NK, 4, B * HV)](g, o, T, B=B, HV=HV, BT=64)
        """,
    )
    outcome = fix_source("x.py", text.encode(), ASC001, UNSAFE)
    fixed = outcome.fixed.decode()
    assert "g += i_k * all * HV + i_b * HV * T + i_h * T\n" in fixed
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []


def test_dict_built_in_the_launching_statement_is_read_after_earlier_writes():
    """Another kernel writes `g` first; the dict that hands `g` on is built in the very
    statement that launches, so its transposed copy is taken after that write."""
    text = _source(
        VARLEN_KERNEL
        + """

@triton.jit
def w(g, T, HV: tl.constexpr):
    tl.store(g + tl.program_id(0), 1.0)
""",
        """
        def run(kernel, grid, kernel_kwargs):
            kernel[grid](**kernel_kwargs)

        def launch(g, o, cu_seqlens):
            B, T, HV = g.shape
            w[(4,)](g, T, HV=HV)
            run(k, (4, HV), kernel_kwargs=dict(g=g, o=o, cu_seqlens=cu_seqlens, T=T, HV=HV, BT=64))
        """,
    )
    outcome = fix_source("x.py", text.encode(), ASC001, UNSAFE)
    fixed = outcome.fixed.decode()
    assert "dict(g=g.transpose(1, 2).contiguous() if HV != 1 else g, o=o," in fixed
    assert "G_T_CONTIG=HV != 1)" in fixed
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []


LOOP_KERNEL = """
@triton.jit
def k(g, o, T, HV: tl.constexpr, BT: tl.constexpr):
    i_bh = tl.program_id(0)
    i_b, i_h = i_bh // HV, i_bh % HV
    bos = i_b * T
    g += bos * HV + i_h
    b_o = tl.zeros([BT], dtype=tl.float32)
    for i_s in range(0, T, BT):
        o_s = i_s + tl.arange(0, BT)
        b_g = tl.load(g + o_s * HV, mask=o_s < T, other=0)
        b_gp = tl.load(g + (i_s - 1) * HV) if i_s % BT > 0 else 0.0
        b_o += b_g - b_gp
    tl.store(o + i_bh * BT + tl.arange(0, BT), b_o)
"""


def test_a_conditional_expression_is_not_copied_into_both_branches():
    """Branching the whole statement would copy `... if i_s % BT > 0 else 0.0`, a
    runtime conditional in a loop (ASC003), into both branches: the flag chooses the
    address inside the expression instead, and no rule gains a finding."""
    source = _source(
        LOOP_KERNEL,
        """
        def launch(g, o):
            B, T, HV = g.shape
            k[(B * HV,)](g, o, T, HV=HV, BT=64)
        """,
    )
    outcome = fix_source("x.py", source.encode(), ASC001, UNSAFE)
    assert outcome.error is None and outcome.applied
    fixed = outcome.fixed.decode()
    assert (
        "        b_gp = tl.load(g + (i_s - 1) if G_T_CONTIG else g + (i_s - 1) * HV)"
        " if i_s % BT > 0 else 0.0\n" in fixed
    )
    assert "    if G_T_CONTIG:\n            b_g = tl.load(g + o_s, mask=o_s < T, other=0)" in fixed

    def counts(text: str) -> dict[str, int]:
        found = lint_source("x.py", text.encode(), ALL_CODES).diagnostics
        return {code: sum(d.code == code for d in found) for code in {d.code for d in found}}

    before, after = counts(source), counts(fixed)
    assert before.get("ASC003") == 1
    assert all(after[code] <= before.get(code, 0) for code in after), (before, after)


def test_a_statement_addressed_the_same_in_both_layouts_is_not_branched():
    """`g += i_k * all * HV` on its own line (whole [T, HV] planes of a leading axis) reads
    the same in [NK, B, HV, T]: an `if G_T_CONTIG:` with two identical branches would
    only be noise, and a layout rule would read its first branch as stale math."""
    text = _source(
        """
@triton.jit
def k(g, o, T, B: tl.constexpr, HV: tl.constexpr, BT: tl.constexpr):
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // HV, i_bh % HV
    all = B * T
    bos = i_b * T
    g += i_k * all * HV
    g += bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_bh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))
""",
        """
        def launch(g, o):
            NK, B, T, HV = g.shape
            k[(NK, 4, B * HV)](g, o, T, B=B, HV=HV, BT=64)
        """,
    )
    outcome = fix_source("x.py", text.encode(), ASC001, UNSAFE)
    fixed = outcome.fixed.decode()
    assert outcome.applied
    assert (
        "    all = B * T\n    bos = i_b * T\n    g += i_k * all * HV\n    if G_T_CONTIG:\n" in fixed
    )
    assert fixed.count("g += i_k * all * HV") == 1
    assert lint_source("x.py", outcome.fixed, LAYOUT).diagnostics == []
