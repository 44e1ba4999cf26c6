"""Read a @triton.jit kernel's constexpr parameters and do_not_specialize list from source.

Under TRITON_INTERPRET the decorator returns an interpreter wrapper that keeps
neither, so the tests read them from the module's syntax tree instead.
"""

import ast
from pathlib import Path


def jit_signature(path: Path, kernel: str) -> tuple[set[str], set[str]]:
    """(constexpr parameter names, do_not_specialize names) of ``kernel`` in ``path``."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            constexprs = {
                a.arg
                for a in node.args.args
                if a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr")
            }
            not_specialised = set()
            for deco in node.decorator_list:
                for kw in getattr(deco, "keywords", []):
                    if kw.arg == "do_not_specialize":
                        not_specialised |= set(ast.literal_eval(kw.value))
            return constexprs, not_specialised
    raise LookupError(f"{kernel} not found in {path}")
