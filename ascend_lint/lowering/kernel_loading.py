"""Load a kernel from its file for lowering, without needing its module to import.

Real kernels live in packages whose import needs what a CPU machine does not have:
vLLM, `torch_npu`, `sgl_kernel_npu`, `flag_gems`, einops, or a package `__init__` that
imports all of those. Lowering needs only the kernel, the `@triton.jit` helpers it calls
and the module constants it reads. So when the module does not import, it is executed
again statement by statement from its source, with:

* every import that fails replaced by a stand-in module (`Replaced`): attributes and
  calls give further stand-ins, a decorator from it leaves the function as it is, a
  class deriving from one derives from `object`; each replaced module is recorded;
* every import of a module of the same source tree (`from .utils import helper`,
  `from pkg.ops.common import helper`) whose package cannot import loaded the same way,
  from its own file, so helpers defined beside the kernel are the real ones;
* every other statement that raises skipped and recorded (the kernel may not need it).

Line numbers and the file name are the real ones, so the compiler's locations and
`inspect.getsource` (which Triton reads the kernel from) point into the user's file.
After loading, a kernel (or a helper it calls) that reads a global which is a stand-in
is refused with the name and the import behind it: compiling it would fail with a
message about the stand-in, not about the kernel.

The loader imports nothing of triton itself; the caller has set up triton (the compile
worker with its stand-in driver) before loading.
"""

from __future__ import annotations

import ast
import builtins
import dis
import importlib
import importlib.util
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path


class LoadError(Exception):
    """The kernel could not be loaded, even with imports replaced; the message says why."""


@dataclass
class Loaded:
    module: types.ModuleType
    kernel: object
    replaced: list[str] = field(default_factory=list)  # modules stood in for, in order
    skipped: list[str] = field(default_factory=list)  # "file:line: Error: message"
    from_source: bool = False  # False: the module imported as it is


class Replaced(types.ModuleType):
    """What a failed import stands for: anything read from it is another stand-in."""

    def __init__(self, name: str, reason: str = ""):
        super().__init__(name)
        self.__dict__["_reason"] = reason
        self.__dict__["__path__"] = []  # a package: `from x.y import z` reaches z

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Replaced(f"{self.__name__}.{attr}", self._reason)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and _decorable(args[0]):
            # used as a decorator (`@stand_in()` over `@triton.jit` too): keep what it
            # decorates, so that a wrapper such as `triton.autotune` finds the function
            return args[0]
        return Replaced(f"{self.__name__}()", self._reason)

    def __getitem__(self, key):
        return Replaced(f"{self.__name__}[...]", self._reason)

    def __iter__(self):
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __mro_entries__(self, bases):
        return (object,)

    def __repr__(self) -> str:
        return f"<stand-in for {self.__name__}>"


def _decorable(obj) -> bool:
    """A function, a class, or a jit function or its wrappers (they carry `.fn`)."""
    if isinstance(obj, (types.FunctionType, type)):
        return True
    return not isinstance(obj, Replaced) and callable(obj) and hasattr(obj, "fn")


def _binary(self, *_other):
    return Replaced(f"{self.__name__}(...)", self._reason)


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "lshift"):
    setattr(Replaced, f"__{_op}__", _binary)
    setattr(Replaced, f"__r{_op}__", _binary)


def _triton_reexport(item: str, module: str):
    """triton or triton.language, for the names wrapper modules re-export them under."""
    if item == "triton":
        return importlib.import_module("triton")
    if item in ("tl", "language") and "triton" in module:
        return importlib.import_module("triton.language")
    return None


