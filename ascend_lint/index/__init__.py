"""The kernel index: every fact the rules need about one module, computed once.

Rules never walk the syntax tree to rediscover kernels, aliases, constexpr-ness or
launch bindings; they ask this index. It is built from the standard library's `ast`
(fast, positions included); libcst is used only where source is rewritten (fixes).

Where each kind of fact is computed (per kernel, then per module):

* `aliases`    imports: which local names stand for `triton`, `triton.language` and members
* `kernels`    `@triton.jit` functions: parameters, statements in order, the loops and
               branches around each, assignments, calls
* `constexpr`  compile-time or runtime, for every value at the statement that reads it;
               the definitions of a name that reach a statement (`fn.reaching`)
* `values`     the value model: per kernel (`kernel_values(fn, aliases)`), what every value is
               where a statement reads it: its reaching definitions, int64 or int32 per
               path, program id, compile-time int, pointer, loop-derived; per module
               (`ValueFacts`), what kind of int (compile-time, specialisable argument,
               runtime tensor) a value is when the kernel runs
* `launches`   host functions and their assignments, argument binding (`CallBinding`)
* `core`       `CoreFacts`: the scanned module, launches and helper calls bound to their
               callees, callee resolution, the calls in a kernel, bindings by callee
* `host`       `HostFacts`: host values, launch options in dicts, SIMT-only mode, flags
* `strides`    `StrideFacts`: whether a stride is unit, non-unit or unknown, and why
* `quantities` `QuantityFacts`: what a host value counts (tokens, batch, model dims,
               cores) and grid axes
* `tiles`      `TileFacts`: the data tiles a kernel holds, their shapes and element
               sizes, which are live together, and the configurations that size them
* `coverage`   `CoverageFacts`: the program-id axes a kernel (and its helpers) reads,
               its tiles per axis, task loops with an unbounded task index, and
               whether a launch's grid and blocks cover that work
* `layout`     `LayoutFacts`: transposed copies and the stride-1 `*_CONTIG` flags
* `platform`   `PlatformFacts`: code under a platform test, CUDA-only imports and
               device-property lookups, callees in `torch.cuda` and names that always
               hold a CUDA device
* `dtypes`     `DtypeFacts`: every use of a triton dtype in a kernel, how the dtype
               reaches it (spelled, a local, a module constant, a launch binding) and
               what the use does (conversion, cast, bitcast)
* `scopes`     `HostNames`: which value a name read in host code stands for, by
               Python's scoping (the bindings of each function and of the module)
* `sequences`  offsets tables, token offsets, sequence lengths, time vectors (by use);
               `SequenceFacts` adds what callers pass to helpers, and index vectors
* `gates`      `GateFacts`: how a kernel addresses a read-only gate, use by use;
               sequence starts; what each summand of an address counts on each path
               (time, whole rows, the batch step); what the host does with a launch
               argument
* `linear`     linear forms of index values: a value as a sum of integer multiples of
               products of atoms (lanes, loads, arguments, program ids), read through
               the reaching definitions (one `KernelForms` per kernel, held by `bounds`)
* `bounds`     `BoundFacts`: which index values can be negative where they are read
               (over linear forms), the lower bounds a mask or a comparison puts on a
               value, the facts branches and early exits give a statement, the loads
               only `tl.where` arms use and what each arm's condition bounds, what
               launches bind, whether an address reads a bounded quantity, lane-varying
               and loaded values, -1 sentinels, the table an index is loaded from
* `autotune`   `AutotuneFacts`: configs a config list repeats, comprehension loops
               no config reads
* `emptiness`  `EmptinessFacts`: which grid axes and block sizes an empty input makes 0,
               and the guards before a launch (or in its callers) that exclude it
* `core_kinds` `CoreKindFacts`: which core count (AI or vector) a grid is, literal core
               counts, kernels on the cube unit, the fewest cores of each target
* `storage`    `StorageFacts`: launch arguments that are one tensor, a kernel's loads,
               stores and atomics per pointer parameter in program order
* `lanes`      `LaneFacts`: what a kernel value holds per lane (int, float, bool,
               pointer; a block or a scalar; lanes read from memory), where a value
               ends up (an address, a mask, a select, data) and whether it changes
               from one loop iteration to the next
* `accesses`   `AccessFacts`: every load, store and atomic of a kernel, the tensors a
               pointer may address, pointers chosen at run time between tensors, and
               loads addressed by loaded index vectors (gathers)
* `naming`     naming conventions, the last tie-breaker where evidence is silent
* `syntax`     expression and statement helpers shared by all of the above
* `model`      `KernelIndex`, the core and the facts objects above, built once per module

The facts objects depend one way: `host` and `sequences` on the core, `strides`,
`layout` and `platform` on the core and `host` (`platform` also on `scopes`, which
depends on the core only), `quantities` also on `strides`, `tiles` and `coverage` on the
core, `host` and `quantities`, `gates` on the core,
`host`, `sequences` and `quantities`, `values` on the core (and, per kernel, the reaching
definitions of `constexpr`), `bounds` on the core, `host` and `sequences` (and, per
kernel, `linear`, on the reaching definitions), `emptiness` on the core, `host` and
`quantities`, `core_kinds` and `storage` on the core and `host`, `lanes` on the
core, `host` and `tiles`, and `accesses` on the core and `lanes`.
Rules reach each as an attribute of the index (`index.strides.stride_of(...)`,
`index.quantities.of(...)`).
"""

