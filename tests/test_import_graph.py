"""The package's shape: no import circles, and one lint behind every front end.

The import graph is read from the source: every `import` and `from ... import`, at
module level, inside functions and under `if TYPE_CHECKING:` alike (a type-only import
still ties two modules together), with the rule folders at the top level mapped to the
package `ascend_lint.rules` they are installed as."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"ascend_lint": ROOT / "ascend_lint", "ascend_lint.rules": ROOT / "rules"}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join(parts + ([base] if base else []))
    # `from package import name` depends on the submodule where `name` is one
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _imported(node, name, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):
                submodules = [t for t in targets[:-1] if t in modules]
                targets = submodules if len(submodules) == len(targets) - 1 else targets
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in order:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_circle_finder_finds_a_circle_through_a_type_only_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_local_and_type_only_imports():
    graph = import_graph()
    # both are written inside a function or a TYPE_CHECKING block somewhere in the
    # package; the graph must hold such edges for the next test to mean anything
    assert "ascend_lint.index" in graph["ascend_lint.engine"]
    assert "ascend_lint.lowering.grid_use" in graph["ascend_lint.lowering.worker"]


def test_the_package_has_no_import_circle():
    assert circles(import_graph()) == []


def test_every_front_end_lints_through_session_lint_file():
    """The command line (its workers and standard input), the language server (whole and
    incremental) and the pytest gate reach `session.lint_file`; only the session and the
    fix rounds it starts call the engine's `lint_source` themselves."""
    graph = import_graph()
    callers = set()
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == "lint_source":
                    callers.add(name)
    assert callers <= {"ascend_lint.engine", "ascend_lint.session", "ascend_lint.fixes"}, callers
    for front_end in (
        "ascend_lint.runner",
        "ascend_lint.cli",
        "ascend_lint.incremental",
        "ascend_lint.pytest_plugin.linted_files",
    ):
        assert "ascend_lint.session" in graph[front_end], front_end


def test_no_rule_reads_noqa_comments():
    """Suppression is the engine's: a rule whose fix depends on it is told
    (`Rule.fix_live`)."""
    graph = import_graph()
    readers = sorted(
        name
        for name, imported in graph.items()
        if name.startswith("ascend_lint.rules.") and "ascend_lint.suppression" in imported
    )
    assert readers == []
