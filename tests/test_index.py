"""The shared kernel index: the facts every rule relies on."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.index import KernelIndex


def build(code: str) -> KernelIndex:
    return KernelIndex.build(ast.parse(textwrap.dedent(code)))


@pytest.mark.parametrize(
    "imports,decorator,lang",
    [
        ("import triton\nimport triton.language as tl", "@triton.jit", "tl"),
        ("import triton as tr\nimport triton.language as language", "@tr.jit", "language"),
        ("from triton import jit\nfrom triton import language as tl", "@jit", "tl"),
        (
            "import triton\nimport triton.language as tl",
            '@triton.jit(do_not_specialize=["T"])',
            "tl",
        ),
        ("import triton\nfrom triton import language", "@triton.jit()", "language"),
        ("from vllm.triton_utils import tl, triton", "@triton.jit", "tl"),
    ],
)
def test_jit_under_every_import_spelling(imports, decorator, lang):
    index = build(
        f"{imports}\n\n{decorator}\ndef k(x, BT: {lang}.constexpr):\n    i = {lang}.program_id(0)\n"
    )
    [k] = index.kernels
    assert k.name == "k"
    assert k.constexpr_params == {"BT"}
    assert (
        index.aliases.resolve(ast.parse(f"{lang}.program_id").body[0].value)
        == "triton.language.program_id"
    )


def test_stacked_decorators_staticmethods_and_nested_definitions():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.heuristics({"X": lambda a: True})
        @triton.autotune(configs=[triton.Config({"BT": 64})], key=["T"])
        @triton.jit
        def stacked(x, T, BT: tl.constexpr):
            pass

        class Ops:
            @staticmethod
            @triton.jit
            def method(x):
                pass

        if triton is not None:
            @triton.jit
            def conditional(x):
                pass

        def plain(x):
            return x

        aliased = triton.jit(plain)
        """
    )
    assert sorted(k.name for k in index.kernels) == ["conditional", "method", "plain", "stacked"]
    assert index.by_name["aliased"][0].name == "plain"
    assert [k.owner for k in index.kernels if k.name == "method"] == ["Ops"]
    assert len(index.configs) == 1


def test_constexpr_and_runtime_classification():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.jit(do_not_specialize=["N"])
        def k(x, T, N, BT: tl.constexpr, BC: tl.constexpr, K: tl.constexpr):
            NC = BT // BC
            i_t = tl.program_id(0)
            b = tl.load(x + i_t)
            start = i_t * BT
            acc = 0
            for i in range(T):
                acc = acc + 1
            for s in tl.static_range(NC):
                t = s * BC
            for j in tl.range(0, N):
                pass
            dt = x.dtype
        """
    )
    [k] = index.kernels
    runtime = {"x", "T", "N", "i_t", "b", "start", "i", "acc", "j"}
    static = {"BT", "BC", "K", "NC", "s", "t", "dt"}
    assert runtime <= k.runtime_names
    assert not (static & k.runtime_names)


def test_launch_bindings_positional_keyword_and_dicts():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(a, b, c, D: tl.constexpr):
            pass

        class Runner:
            def go(self, x):
                opts = dict(c=x)
                opts["D"] = 4
                self.k[(1,)](x, b=x, **opts)

        def _launch(kernel, *, kernel_kwargs):
            kernel[(1,)](**kernel_kwargs)

        def outer(x):
            _launch(k, kernel_kwargs={"a": x, "b": x, "c": x, "D": 8})
        """
    )
    assert len(index.launches) == 2
    direct, via_helper = sorted(index.launches, key=lambda b: b.call.lineno)
    assert sorted(direct.args) == ["D", "a", "b", "c"]
    assert sorted(via_helper.args) == ["D", "a", "b", "c"]


