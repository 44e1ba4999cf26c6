"""What the code generator's errors (the ``ttir`` stage) mean, read in the worker.

* ``located``: a ``CompilationError`` at its line in the file, with that source line; an
  error inside a ``@triton.jit`` helper, which triton wraps in one CompilationError per
  call site, at the helper's line, then each call that led there.
* ``platform_switch``: a kernel that calls another platform's libdevice function, chosen
  by its module at import time on a host with no NPU: the NPU backend maps no libdevice
  module, so the stub returns nothing and the code generator fails where the result is
  used.  The hint names the call.
"""

from __future__ import annotations

import os

from ascend_lint.lowering import diagnosis


def located(jit_fn, exc) -> str:
    """The code generator's error at its line in the file (CompilationError counts
    lines from the ``def``), with that one source line instead of a ten-line excerpt.
    An error inside a ``@triton.jit`` helper arrives wrapped in one CompilationError per
    call site; it is reported where it happened, then each call that led there."""
    frames = [(jit_fn, exc)]
    while True:
        fn, err = frames[-1]
        inner = err.__cause__
        callee = _called_jit(fn, getattr(err, "node", None))
        if not (type(inner).__name__ == "CompilationError" and callee is not None):
            break
        frames.append((callee, inner))
    fn, err = frames[-1]
    error = getattr(err, "error_message", None)
    text = diagnosis.plain_error(error) if error else getattr(err, "message", None) or str(err)
    where = _source_line(fn, err)
    if where is None:
        return text
    lines = [f"{where[0]}: {text}", f"    {where[1]}"]
    for fn, err in reversed(frames[:-1]):
        call = _source_line(fn, err)
        if call is not None:
            lines.append(f"  called from {call[0]}: {call[1]}")
    return "\n".join(lines)


def _source_line(jit_fn, exc) -> tuple[str, str] | None:
    """(``loc("file":L:C)``, the source line) of a CompilationError's node."""
    from triton.runtime.jit import get_jit_fn_file_line

    node = getattr(exc, "node", None)
    if node is None or not hasattr(node, "lineno"):
        return None
    try:
        path, def_line = get_jit_fn_file_line(jit_fn)
    except Exception:
        return None
    source = (getattr(exc, "src", None) or "").splitlines()
    text = source[node.lineno - 1].strip() if len(source) >= node.lineno else ""
    return f'loc("{path}":{def_line + node.lineno - 1}:{node.col_offset + 1})', text


def _called_jit(jit_fn, node):
    """The ``@triton.jit`` function a call node in ``jit_fn`` calls, if it is one."""
    import ast
    import types

    if not isinstance(node, ast.Call):
        return None
    scope = getattr(getattr(jit_fn, "fn", None), "__globals__", {})
    target = None
    if isinstance(node.func, ast.Name):
        target = scope.get(node.func.id)
    elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        owner = scope.get(node.func.value.id)
        if isinstance(owner, types.ModuleType):
            target = getattr(owner, node.func.attr, None)
    return target if hasattr(target, "src") and hasattr(target, "fn") else None


def platform_switch(jit_fn, module_map: dict) -> str:
    """A call in the kernel to another platform's libdevice (``triton.language.extra.
    libdevice``, its CUDA/HIP twins), which the NPU backend does not map: the stub
    returns nothing, and the code generator fails where the result is used.  Names the
    call, and says whether the module picked the function under an import-time
    condition (``if is_npu_available(): ... else: from ...libdevice import rsqrt``)."""
    import ast
    import inspect
    import textwrap
    import types

    fn = getattr(jit_fn, "fn", None)
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        path = os.path.realpath(inspect.getsourcefile(fn))
    except (OSError, TypeError, SyntaxError):
        return ""
    scope = fn.__globals__
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target, name = None, None
        if isinstance(node.func, ast.Name):
            name = node.func.id
            target = scope.get(name)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            owner = scope.get(node.func.value.id)
            if isinstance(owner, types.ModuleType):
                name = f"{node.func.value.id}.{node.func.attr}"
                target = getattr(owner, node.func.attr, None)
        module = getattr(target, "__module__", None) or ""
        if not _foreign_libdevice(module, module_map):
            continue
        line = first + node.lineno - 1
        chosen = " under an import-time condition" if _imported_conditionally(path, name) else ""
        return (
            f'{diagnosis.PLATFORM_PREFIX}loc("{path}":{line}:{node.col_offset + 1}): '
            f"{name}() is {module}.{getattr(target, '__name__', name)}, chosen by the module"
            f"{chosen} on a host with no NPU; the NPU backend maps no libdevice module, so the "
            "call returns nothing (on an NPU the module would pick triton.language.math or "
            "triton.language.extra.ascend.libdevice)\n"
        )
    return ""


def _foreign_libdevice(module: str, module_map: dict) -> bool:
    return (
        module.startswith("triton.language.extra.")
        and module.endswith("libdevice")
        and module not in module_map
        and not module.startswith(("triton.language.extra.ascend", "triton.language.extra.cann"))
    )


def _imported_conditionally(path: str, name: str) -> bool:
    """Whether the module binds ``name`` by an import inside a top-level ``if``/``try``."""
    import ast

    bound = name.split(".")[0]
    try:
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
        return False
    for statement in tree.body:
        if not isinstance(statement, (ast.If, ast.Try)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == bound for alias in node.names
            ):
                return True
    return False
