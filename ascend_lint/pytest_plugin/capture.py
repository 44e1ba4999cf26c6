"""Record kernel launches made under ``TRITON_INTERPRET=1`` (runs in the test process).

Every ``kernel[grid](...)``, ``kernel.run(..., grid=...)`` and heuristics launch ends in
``triton.runtime.interpreter.GridExecutor.__call__``; wrapping it sees each launch with
its final arguments.  A launch is encoded for the compile worker as the binder sees it:
tensors as (dtype, address), scalars as they are, ``tl`` dtypes by name.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from ascend_lint import reversible_patch

_LAUNCH_KEYWORDS_DROPPED = ("grid", "warmup")


class NotReplayable(Exception):
    """A launch the worker cannot rebuild (an argument of a kind it cannot encode)."""


@dataclass
class Launch:
    module: str
    qualname: str
    file: str
    def_line: int
    last_line: int
    args: list  # as the test passed them; encoded only for a new specialisation
    kwargs: dict
    grid: tuple[int, int, int]
    launch_site: tuple[str, int] | None
    key: tuple  # what makes a launch a new specialisation, as seen from here
    problems: list[str] = field(default_factory=list)
    rank: int = 3  # axes of the grid as the launcher wrote it (`grid` is padded to 3)

    def request(self) -> dict:
        """The worker's request; what cannot be encoded is added to ``problems``."""
        return {
            "module": self.module,
            "qualname": self.qualname,
            "file": self.file,
            "sys_path": [p for p in sys.path if isinstance(p, str)],
            "args": [_encode(a, f"argument {i}", self.problems) for i, a in enumerate(self.args)],
            "kwargs": {k: _encode(v, k, self.problems) for k, v in self.kwargs.items()},
            "grid": list(self.grid),
        }


def install(on_launch: Callable[[Launch], None]) -> Callable[[], None]:
    """Wrap GridExecutor.__call__; returns the function that undoes it (this layer only:
    the sanitizer may wrap the same call)."""
    from triton.runtime import interpreter

    def make(original):
        def __call__(self, *args, **kwargs):
            if not kwargs.get("warmup", False):
                launch = None
                try:
                    launch = describe(self, args, kwargs)
                except Exception as exc:  # never let recording break the user's test
                    launch = _undescribed(self, exc)
                if launch is not None:
                    on_launch(launch)
            return original(self, *args, **kwargs)

        return __call__

    return reversible_patch.wrap(interpreter.GridExecutor, "__call__", make)


def original_function(executor):
    """The user's Python function behind the interpreter's rewritten copy."""
    from triton.runtime.interpreter import InterpretedFunction

    rewritten = executor.fn
    for fn, copy in InterpretedFunction.rewritten_fn.items():
        if copy is rewritten:
            return fn
    return rewritten


def describe(executor, args: tuple, kwargs: dict) -> Launch:
    fn = original_function(executor)
    kwargs = {k: v for k, v in kwargs.items() if k not in _LAUNCH_KEYWORDS_DROPPED}
    code = fn.__code__
    def_line, last_line, params = _function_facts(fn)
    # launch options (num_warps, ...) are not parameters; they still reach the compiler
    bound = inspect.getcallargs(fn, *args, **{k: v for k, v in kwargs.items() if k in params})
    grid = executor.grid(bound) if callable(executor.grid) else executor.grid
    rank = len(grid)
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    constexprs = set(executor.constexprs)
    key_parts = tuple(
        (name, _key(bound[name], name in constexprs))
        for name in executor.arg_names
        if name in bound
    )
    options = tuple(sorted((k, repr(v)) for k, v in kwargs.items() if k not in bound))
    over_limit = grid[0] * grid[1] * grid[2] > 65535
    path = _realpath(code.co_filename)
    return Launch(
        module=fn.__module__ or "",
        qualname=fn.__qualname__,
        file=path,
        def_line=def_line,
        last_line=last_line,
        args=list(args),
        kwargs=kwargs,
        grid=grid,
        launch_site=_launch_site(),
        key=(path, fn.__qualname__, key_parts, options, over_limit),
        rank=rank,
    )