def package_root(path: Path) -> tuple[Path, list[str]]:
    """The folder above the file's package (the one without `__init__.py`) and the file's
    dotted name parts inside it: `/src/pkg/ops/k.py` -> (`/src`, ["pkg", "ops", "k"])."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, parts


class SourceLoader:
    """Loads modules of one source tree from their files, failed imports stood in."""

    def __init__(self, roots: list[Path]):
        self.roots = roots
        self.modules: dict[str, types.ModuleType] = {}  # dotted name -> loaded module
        self.replaced: dict[str, str] = {}  # module -> why
        self.skipped: list[str] = []

    def load_file(self, path: Path, name: str) -> types.ModuleType:
        if name in self.modules:
            return self.modules[name]
        module = types.ModuleType(name)
        module.__file__ = str(path)
        is_package = path.name == "__init__.py"
        module.__package__ = name if is_package else name.rpartition(".")[0]
        if is_package:
            module.__path__ = [str(path.parent)]
        module.__builtins__ = {**builtins.__dict__, "__import__": self._importer(module)}
        self.modules[name] = module  # before running: imports in a cycle see it
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError) as exc:
            raise LoadError(f"{path}: cannot read it: {exc}") from exc
        for stmt in tree.body:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), str(path), "exec")
            try:
                exec(code, module.__dict__)
            except Exception as exc:
                if not self._bind_without_failing_decorators(stmt, path, module):
                    self.skipped.append(f"{path}:{stmt.lineno}: {type(exc).__name__}: {exc}")
        return module

    def _bind_without_failing_decorators(self, stmt, path: Path, module) -> bool:
        """A definition whose decorator raises here (a launch-cache wrapper that reads the
        device count at decoration time) is bound with that decorator left out and the
        others applied innermost first, as Python applies them; recorded as skipped."""
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        if not stmt.decorator_list:
            return False
        bare = type(stmt)(**{**stmt.__dict__, "decorator_list": []})
        code = compile(ast.Module(body=[bare], type_ignores=[]), str(path), "exec")
        try:
            exec(code, module.__dict__)
        except Exception:
            return False
        obj = module.__dict__[stmt.name]
        for decorator in reversed(stmt.decorator_list):
            expr = compile(ast.Expression(body=decorator), str(path), "eval")
            try:
                obj = eval(expr, module.__dict__)(obj)
            except Exception as exc:
                self.skipped.append(
                    f"{path}:{decorator.lineno}: decorator left out: {type(exc).__name__}: {exc}"
                )
        module.__dict__[stmt.name] = obj
        return True

    def _importer(self, module: types.ModuleType):
        real_import = builtins.__import__
        loader = self

        def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
            try:
                return real_import(name, globals, locals, fromlist, level)
            except Exception as exc:
                return loader._stand_in(name, fromlist, level, module, exc)

        return guarded_import

    def _stand_in(self, name, fromlist, level, importer, exc: Exception):
        absolute = (
            importlib.util.resolve_name("." * level + name, importer.__package__) if level else name
        )
        found = self._from_tree(absolute)
        if found is not None:
            if fromlist:
                for item in fromlist:
                    if not hasattr(found, item):
                        sub = self._from_tree(f"{absolute}.{item}")
                        stand_in = (
                            sub if sub is not None else self._replace(f"{absolute}.{item}", exc)
                        )
                        setattr(found, item, stand_in)
                return found
            if level == 0 and "." in name:
                return self._top(name, exc)
            return found
        if level == 0 and not fromlist and "." in name:
            return self._top(name, exc)
        stand_in = self._replace(absolute, exc)
        for item in fromlist or ():
            real = _triton_reexport(item, absolute)
            if real is not None:
                # `from vllm.triton_utils import tl, triton`: a wrapper that re-exports
                # triton gives triton itself, as the linter's index reads it too
                setattr(stand_in, item, real)
        return stand_in

    def _top(self, name: str, exc: Exception):
        """`import a.b.c`: what the name `a` is bound to; the package `a` itself where it
        imports (`import triton.backends.ascend.runtime` failing here must not turn the
        module's `triton` into a stand-in)."""
        top = name.split(".")[0]
        found = self._from_tree(top)
        if found is not None:
            return found
        if top != name:
            try:
                package = importlib.import_module(top)
            except Exception:
                package = None
            if package is not None:
                self._replace(name, exc)  # recorded: the submodule is what failed
                return package
        return self._replace(top, exc)

    def _replace(self, name: str, exc: Exception) -> Replaced:
        reason = f"{type(exc).__name__}: {exc}"
        self.replaced.setdefault(name, reason)
        return Replaced(name, reason)

    def _from_tree(self, dotted: str) -> types.ModuleType | None:
        """The module `dotted` loaded from its file in one of the source roots, or None
        when no root holds it (then it is not ours to load: a dependency)."""
        if dotted in self.modules:
            return self.modules[dotted]
        parts = dotted.split(".")
        for root in self.roots:
            base = root.joinpath(*parts)
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.is_file():
                    module = self.load_file(path, dotted)
                    parent, _, child = dotted.rpartition(".")
                    if parent and parent in self.modules:
                        setattr(self.modules[parent], child, module)
                    return module
        return None


def load_kernel(path: str, qualname: str, module_name: str | None = None) -> Loaded:
    """The kernel `qualname` of the file `path`: imported as it is when its module imports
    (`module_name`, or the name the file has in its package), else loaded from its source
    with the imports that fail stood in (see the module doc)."""
    file = Path(os.path.realpath(path))
    name = module_name or ".".join(package_root(file)[1])
    module = sys.modules.get(name)
    if module is None or os.path.realpath(getattr(module, "__file__", "") or "") != str(file):
        module = None
        try:
            spec = importlib.util.find_spec(name)
            if spec is not None and os.path.realpath(spec.origin or "") == str(file):
                module = importlib.import_module(name)
        except Exception:
            module = None
    if module is not None:
        kernel = _lookup(module, qualname)
        if kernel is not None:
            return Loaded(module, kernel)
    return load_from_source(str(file), qualname, name)


def load_from_source(path: str, qualname: str, module_name: str | None = None) -> Loaded:
    """The kernel `qualname`, from the file's source executed statement by statement with
    the imports that fail stood in (for a module that does not import here)."""
    file = Path(os.path.realpath(path))
    root, parts = package_root(file)
    loader = SourceLoader([root])  # only the kernel's own source tree is loaded from files
    module = loader.load_file(file, module_name or ".".join(parts))
    kernel = _lookup(module, qualname)
    if kernel is None:
        why = "; ".join(loader.skipped[-3:]) or "it is not defined at the module's top level"
        raise LoadError(f"{file.name} defines no {qualname} when loaded from its source: {why}")
    _refuse_stand_ins(kernel, loader)
    return Loaded(
        module,
        kernel,
        replaced=list(loader.replaced),
        skipped=list(loader.skipped),
        from_source=True,
    )


def _lookup(module: types.ModuleType, qualname: str):
    obj = module
    for part in qualname.split("."):
        if part == "<locals>":
            raise LoadError("the kernel is defined inside a function and cannot be loaded")
        obj = getattr(obj, part, None)
        if obj is None or isinstance(obj, Replaced):
            return None
    return obj


def _refuse_stand_ins(kernel, loader: SourceLoader) -> None:
    """A kernel (or a jit helper it reaches) that reads a stand-in global cannot lower."""
    seen: set[int] = set()
    todo = [kernel]
    while todo:
        obj = todo.pop()
        fn = _python_function(obj)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        for name in _global_names(fn.__code__):
            value = fn.__globals__.get(name)
            if isinstance(value, Replaced):
                module = value.__name__.split(".")[0]
                why = loader.replaced.get(value.__name__) or next(
                    (r for m, r in loader.replaced.items() if m.split(".")[0] == module), ""
                )
                raise LoadError(
                    f"{fn.__name__} reads `{name}`, which comes from `{value.__name__}`, an "
                    f"import that fails here ({why}); install it, or define `{name}` in the "
                    "kernel's file"
                )
            if hasattr(value, "fn") and _python_function(value) is not None:
                todo.append(value)  # a jit helper the kernel calls


def _python_function(obj):
    """The Python function behind a jit function (its `.fn`, through autotune and
    heuristics wrappers), or None."""
    for _ in range(8):
        if isinstance(obj, types.FunctionType):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            return None
    return None


def _global_names(code: types.CodeType) -> set[str]:
    """The globals a function's code reads (nested code included)."""
    names = {
        ins.argval
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str)
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names
