"""The kernel index: one object per module, composed of one facts object per kind of
fact, whose dependencies run one way.

`KernelIndex.build(tree)` scans the module into the core facts (`CoreFacts`: kernels,
host functions, host calls, launches and helper calls bound to their callees) and
builds on them, in this order, each facts object from exactly the ones below it:

    core ─┬─> values                                (every facts object may ask it)
          ├─> host ─┬─> strides ──> quantities ─┬─> tiles     (all three: also core,
          │         │                          ├─> coverage   host)
          │         │                          └─> emptiness
          │         ├─> layout
          │         ├─> platform                    (platform: also scopes, on core)
          │         ├─> dtypes
          │         ├─> core_kinds, storage         (both: also core)
          │         └──────────────> gates          (gates: also core, sequences,
          │                                          quantities)
          ├─> sequences ─┬─────────> gates
          │              └─────────> bounds         (bounds: also core, host; per
          │                                          kernel, `linear` forms)
          ├─> autotune                              (autotune: names through scopes)
          └─> lanes ──> accesses                    (lanes: also host, tiles)

The index holds them as `index.host`, `index.strides`, `index.quantities`,
`index.tiles`, `index.coverage`, `index.layout`, `index.platform`, `index.sequences`,
`index.gates`, `index.values`, `index.dtypes`, `index.bounds`, `index.autotune`,
`index.emptiness`, `index.core_kinds`, `index.storage`, `index.lanes` and
`index.accesses`, and forwards the core's
data and queries (`index.kernels`, `index.launches`, `index.calls_in`, ...); rules ask
the index, never the tree.
Building the facts objects costs nothing: each computes and caches what it is asked,
on first use.
"""

from __future__ import annotations

import ast

from ascend_lint.index.accesses import AccessFacts
from ascend_lint.index.autotune import AutotuneFacts
from ascend_lint.index.bounds import BoundFacts
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.core_kinds import CoreKindFacts
from ascend_lint.index.coverage import CoverageFacts
from ascend_lint.index.dtypes import DtypeFacts
from ascend_lint.index.emptiness import EmptinessFacts
from ascend_lint.index.gates import GateFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.lanes import LaneFacts
from ascend_lint.index.layout import LayoutFacts
from ascend_lint.index.platform import PlatformFacts
from ascend_lint.index.quantities import QuantityFacts
from ascend_lint.index.sequences import SequenceFacts
from ascend_lint.index.storage import StorageFacts
from ascend_lint.index.strides import StrideFacts
from ascend_lint.index.tiles import TileFacts
from ascend_lint.index.values import ValueFacts


class KernelIndex:
    """Every fact the rules ask about one module (see the module doc)."""

    def __init__(self, core: CoreFacts):
        self.core = core
        # The core's data, shared (not copied): what every layer and rule reads.
        self.tree = core.tree
        self.aliases = core.aliases
        self.kernels = core.kernels
        self.hosts = core.hosts
        self.launches = core.launches
        self.helper_calls = core.helper_calls
        self.configs = core.configs
        self.launch_calls = core.launch_calls
        self.by_name = core.by_name
        self.visible_function = core.visible_function
        self.host_calls = core.host_calls
        self.host_dicts = core.host_dicts
        # The core's queries, bound once: asking the index costs no extra call.
        self.resolve_callee = core.resolve_callee
        self.calls_in = core.calls_in
        self.arange_extents = core.arange_extents
        self.assigned_from = core.assigned_from
        self.parents = core.parents
        self.helper_binding = core.helper_binding
        self.helper_calls_to = core.helper_calls_to
        self.launches_of = core.launches_of
        self.launches_binding = core.launches_binding
        self.launches_binding_name = core.launches_binding_name
        self.argument_place = core.argument_place
        # The facts objects, lowest first.
        self.values = ValueFacts(core)
        self.host = HostFacts(core)
        self.strides = StrideFacts(core, self.host)
        self.quantities = QuantityFacts(core, self.host, self.strides)
        self.tiles = TileFacts(core, self.host, self.quantities)
        self.coverage = CoverageFacts(core, self.host, self.quantities)
        self.layout = LayoutFacts(core, self.host)
        self.platform = PlatformFacts(core, self.host)
        self.dtypes = DtypeFacts(core, self.host)
        self.sequences = SequenceFacts(core)
        self.gates = GateFacts(core, self.host, self.sequences, self.quantities)
        self.bounds = BoundFacts(core, self.host, self.sequences)
        self.autotune = AutotuneFacts(core)
        # Catalogue IV, launcher side (ASC025, ASC026, ASC030)
        self.emptiness = EmptinessFacts(core, self.host, self.quantities)
        self.core_kinds = CoreKindFacts(core, self.host)
        self.storage = StorageFacts(core, self.host)
        # What each lane of a value holds and where it goes; the memory accesses.
        self.lanes = LaneFacts(core, self.host, self.tiles)
        self.accesses = AccessFacts(core, self.lanes)

    @classmethod
    def build(cls, tree: ast.Module) -> KernelIndex:
        return cls(CoreFacts.scan(tree))