from __future__ import annotations

from ascend_lint.index.accesses import Access, AccessFacts, Gather, PointerChoice
from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.bounds import BoundFacts
from ascend_lint.index.context import Branch, Context, Loop
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.coverage import CoverageFacts
from ascend_lint.index.dtypes import DtypeFacts, DtypeUse
from ascend_lint.index.gates import GateFacts, GateSite, GateUses, SequenceStart
from ascend_lint.index.host import HostFacts, is_simt_only
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.lanes import KernelLanes, LaneFacts
from ascend_lint.index.launches import CallBinding, HostFunction
from ascend_lint.index.layout import ContigBranch, LayoutFacts, is_transposed_copy
from ascend_lint.index.model import KernelIndex
from ascend_lint.index.naming import is_head_count, is_length
from ascend_lint.index.platform import PlatformFacts, is_platform_test
from ascend_lint.index.quantities import QuantityFacts
from ascend_lint.index.sequences import SequenceFacts
from ascend_lint.index.strides import StrideFacts
from ascend_lint.index.syntax import (
    additive_terms,
    all_statements,
    call_name,
    children,
    dotted,
    factors,
    is_literal,
    names_in,
    own_nodes,
)
from ascend_lint.index.tiles import TileFacts
from ascend_lint.index.values import (
    IntKind,
    KernelValues,
    ValueFacts,
    is_int64_cast,
    is_program_count_call,
    is_program_id_call,
    pointer_names,
    pointer_root,
    strip_casts,
)

__all__ = [
    "LANGUAGE",
    "TRITON",
    "Access",
    "AccessFacts",
    "Aliases",
    "BoundFacts",
    "Branch",
    "CallBinding",
    "Context",
    "ContigBranch",
    "CoreFacts",
    "CoverageFacts",
    "DtypeFacts",
    "DtypeUse",
    "GateFacts",
    "GateSite",
    "GateUses",
    "Gather",
    "HostFacts",
    "HostFunction",
    "IntKind",
    "JitFunction",
    "KernelIndex",
    "KernelLanes",
    "KernelValues",
    "LaneFacts",
    "LayoutFacts",
    "Loop",
    "PlatformFacts",
    "PointerChoice",
    "QuantityFacts",
    "SequenceFacts",
    "SequenceStart",
    "StrideFacts",
    "TileFacts",
    "ValueFacts",
    "additive_terms",
    "all_statements",
    "call_name",
    "children",
    "dotted",
    "factors",
    "is_head_count",
    "is_int64_cast",
    "is_length",
    "is_literal",
    "is_platform_test",
    "is_program_count_call",
    "is_program_id_call",
    "is_simt_only",
    "is_transposed_copy",
    "names_in",
    "own_nodes",
    "pointer_names",
    "pointer_root",
    "strip_casts",
]