def test_transposed_arguments_through_locals_and_helpers():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(g, beta, h, v):
            pass

        def _t(x):
            return x.transpose(1, 2).contiguous()

        def launch(g, beta, h, v):
            g_t = g.permute(0, 2, 1).contiguous()
            k[(1,)](g_t, _t(beta), h.transpose(1, 2), v=v)
        """
    )
    [k] = index.kernels
    assert index.layout.transposed_params(k) == {"g", "beta"}


def test_kernel_loops_and_branches_context():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, T, G_T_CONTIG: tl.constexpr):
            for i in range(T):
                if G_T_CONTIG:
                    a = 1
                else:
                    b = 2
        """
    )
    [k] = index.kernels
    stmts = {ast.unparse(s): s for s in k.statements}
    ctx = k.context(stmts["b = 2"])
    assert len(ctx.loops) == 1 and not ctx.loops[0].static
    assert ctx.branches[-1].taken is False


@pytest.mark.parametrize(
    "test,expected",
    [
        ("is_npu()", True),
        ("device_name == 'npu'", True),
        ("torch.cuda.is_available()", True),
        ('hasattr(torch, "npu") and torch.npu.is_available()', True),
        ("x.is_cuda", True),
        ("IS_NVIDIA_HOPPER", True),
        ("current_platform.device_name == 'npu'", True),
        ("input_ids is None", False),  # "input" is not "npu"
        ("use_cudagraph", False),  # a word that starts with cuda is not the platform
        ("relationship > 0", False),
    ],
)
def test_platform_test_words(test, expected):
    from ascend_lint.index import is_platform_test

    assert is_platform_test(ast.parse(test, mode="eval").body) is expected


def test_platform_guarded_code_and_flags():
    index = build(
        """
        import torch
        import triton
        import triton.language as tl

        if is_npu():
            a = torch.device("npu")
        else:
            b = torch.device("cuda")
        c = torch.device("cuda")
        d = "npu" if on_npu else torch.device("cuda")

        def _pdl(name):
            if name == "npu":
                return False
            return True

        def bench():
            if not torch.cuda.is_available():
                return
            e = torch.cuda.Event()

        @triton.jit
        def k(x, USE_PDL: tl.constexpr, OTHER: tl.constexpr):
            if USE_PDL:
                tl.extra.cuda.gdc_wait()
            if OTHER:
                tl.extra.cuda.gdc_wait()

        def launch(x, name):
            k[(1,)](x, USE_PDL=_pdl(name), OTHER=True)
        """
    )
    calls = {
        call.lineno: index.platform.platform_guarded(call)
        for call, _ in index.host_calls
        if getattr(call.func, "attr", "") in ("device", "Event")
    }
    assert calls == {7: True, 9: True, 10: False, 11: True, 21: True}
    [k] = index.kernels
    assert index.platform.platform_flags(k) == frozenset({"USE_PDL"})
    guarded = [index.platform.kernel_platform_guarded(k, stmt) for call, stmt in k.calls]
    assert guarded == [True, False]


def test_module_constants_and_simt_only_kernels():
    index = build(
        """
        import triton
        import triton.language as tl

        PREC = "tf32"
        TWICE = 1
        TWICE = 2
        if cond:
            GUARDED = "x"

        @triton.jit
        def simd(x):
            pass

        @triton.jit
        def simt(x):
            pass

        @triton.autotune(configs=[triton.Config({}, compile_mode="simt_only")], key=[])
        @triton.jit
        def tuned(x):
            pass

        def launch(x):
            simd[(1,)](x)
            opts = dict(force_simt_only=True)
            simt[(1,)](x, **opts)
        """
    )
    assert ast.literal_eval(index.host.module_constant("PREC")) == "tf32"
    assert index.host.module_constant("TWICE") is None
    assert index.host.module_constant("GUARDED") is None
    simt_only = index.host.simt_only_kernels()
    assert {k.name for k in index.kernels if id(k.node) in simt_only} == {"simt", "tuned"}


