"""The kernel index: one object per module holding every fact the rules ask about.

`KernelIndex.build(tree)` walks the module once for kernels and host functions, once
over host code for calls and dict displays, and binds every launch and helper call.
The queries live with the facts they are about (`LaunchQueries`, `LayoutQueries`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.gates import GateFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.layout import LayoutFacts
from ascend_lint.index.platform import PlatformFacts
from ascend_lint.index.quantities import QuantityFacts
from ascend_lint.index.sequences import SequenceFacts
from ascend_lint.index.strides import StrideFacts


@dataclass
class KernelIndex:
    core: CoreFacts

    def __post_init__(self) -> None:
        core = self.core
        self.tree = core.tree
        self.aliases = core.aliases
        self.kernels = core.kernels
        self.hosts = core.hosts
        self.launches = core.launches
        self.helper_calls = core.helper_calls
        self.configs = core.configs
        self.launch_calls = core.launch_calls
        self.by_name = core.by_name
        self.host_by_name = core.host_by_name
        self.host_calls = core.host_calls
        self.host_dicts = core.host_dicts
        self.resolve_callee = core.resolve_callee
        self.calls_to = core.calls_to
        self.calls_in = core.calls_in
        self.assigned_from = core.assigned_from
        self.parents = core.parents
        self.helper_binding = core.helper_binding
        self.helper_calls_to = core.helper_calls_to
        self.launches_of = core.launches_of
        self.launches_binding = core.launches_binding
        self.launches_binding_name = core.launches_binding_name
        self.argument_place = core.argument_place
        self.host = HostFacts(core)
        self.strides = StrideFacts(core, self.host)
        self.quantities = QuantityFacts(core, self.host, self.strides)
        self.layout = LayoutFacts(core, self.host)
        self.platform = PlatformFacts(core, self.host)
        self.sequences = SequenceFacts(core)
        self.gates = GateFacts(core, self.host, self.sequences)

    @classmethod
    def build(cls, tree: ast.Module) -> KernelIndex:
        return cls(CoreFacts.scan(tree))
