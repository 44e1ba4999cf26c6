"""Imports: which local names stand for `triton`, `triton.language` and their members.

Every import spelling counts (`import triton as tr`, `from triton import jit`,
`from triton.language import constexpr`, wrapper modules that re-export `triton`/`tl`).
One pass over the module's statements.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ascend_lint.index.syntax import all_statements, dotted

TRITON = "triton"
LANGUAGE = "triton.language"
# triton.language's atomic read-modify-write operations, by name and qualified
ATOMIC_OPS = (
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_xchg",
    "atomic_cas",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
)
ATOMICS = frozenset(f"{LANGUAGE}.{op}" for op in ATOMIC_OPS)
# ----------------------------------------------------------------------------- imports


_QUAL = "_ascend_lint_qual"
_UNSET = object()


@dataclass
class Aliases:
    """Local names bound to triton, triton.language or one of their members."""

    modules: dict[str, str] = field(
        default_factory=dict
    )  # local name -> "triton" | "triton.language"
    members: dict[str, str] = field(default_factory=dict)  # local name -> qualified member
    # local names bound by imports of anything else (`import mylib`, `from x import y`):
    # a call through one of them is not triton's, whatever its name
    foreign: set[str] = field(default_factory=set)

    @property
    def any(self) -> bool:
        return bool(self.modules or self.members)

    def resolve(self, node: ast.AST) -> str | None:
        """Qualified name of `tl.load`, `triton.language.load`, `load` (imported), ...
        (remembered on the node: every rule resolves the same callees)."""
        known = getattr(node, _QUAL, _UNSET)
        if known is _UNSET:
            known = self._resolve(node)
            setattr(node, _QUAL, known)
        return known

    def _resolve(self, node: ast.AST) -> str | None:
        parts = dotted(node)
        if not parts:
            return None
        head, rest = parts[0], parts[1:]
        if head in self.modules:
            base = self.modules[head]
        elif head in self.members:
            base = self.members[head]
        else:
            return None
        qual = ".".join([base, *rest])
        # `triton.language.core.load` and friends are the same functions.
        for sub in (".core.", ".standard.", ".math."):
            qual = qual.replace(LANGUAGE + sub, LANGUAGE + ".")
        return qual

    @classmethod
    def collect(cls, tree: ast.Module) -> Aliases:
        aliases = cls()
        for node in all_statements(tree.body):
            if isinstance(node, ast.Import):
                for item in node.names:
                    if item.name in (TRITON, LANGUAGE) or item.name.startswith(TRITON + "."):
                        if item.asname:
                            aliases.modules[item.asname] = item.name
                        else:
                            aliases.modules[TRITON] = TRITON
                    else:
                        aliases.foreign.add(item.asname or item.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                for item in node.names:
                    local = item.asname or item.name
                    if mod == TRITON or mod.startswith(TRITON + "."):
                        qual = f"{mod}.{item.name}"
                        if qual in (LANGUAGE,):
                            aliases.modules[local] = LANGUAGE
                        elif mod == "triton.runtime.jit" or mod == "triton.runtime":
                            aliases.members[local] = f"{TRITON}.{item.name}"
                        else:
                            aliases.members[local] = qual
                    elif item.name == TRITON:
                        # Wrapper modules that re-export triton (`from vllm.triton_utils import triton`).
                        aliases.modules[local] = TRITON
                    elif item.name in ("tl", "language") and "triton" in mod:
                        aliases.modules[local] = LANGUAGE
                    else:
                        aliases.foreign.add(local)
        return aliases
