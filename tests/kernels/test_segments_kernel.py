"""reference_kernels.segments: segment starts and lengths, the clamp kept under a select."""

from pathlib import Path

import pytest
import torch
from _jit_signature import jit_signature

from ascend_lint.diagnostics import Applicability
from ascend_lint.engine import lint_source
from ascend_lint.fixes import fix_source
from reference_kernels import segments
from reference_kernels import torch_reference as oracle
from reference_kernels.core_grid import VECTOR_CORES_ENV
from reference_kernels.segments import BLOCK, segment_lengths

SOURCE = Path(segments.__file__)
CLAMPED = "tl.load(cu_counts + tl.maximum(o - 1, 0), mask=m, other=0)"
UNCLAMPED = "tl.load(cu_counts + o - 1, mask=m, other=0)"


def counts(n, dtype, seed=0, empty_every=0):
    """An inclusive cumulative count of `n` ragged segments (some empty)."""
    gen = torch.Generator().manual_seed(seed)
    sizes = torch.randint(0, 9, (n,), generator=gen)
    if empty_every:
        sizes[::empty_every] = 0
    return sizes.cumsum(0).to(dtype)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize(
    ("n", "empty_every"),
    [
        pytest.param(1, 0, id="one-segment"),
        pytest.param(5, 2, id="n5-empty-segments"),
        pytest.param(BLOCK, 0, id="one-full-tile"),
        pytest.param(3 * BLOCK + 17, 5, id="ragged-tail"),
    ],
)
def test_segment_lengths(n, empty_every, dtype):
    cu = counts(n, dtype, empty_every=empty_every)
    starts, lengths = segment_lengths(cu)
    ref_starts, ref_lengths = oracle.segment_lengths_ref(cu)
    assert starts.dtype == lengths.dtype == dtype
    torch.testing.assert_close(starts, ref_starts, rtol=0, atol=0)
    torch.testing.assert_close(lengths, ref_lengths, rtol=0, atol=0)


@pytest.mark.parametrize("cores", [1, 3])
def test_task_loop_covers_every_tile_with_few_programs(monkeypatch, cores):
    monkeypatch.setenv(VECTOR_CORES_ENV, str(cores))
    cu = counts(5 * BLOCK + 3, torch.int64, seed=1)
    starts, lengths = segment_lengths(cu)
    ref_starts, ref_lengths = oracle.segment_lengths_ref(cu)
    torch.testing.assert_close(starts, ref_starts, rtol=0, atol=0)
    torch.testing.assert_close(lengths, ref_lengths, rtol=0, atol=0)


def test_empty_and_wrong_inputs():
    starts, lengths = segment_lengths(torch.zeros(0, dtype=torch.int64))
    assert starts.shape == lengths.shape == (0,)
    with pytest.raises(ValueError, match="1-D integer"):
        segment_lengths(torch.zeros(4))
    with pytest.raises(ValueError, match="1-D integer"):
        segment_lengths(torch.zeros(2, 2, dtype=torch.int64))


def test_segment_count_is_a_runtime_argument():
    """A new batch size must not compile the kernel again (ASC013)."""
    constexprs, not_specialised = jit_signature(SOURCE, "segment_lengths_kernel")
    assert constexprs == {"BLOCK"}
    assert {"n", "n_tiles"} <= not_specialised


def test_asc024_fix_of_the_unclamped_twin_is_the_reference_kernel():
    """The kernel without its clamp is the vLLM-Ascend defect: ASC024 reports it, and its
    fix writes the reference kernel back."""
    source = SOURCE.read_text()
    assert source.count(CLAMPED) == 1
    twin = source.replace(CLAMPED, UNCLAMPED)
    row = next(i for i, line in enumerate(twin.splitlines(), 1) if UNCLAMPED in line)
    result = lint_source("segments.py", twin.encode(), frozenset({"ASC024"}))
    assert [(d.code, d.start.row) for d in result.diagnostics] == [("ASC024", row)]
    both = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    outcome = fix_source("segments.py", twin.encode(), frozenset({"ASC024"}), both)
    assert outcome.error is None and outcome.remaining == []
    assert outcome.fixed.decode() == source
