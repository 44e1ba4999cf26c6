"""The sanitizer's hold on triton's interpreter: what it wraps, and the findings log.

Installed on ``triton.runtime.interpreter`` once that module is loaded (this package
never imports triton first: ``TRITON_INTERPRET`` is read when kernels are decorated):
* ``GridExecutor.__call__``: a launch begins and ends; the storages of its tensor
  arguments are read by parameter name;
* ``_implicit_cvt``: the pointer handle made from each tensor argument is tagged with
  its storage (``provenance``);
* the builder's pointer ops pass tags on (``provenance.install``), and its integer and
  boolean ops mark how each mask was built (``masks.install``);
* the builder's memory ops (masked and unmasked loads and stores, block-pointer loads
  and stores, atomics) check every lane (``checks``; which masked-out lanes are issued:
  ``masks.issued_reason``) and run with the out-of-bounds active lanes removed.

The patches exist once per process whatever the number of ``Sanitizer`` objects: a test
that opens its own ``with Sanitizer()`` under ``pytest --ascend-sanitize`` checks each
access once and both logs receive the findings.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ascend_lint import reversible_patch
from ascend_lint.reversible_patch import wrap
from ascend_lint.sanitizer import masks, provenance
from ascend_lint.sanitizer.checks import Launch, Violation
from ascend_lint.sanitizer.findings import (
    DUPLICATE_STORE,
    DuplicateStores,
    Finding,
    Site,
    Unattributed,
)
from ascend_lint.sanitizer.storage import storage_of

_RESERVED_LAUNCH_KEYWORDS = ("grid", "warmup")


@dataclass
class Counts:
    launches: int = 0
    programs: int = 0
    loads: int = 0
    stores: int = 0
    atomics: int = 0
    lanes: int = 0
    kernels: set = field(default_factory=set)

    def as_dict(self) -> dict:
        return {
            "launches": self.launches,
            "kernels": len(self.kernels),
            "programs": self.programs,
            "loads": self.loads,
            "stores": self.stores,
            "atomics": self.atomics,
            "lanes": self.lanes,
        }


class Sanitizer:
    """Check every memory access of every kernel launched under the interpreter.

        sanitizer = Sanitizer()
        with sanitizer:            # install(); ...; uninstall()
            kernel[grid](x, y, n)
        for finding in sanitizer.findings.values():
            print("\\n".join(finding.lines()))

    ``current_test`` (set by the pytest plugin) is recorded with each finding;
    ``on_finding(finding, test)`` is called the first time a test hits a finding.
    ``duplicates`` counts the stores that repeated the bytes another program of the
    launch had stored (duplicate work: never a finding).
    """

    def __init__(self, on_finding: Callable[[Finding, str | None], None] | None = None):
        self.findings: dict[tuple, Finding] = {}
        self.unattributed: dict[tuple, Unattributed] = {}
        self.duplicates: dict[tuple, DuplicateStores] = {}
        self.counts = Counts()
        self.current_test: str | None = None
        self.on_finding = on_finding
        self.untracked: set[tuple[str, str]] = set()  # (kernel, tensor) too large for races
        self._installed = False

    @property
    def installed(self) -> bool:
        return self._installed

    def install(self) -> None:
        if not self._installed:
            _SHARED.subscribe(self)
            self._installed = True

    def uninstall(self) -> None:
        if self._installed:
            _SHARED.unsubscribe(self)
            self._installed = False

    def __enter__(self) -> Sanitizer:
        self.install()
        return self

    def __exit__(self, *exc) -> None:
        self.uninstall()

    def as_dicts(self) -> list[dict]:
        order = sorted(self.findings.values(), key=lambda f: (f.site.path, f.site.line, f.kind))
        return [f.as_dict() for f in order]

    # -- what the instrumentation hands over ---------------------------------------------
    def record(
        self,
        launch: Launch,
        site: Site,
        op: str,
        element_bytes: int,
        v: Violation,
        program,
        grid_xy,
    ) -> None:
        storage = launch.storages[v.storage_index]
        if v.kind == DUPLICATE_STORE:
            self._note_duplicate(site, storage.param, v.lanes)
            return
        probe = Finding(
            kind=v.kind,
            site=site,
            op=op,
            storage=storage,
            element_bytes=element_bytes,
            program=program,
            element_offset=v.element_offset,
            detail=v.detail,
        )
        found = self.findings.get(probe.key)
        if found is None:
            found = self.findings[probe.key] = probe
            if v.other_program is not None:
                gx, gy = grid_xy
                other = v.other_program
                found.other_program = (other % gx, (other // gx) % gy, other // (gx * gy))
                found.detail += f" (program {found.other_program})"
        found.add(v.lanes, program)
        test = self.current_test
        if test is not None and test not in found.tests:
            found.tests.append(test)
            if self.on_finding is not None:
                self.on_finding(found, test)
        elif test is None and self.on_finding is not None and found.occurrences == 1:
            self.on_finding(found, None)

    def _note_duplicate(self, site: Site, tensor: str, lanes: int) -> None:
        key = (site.kernel, site.path, site.line, tensor)
        note = self.duplicates.get(key)
        if note is None:
            note = self.duplicates[key] = DuplicateStores(site.kernel, site.path, site.line, tensor)
        note.lanes += lanes
        note.occurrences += 1
        if self.current_test and self.current_test not in note.tests:
            note.tests.append(self.current_test)

    def note_unattributed(self, site: Site, op: str, lanes: int) -> None:
        note = self.unattributed.get((site.kernel, site.path, site.line, op))
        if note is None:
            note = Unattributed(site.kernel, site.path, site.line, op)
            self.unattributed[note.key] = note
        note.lanes += lanes
        if self.current_test and self.current_test not in note.tests:
            note.tests.append(self.current_test)


class _Instrumentation:
    """The patches on the interpreter, shared by every installed ``Sanitizer``."""

    def __init__(self):
        self.subscribers: list[Sanitizer] = []
        self.launches: list[Launch] = []
        self._undo: list[Callable[[], None]] = []
        self._library_dirs: tuple[str, ...] = ()
        self._library_code: dict = {}

    def subscribe(self, sanitizer: Sanitizer) -> None:
        if not self._undo:
            self._install()
        self.subscribers.append(sanitizer)

    def unsubscribe(self, sanitizer: Sanitizer) -> None:
        if sanitizer in self.subscribers:
            self.subscribers.remove(sanitizer)
        if not self.subscribers:
            while self._undo:
                self._undo.pop()()

    def _install(self) -> None:
        import triton
        from triton.runtime import interpreter

        self._library_dirs = (
            os.path.dirname(os.path.realpath(triton.__file__)) + os.sep,
            os.path.dirname(os.path.realpath(__file__)) + os.sep,
            os.path.dirname(os.path.realpath(np.__file__)) + os.sep,
            # the layers of reversible patches stand between a kernel and its builder call
            os.path.realpath(reversible_patch.__file__),
        )
        builder = interpreter.interpreter_builder
        self._undo.append(wrap(interpreter.GridExecutor, "__call__", self._wrap_launch))
        self._undo.append(wrap(interpreter, "_implicit_cvt", self._wrap_argument))
        self._undo.append(provenance.install(builder))
        # beneath the memory-op wrappers: the masked load a block-pointer load performs
        # through them marks its result as loaded data too
        self._undo.append(masks.install(builder))
        self._install_memory_ops(builder)

    # -- launches -----------------------------------------------------------------------
    def _wrap_launch(self, inner):
        def call(executor, *args, **kwargs):
            if kwargs.get("warmup", False):
                return inner(executor, *args, **kwargs)
            launch = self._begin(executor, args, kwargs)
            self.launches.append(launch)
            try:
                return inner(executor, *args, **kwargs)
            finally:
                self.launches.pop()
                from triton.runtime.interpreter import interpreter_builder

                gx, gy, gz = getattr(interpreter_builder, "grid_dim", (0, 0, 0))
                for sanitizer in self.subscribers:
                    sanitizer.counts.programs += gx * gy * gz
                    for name in launch.untracked:
                        sanitizer.untracked.add((launch.kernel, name))

        return call

    def _begin(self, executor, args: tuple, kwargs: dict) -> Launch:
        fn = executor.fn
        code = getattr(fn, "__code__", None)
        storages = []
        by_identity: dict[int, list[int]] = {}
        try:
            params = inspect.signature(fn).parameters
            usable = {
                k: v
                for k, v in kwargs.items()
                if k in params and k not in _RESERVED_LAUNCH_KEYWORDS
            }
            bound = inspect.getcallargs(fn, *args, **usable)
        except Exception:  # the interpreter reports a bad call itself
            bound = {}
        constexprs = set(getattr(executor, "constexprs", ()))
        for name, value in bound.items():
            if name in constexprs or not hasattr(value, "data_ptr"):
                continue
            storage = storage_of(value, name)
            if storage is not None:
                by_identity.setdefault(id(value), []).append(len(storages))
                storages.append(storage)
        launch = Launch(
            kernel=getattr(fn, "__name__", "?"),
            kernel_file=os.path.realpath(code.co_filename) if code else "?",
            kernel_code=code,
            storages=storages,
        )
        launch.by_identity = by_identity  # consumed by _wrap_argument, one per argument
        for sanitizer in self.subscribers:
            sanitizer.counts.launches += 1
            sanitizer.counts.kernels.add((launch.kernel_file, launch.kernel))
        return launch

    def _wrap_argument(self, inner):
        def convert(arg):
            converted = inner(arg)
            if self.launches and hasattr(arg, "data_ptr"):
                launch = self.launches[-1]
                waiting = launch.by_identity.get(id(arg))
                if waiting:
                    index = waiting.pop(0)
                else:  # a copy made for the host: match it by address
                    index = next(
                        (
                            i
                            for i, s in enumerate(launch.storages)
                            if s.start + s.view_offset == int(arg.data_ptr())
                        ),
                        None,
                    )
                if index is not None:
                    provenance.set_tag(getattr(converted, "handle", None), index)
            return converted

        return convert

    # -- memory ops ---------------------------------------------------------------------
    def _install_memory_ops(self, builder) -> None:
        import triton.language as tl
        from triton._C.libtriton import ir
        from triton.runtime.interpreter import TensorHandle

        shared = self
        raw: dict[str, Callable] = {}

        def mask_handle(new_active, shape):
            return TensorHandle(new_active.reshape(shape), tl.int1)

        def make_masked_load(inner):
            raw["load"] = inner

            def load(ptrs, mask, other, *rest):
                new = shared._access(
                    "load", ptrs, mask.data, masks.issued_reason("load", mask, np.shape(ptrs.data))
                )
                if new is not None:
                    mask = mask_handle(new, np.shape(ptrs.data))
                return inner(ptrs, mask, other, *rest)

            return load

        def make_masked_store(inner):
            raw["store"] = inner

            def store(ptrs, value, mask, *rest):
                new = shared._access(
                    "store",
                    ptrs,
                    mask.data,
                    masks.issued_reason("store", mask, np.shape(ptrs.data)),
                    values=value.data,
                    track=True,
                )
                if new is not None:
                    mask = mask_handle(new, np.shape(ptrs.data))
                return inner(ptrs, value, mask, *rest)

            return store

        def block_lanes(block, boundary_check):
            ptrs, in_shape = block.materialize_pointers(boundary_check)
            # the interpreter checks only the upper bound; the device clips both ends
            for dim in boundary_check:
                extent = block.tensor_shape[dim]
                along = [1] * len(block.tensor_shape)
                along[dim] = extent
                off = (block.offsets[dim].data + np.arange(extent)).reshape(along)
                in_shape = np.logical_and(in_shape, off >= 0)
            provenance.set_tag(ptrs, provenance.tag_of(block.base))
            return ptrs, in_shape

        def make_block_load(inner):
            def load(block, boundary_check, padding_option, cache, eviction, volatile):
                ptrs, in_shape = block_lanes(block, boundary_check)
                new = shared._access("load", ptrs, in_shape, None)
                if new is not None:
                    in_shape = new.reshape(in_shape.shape)
                element = ptrs.get_element_ty()
                other = None
                if padding_option is not None:
                    fill = 0 if padding_option == ir.PADDING_OPTION.PAD_ZERO else float("nan")
                    from triton.runtime.interpreter import _get_np_dtype

                    other = TensorHandle(
                        np.full(np.shape(ptrs.data), fill, dtype=_get_np_dtype(element)), element
                    )
                return raw["load"](
                    ptrs, TensorHandle(in_shape, tl.int1), other, cache, eviction, volatile
                )

            return load

        def make_block_store(inner):
            def store(block, value, boundary_check, cache, eviction):
                ptrs, in_shape = block_lanes(block, boundary_check)
                new = shared._access("store", ptrs, in_shape, None, values=value.data, track=True)
                if new is not None:
                    in_shape = new.reshape(in_shape.shape)
                return raw["store"](ptrs, value, TensorHandle(in_shape, tl.int1), cache, eviction)

            return store

        def make_rmw(inner):
            def rmw(op, ptrs, value, mask, sem, scope):
                new = shared._access(
                    "atomic",
                    ptrs,
                    mask.data,
                    masks.issued_reason("atomic", mask, np.shape(ptrs.data)),
                )
                if new is not None:
                    mask = mask_handle(new, np.shape(ptrs.data))
                return inner(op, ptrs, value, mask, sem, scope)

            return rmw

        def make_cas(inner):
            def cas(ptrs, cmp, value, sem, scope):
                new = shared._access("atomic", ptrs, None, None)
                if new is not None:
                    # no mask to clear: point the out-of-bounds lanes at a scratch word
                    scratch = shared._scratch()
                    data = np.array(ptrs.data, dtype=np.uint64, copy=True)
                    data.reshape(-1)[~new] = scratch
                    ptrs = TensorHandle(data, ptrs.dtype)
                return inner(ptrs, cmp, value, sem, scope)

            return cas

        for name, make in (
            ("create_masked_load", make_masked_load),
            ("create_masked_store", make_masked_store),
            ("create_tensor_pointer_load", make_block_load),
            ("create_tensor_pointer_store", make_block_store),
            ("create_atomic_rmw", make_rmw),
            ("create_atomic_cas", make_cas),
        ):
            self._undo.append(wrap(builder, name, make))

    def _scratch(self) -> int:
        if not hasattr(self, "_scratch_words"):
            self._scratch_words = np.zeros(8, dtype=np.uint64)
        return int(self._scratch_words.ctypes.data)

    def _access(self, op, ptrs, mask, masked_issued, *, values=None, track=False):
        """Check one access; the mask it must run with instead, or None.  ``masked_issued``:
        why the device issues the masked-out lanes (None: it does not)."""
        if not self.launches or not self.subscribers:
            return None
        launch = self.launches[-1]
        shape = np.shape(ptrs.data)
        addr = np.ascontiguousarray(ptrs.data, dtype=np.uint64).reshape(-1)
        for sanitizer in self.subscribers:
            counts = sanitizer.counts
            if op == "load":
                counts.loads += 1
            elif op == "store":
                counts.stores += 1
            else:
                counts.atomics += 1
            counts.lanes += addr.size
        active = None
        if mask is not None:
            active = np.broadcast_to(np.asarray(mask, dtype=bool), shape).reshape(-1)
            if active.all():
                active = None
        element = ptrs.get_element_ty()
        element_bytes = max(1, getattr(element, "primitive_bitwidth", 8) // 8)
        flat_values = None
        if values is not None and track:
            flat_values = np.broadcast_to(values, shape).reshape(-1)
        from triton.runtime.interpreter import interpreter_builder as builder

        gx, gy, _ = builder.grid_dim
        x, y, z = builder.grid_idx
        program = x + gx * (y + gy * z)
        violations, new_active, unattributed = launch.check(
            addr,
            active,
            provenance.tag_of(ptrs),
            element_bytes,
            masked_issued=masked_issued,
            track_stores=track,
            program=program,
            values=flat_values,
        )
        if violations or unattributed:
            site = self._site(launch)
            for sanitizer in self.subscribers:
                for v in violations:
                    sanitizer.record(launch, site, op, element_bytes, v, (x, y, z), (gx, gy))
                if unattributed:
                    sanitizer.note_unattributed(site, op, unattributed)
        return new_active

    def _site(self, launch: Launch) -> Site:
        """The jit function line doing the access (the innermost frame of user code) and,
        when that is a helper, the kernel line that called it."""
        frame = sys._getframe(2)
        inner = None
        call_line = None
        while frame is not None:
            code = frame.f_code
            if code is launch.kernel_code:
                if inner is None:
                    inner = (code.co_filename, frame.f_lineno, code.co_name)
                else:
                    call_line = frame.f_lineno
                break
            if inner is None and not self._is_library(code):
                inner = (code.co_filename, frame.f_lineno, code.co_name)
            frame = frame.f_back
        if inner is None:
            inner = (launch.kernel_file, 0, launch.kernel)
        return Site(
            kernel=launch.kernel,
            kernel_file=launch.kernel_file,
            path=os.path.realpath(inner[0]),
            line=inner[1],
            function=inner[2],
            call_line=call_line,
        )

    def _is_library(self, code) -> bool:
        known = self._library_code.get(code)
        if known is None:
            known = self._library_code[code] = os.path.realpath(code.co_filename).startswith(
                self._library_dirs
            )
        return known


_SHARED = _Instrumentation()