_FACTS: dict = {}


def _function_facts(fn) -> tuple[int, int, frozenset[str]]:
    """(def line, last line, parameter names), read once per kernel: launches repeat."""
    facts = _FACTS.get(fn)
    if facts is None:
        try:
            lines, first = inspect.getsourcelines(fn)
            def_line = first + next(
                (i for i, text in enumerate(lines) if text.lstrip().startswith("def ")), 0
            )
            last_line = first + len(lines) - 1
        except (OSError, TypeError):
            def_line = last_line = fn.__code__.co_firstlineno
        facts = (def_line, last_line, frozenset(inspect.signature(fn).parameters))
        _FACTS[fn] = facts
    return facts


def _undescribed(executor, exc: Exception) -> Launch | None:
    try:
        fn = original_function(executor)
        code = fn.__code__
    except Exception:
        return None
    return Launch(
        module=getattr(fn, "__module__", "") or "",
        qualname=getattr(fn, "__qualname__", "?"),
        file=_realpath(code.co_filename),
        def_line=code.co_firstlineno,
        last_line=code.co_firstlineno,
        args=[],
        kwargs={},
        grid=(1, 1, 1),
        launch_site=_launch_site(),
        key=("undescribed", code.co_filename, fn.__qualname__, type(exc).__name__),
        problems=[f"the launch could not be read: {type(exc).__name__}: {exc}"],
    )


def _encode(value, name: str, problems: list[str]):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return {"tensor": str(value.dtype).split(".")[-1], "address": int(value.data_ptr())}
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):
        return _encode(value.value, name, problems)
    if type(value).__module__.startswith("triton.language") and hasattr(value, "name"):
        return {"tl_dtype": _tl_dtype_attr(value)}
    if isinstance(value, (tuple, list)):
        return {"tuple": [_encode(v, name, problems) for v in value]}
    problems.append(f"{name} is a {type(value).__name__}, which the compile worker cannot rebuild")
    return None


def _tl_dtype_attr(dtype) -> str:
    import triton.language as tl

    for attr in dir(tl):
        if getattr(tl, attr, None) is dtype or (
            isinstance(getattr(tl, attr, None), type(dtype)) and getattr(tl, attr) == dtype
        ):
            return attr
    return str(dtype)


def _key(value, is_constexpr: bool):
    if is_constexpr:
        return ("c", repr(value))
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("i1", value)
    if isinstance(value, int):
        width = "i32" if -(2**31) <= value < 2**31 else "i64"
        return (width, value == 1, value % 16 == 0)
    if isinstance(value, float):
        return ("fp32",)
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return (str(value.dtype), value.data_ptr() % 16 == 0)
    return (type(value).__name__, repr(value)[:80])


_SKIP_DIRS: tuple[str, ...] = ()


@functools.lru_cache(maxsize=4096)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def _launch_site() -> tuple[str, int] | None:
    """The first frame outside triton and this plugin: the line that launched."""
    global _SKIP_DIRS
    if not _SKIP_DIRS:
        import triton

        from ascend_lint import sanitizer

        _SKIP_DIRS = (
            os.path.dirname(os.path.realpath(triton.__file__)) + os.sep,
            os.path.dirname(os.path.realpath(__file__)) + os.sep,
            # the layers wrapped around the same launch call
            os.path.dirname(os.path.realpath(sanitizer.__file__)) + os.sep,
            os.path.realpath(reversible_patch.__file__),
        )
    frame = sys._getframe(2)
    while frame is not None:
        path = _realpath(frame.f_code.co_filename)
        if not path.startswith(_SKIP_DIRS):
            return path, frame.f_lineno
        frame = frame.f_back
    return None
