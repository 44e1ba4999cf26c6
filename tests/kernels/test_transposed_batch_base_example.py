"""examples/gpu_habits/transposed_batch_base.py: the ASC021 bug is real, and its fix works.

The example uses the varlen base of a transposed ``[B, HV, T]`` gate on the
fixed-length path too.  Under the interpreter: exact at B = 1, wrong for the second
batch at B = 2, right again after ASC021's fix, which is run here on the example (its
output is pinned beside it as ``transposed_batch_base.py.diff``); it is checked to
change only the gate base, split on ``IS_VARLEN``, and run like the example.
"""

import difflib
import importlib.util

import pytest
import torch
from _kernel_env import REPO_ROOT
from rule_snapshots import fix_example

from ascend_lint.rules import ALL_RULES
from examples.gpu_habits import transposed_batch_base as buggy

EXAMPLE = REPO_ROOT / "examples" / "gpu_habits" / "transposed_batch_base.py"
BT = 16


@pytest.fixture(scope="module")
def fixed_text():
    """What ASC021's fix, as `--fix --unsafe-fixes` applies it, makes of the example."""
    [rule] = [rule for rule in ALL_RULES if rule.code == "ASC021"]
    outcome = fix_example(rule, EXAMPLE.read_text(), str(EXAMPLE))
    assert outcome.error is None and outcome.changed
    return outcome.fixed.decode()


@pytest.fixture(scope="module")
def fixed(fixed_text, tmp_path_factory):
    """The fixed example, imported from a file (the interpreter reads its source)."""
    path = tmp_path_factory.mktemp("fixed") / "transposed_batch_base_fixed.py"
    path.write_text(fixed_text)
    spec = importlib.util.spec_from_file_location("transposed_batch_base_fixed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make(B, T, HV=4, V=32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(B, T, HV, V, generator=gen)
    g = -2.0 * torch.rand(B, T, HV, generator=gen)  # log2 gate: every row different
    return v, g


def oracle(v, g):
    return v.float() * torch.exp2(g.float())[..., None]


def max_abs_diff(a, b):
    return (a.float() - b.float()).abs().max().item()


def test_fixed_text_is_the_example_with_only_the_base_split(fixed_text):
    diff = [
        line
        for line in difflib.unified_diff(
            EXAMPLE.read_text().splitlines(), fixed_text.splitlines(), lineterm="", n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff == [
        "-    g_ptr = g + bos + i_h * T_seq",
        "+    if IS_VARLEN:",
        "+        g_ptr = g + bos + i_h * T_seq",
        "+    else:",
        "+        g_ptr = g + i_b * HV * T_seq + i_h * T_seq",
    ]


def test_varlen_base_is_exact_at_batch_one():
    v, g = make(1, 50)
    torch.testing.assert_close(buggy.gated_output(v, g, chunk_size=BT), oracle(v, g))


def test_varlen_base_reads_wrong_rows_for_the_second_batch():
    v, g = make(2, 50)
    out = buggy.gated_output(v, g, chunk_size=BT)
    ref = oracle(v, g)
    # the first batch is exact, which is why B = 1 tests never see the bug
    torch.testing.assert_close(out[0], ref[0])
    assert max_abs_diff(out[1], ref[1]) > 1e-2
    # batch 1, head h read batch 0, head h + 1 (the row one head further on)
    torch.testing.assert_close(out[1, :, 0], v[1, :, 0] * torch.exp2(g[0, :, 1])[:, None])


@pytest.mark.parametrize("B", [1, 2, 3])
def test_fixed_base_is_right_for_every_batch(fixed, B):
    v, g = make(B, 50, seed=B)
    torch.testing.assert_close(fixed.gated_output(v, g, chunk_size=BT), oracle(v, g))


@pytest.mark.parametrize("module", ["buggy", "fixed"])
def test_varlen_path_is_right_before_and_after(fixed, module):
    mod = buggy if module == "buggy" else fixed
    v, g = make(1, 129)
    cu_seqlens = torch.tensor((0, 37, 100, 129), dtype=torch.int64)
    out = mod.gated_output(v, g, cu_seqlens=cu_seqlens, chunk_size=BT)
    torch.testing.assert_close(out, oracle(v, g))
