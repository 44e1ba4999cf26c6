"""Reversible patches of attributes this package does not own (triton's interpreter).

Two tools wrap the same interpreter functions: the compile gate records each launch and
the sanitizer checks it.  Either may be undone first, so an undo must remove only its
own layer: it restores the attribute when its wrapper is still the outermost one, and
otherwise turns its wrapper into a pass-through that the outer layer keeps calling.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def wrap(owner: Any, name: str, make_wrapper: Callable[[Callable], Callable]) -> Callable[[], None]:
    """Replace ``owner.name`` by ``make_wrapper(inner)``; return the undo.

    ``make_wrapper`` receives the attribute as it was (a function, a bound method or an
    earlier layer) and returns what replaces it.  While the patch is undone but still
    referenced by a later layer, calls go straight to ``inner``.
    """
    inner = getattr(owner, name)
    # an attribute the owner only inherits (a class's method seen on an instance) is
    # deleted again on undo rather than copied onto the instance
    owned = name in getattr(owner, "__dict__", {})
    state = {"active": True}
    wrapped = make_wrapper(inner)

    def layer(*args, **kwargs):
        if state["active"]:
            return wrapped(*args, **kwargs)
        return inner(*args, **kwargs)

    layer.__wrapped__ = inner  # type: ignore[attr-defined]
    setattr(owner, name, layer)

    def undo() -> None:
        if not state["active"]:
            return
        state["active"] = False
        if getattr(owner, "__dict__", {}).get(name) is layer:
            if owned:
                setattr(owner, name, inner)
            else:
                delattr(owner, name)

    return undo