GRID_COVERAGE = """
import triton
import triton.language as tl

@triton.jit
def _head():
    return tl.program_id(2)

@triton.jit
def k(x, n, MULTI: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if MULTI:
        seq = tl.program_id(1)
        x += seq * n
    h = _head()
    tl.store(x + h * n + offs, 0.0, mask=offs < n)

def single(x):
    k[(triton.cdiv(x.numel(), 64),)](x, x.numel(), MULTI=False, BLOCK=64)

def passed_in(x, grid):
    k[grid](x, x.numel(), MULTI=True, BLOCK=64)

def two_grids(x, T):
    if T > 1:
        grid = (4, 4)
    else:
        def grid(meta):
            return (4,)
    k[grid](x, x.numel(), MULTI=True, BLOCK=64)
"""


def test_coverage_program_id_axes_blocks_and_grid_ranks():
    index = build(GRID_COVERAGE)
    kernel = index.by_name["k"][0]
    reads = index.coverage.axis_reads(kernel)
    assert sorted(reads) == [0, 1, 2]
    assert reads[2].fn.name == "_head"  # read in a helper the kernel calls
    single, passed_in, two_grids = index.launches
    # `if MULTI:` with MULTI=False bound at the launch: axis 1 is not read there
    assert sorted(index.coverage.live_axis_reads(single)) == [0, 2]
    assert sorted(index.coverage.live_axis_reads(passed_in)) == [0, 1, 2]
    tiles = index.coverage.tiles(kernel, 0)
    assert tiles.blocks == {"BLOCK"} and set(tiles.bounds) == {"n"} and not tiles.opaque
    assert not index.coverage.loops_over_programs(kernel)
    shapes = index.quantities.grid_shapes
    assert [len(s) for s in shapes(single.call, single.host)] == [1]
    assert shapes(passed_in.call, passed_in.host) == [None]  # a parameter: rank not shown
    # a tuple on one branch and a `def grid` on the other: the assignments do not show all
    assert shapes(two_grids.call, two_grids.host) == [None]


def test_coverage_tiles_that_start_from_a_runtime_offset_are_shifted():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, first_tile, BLOCK: tl.constexpr):
            offs = first_tile * BLOCK + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x + offs, 0.0, mask=offs < n)
        """
    )
    tiles = index.coverage.tiles(index.kernels[0], 0)
    assert tiles.shifted and tiles.blocks == {"BLOCK"} and set(tiles.bounds) == {"n"}


OPTION_SOURCES = {
    "a key assignment": 'opts = dict(c=x)\n    opts["num_warps"] = 4\n    k[(1,)](x, **opts)',
    "a dict display": 'k[(1,)](x, **{"c": x, "num_warps": 4})',
    "a dict call": "opts = dict(c=x, num_warps=4)\n    k[(1,)](x, **opts)",
    "a nested dict": '_launch(k, kernel_kwargs=dict(c=x, extra={"num_warps": 4}))',
}


@pytest.mark.parametrize("where", sorted(OPTION_SOURCES))
def test_option_dicts_asked_for_some_keys_find_each_kind_of_dict(where):
    # With `only`, a module is passed over unless a dict sets one of the keys: each
    # kind of dict that sets one must still be found.
    index = build(
        "import triton\n\n"
        "@triton.jit\n"
        'def k(x, c, D: "tl.constexpr"):\n    pass\n\n'
        "def _launch(kernel, *, kernel_kwargs):\n    kernel[(1,)](**kernel_kwargs)\n\n"
        f"def go(x):\n    {OPTION_SOURCES[where]}\n"
    )
    every = list(index.host.option_dicts())
    knobs = frozenset({"num_warps", "num_stages"})
    asked = list(index.host.option_dicts(only=knobs))
    assert asked == [entry for entry in every if entry[0] in knobs]
    assert [key for key, _node, _container in asked] == ["num_warps"]
    assert list(index.host.option_dicts(only=frozenset({"num_stages"}))) == []
