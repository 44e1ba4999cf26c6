"""Fills gaps of triton 3.2's interpreter that Ascend-native kernels run into.

Each fill follows the semantics of the op on the NPU (triton-ascend's builder and
docs), so that a kernel the interpreter ran gives the numbers the NPU would:

* bfloat16.  The interpreter keeps bf16 values as their 16-bit patterns and applies
  numpy's arithmetic to the patterns: ``a * b`` on two bf16 tiles is garbage, and it
  has no bf16 constants (``InterpreterBuilder.get_bf16`` is missing, so
  ``tl.full(..., tl.bfloat16)`` fails).  Arithmetic, math functions, ``tl.dot``,
  reductions and scans on bf16 are computed in fp32 and rounded to bf16 (round to
  nearest even, as torch does); casts between bf16 and anything but fp32 go through
  fp32.
* Reductions and scans over a negative axis.  ``tl.reduce``/``tl.associative_scan``
  with ``axis=-1`` (and ``tl.max``/``tl.min`` with it: triton-ascend's versions combine
  with a function of their own, which takes the interpreter's generic path) index the
  shape with the negative axis and return wrong shapes or values; the axis is
  normalised first, as the compiler does.
* ``tl.dot`` with M, N or K below 16.  The interpreter asserts the GPU minimum; the
  Ascend backend's minimum is 1 (``min_dot_size`` in triton-ascend's compiler).
* Ascend-only ops the builder lacks: ``extract_slice``, ``insert_slice`` (MLIR
  ``tensor.extract_slice``/``insert_slice``: offsets, sizes, strides per dimension; a
  slice reaching outside the tensor raises instead of reading or writing past it),
  ``get_element`` (``tensor.extract``), ``tl.gather`` (along an axis, indices checked),
  ``flip``, ``sort`` (last axis), ``tanh``, float ``%`` (``fmod``, the remainder triton's
  ``frem`` gives), ``~`` on booleans (int1's type and all-ones value), builtins imported by name
  (``from triton.language.math import rsqrt``), ``compile_hint``/``multibuffer`` (hints: nothing to do on CPU),
  ``tl.parallel`` (a range), ``sync_block_set``/``sync_block_wait`` (programs run one
  after another here, so a cube-to-vector hand-off within a program is already
  ordered).  ``sync_block_all`` over more than one program cannot be honoured when
  programs run one after another and raises ``NotOnCpuError``.
"""

from __future__ import annotations

import numpy as np

from ascend_lint.cpu_device.bf16 import bf16_bits_to_fp32, fp32_to_bf16_bits
from ascend_lint.cpu_device.errors import NotOnCpuError

_PATCHED = "_ascend_cpu_device_gap_fills"


# -- bfloat16 --------------------------------------------------------------------------
def _is_bf16(handle) -> bool:
    import triton.language as tl

    dtype = getattr(handle, "dtype", None)
    return dtype is not None and getattr(dtype, "scalar", dtype) == tl.bfloat16


def _as_fp32(handle):
    return bf16_bits_to_fp32(handle.data) if _is_bf16(handle) else handle.data


def _back_to_bf16(result: np.ndarray) -> np.ndarray:
    if np.issubdtype(result.dtype, np.floating):
        return fp32_to_bf16_bits(result)
    return result  # a comparison's booleans


def _patch_builder(interpreter) -> dict:
    import triton.language as tl

    builder_class = interpreter.InterpreterBuilder
    TensorHandle = interpreter.TensorHandle
    replaced: dict = {}

    def replace(name, function):
        replaced[f"InterpreterBuilder.{name}"] = getattr(builder_class, name, None)
        setattr(builder_class, name, function)

    original_binary = builder_class.binary_op
    original_unary = builder_class.unary_op
    original_cast = builder_class.cast_impl
    original_dot = builder_class.create_dot
    original_clamp = builder_class.create_clampf
    original_fma = builder_class.create_fma
    original_erf = builder_class.create_erf
    original_rsqrt = builder_class.create_rsqrt

    def binary_op(self, lhs, rhs, op):
        if not (_is_bf16(lhs) or _is_bf16(rhs)):
            return original_binary(self, lhs, rhs, op)
        result = np.asarray(op(_as_fp32(lhs), _as_fp32(rhs)))
        return TensorHandle(_back_to_bf16(result), lhs.dtype.scalar)

    def unary_op(self, arg, op):
        if not _is_bf16(arg):
            return original_unary(self, arg, op)
        return TensorHandle(_back_to_bf16(np.asarray(op(_as_fp32(arg)))), arg.dtype.scalar)

    def _via_fp32(original):
        def method(self, *handles, **kwargs):
            if not any(_is_bf16(h) for h in handles if hasattr(h, "data")):
                return original(self, *handles, **kwargs)
            widened = [TensorHandle(_as_fp32(h), tl.float32) if _is_bf16(h) else h for h in handles]
            result = original(self, *widened, **kwargs)
            return TensorHandle(fp32_to_bf16_bits(result.data), tl.bfloat16)

        return method

    def cast_impl(self, src, dst_type):
        src_bf16 = src.dtype.scalar == tl.bfloat16
        dst_bf16 = dst_type.scalar == tl.bfloat16
        if src_bf16 and dst_bf16:
            return TensorHandle(src.data.copy(), tl.bfloat16)
        if src_bf16:
            values = bf16_bits_to_fp32(src.data)
            np_dtype = interpreter._get_np_dtype(dst_type)
            return TensorHandle(values.astype(np_dtype), dst_type.scalar)
        if dst_bf16:
            return TensorHandle(fp32_to_bf16_bits(src.data.astype(np.float32)), tl.bfloat16)
        return original_cast(self, src, dst_type)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if _is_bf16(a) or _is_bf16(b):
            a = TensorHandle(_as_fp32(a), tl.float32)
            b = TensorHandle(_as_fp32(b), tl.float32)
        return original_dot(self, a, b, d, input_precision, max_num_imprecise_acc)

    def get_bf16(self, value):
        return TensorHandle(fp32_to_bf16_bits(np.array([value], dtype=np.float32)), tl.bfloat16)

    replace("binary_op", binary_op)
    replace("unary_op", unary_op)
    replace("cast_impl", cast_impl)
    replace("create_dot", create_dot)
    replace("create_clampf", _via_fp32(original_clamp))
    replace("create_fma", _via_fp32(original_fma))
    replace("create_erf", _via_fp32(original_erf))
    replace("create_rsqrt", _via_fp32(original_rsqrt))
    replace("get_bf16", get_bf16)
    for name in ("create_si_to_fp", "create_ui_to_fp", "create_fp_to_si", "create_fp_to_ui",
                 "create_fp_ext", "create_fp_trunc"):  # fmt: skip
        replace(name, lambda self, src, dst_type: self.cast_impl(src, dst_type))
    replace("create_int_cast", lambda self, src, dst_type, is_signed: self.cast_impl(src, dst_type))

    # -- ops the builder lacks ---------------------------------------------------------
    replace("create_tanh", lambda self, arg: self.unary_op(arg, np.tanh))
    replace("create_mod", lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmod))

    # `~mask` on booleans: the semantic xors with int1's all-ones value (true)
    original_all_ones = builder_class.get_all_ones_value
    replace("get_int1_ty", lambda self: tl.int1)

    def get_all_ones_value(self, type):
        if type == tl.int1:
            return TensorHandle(np.ones(1, dtype=np.bool_), tl.int1)
        return original_all_ones(self, type)

    replace("get_all_ones_value", get_all_ones_value)

    def create_extract_slice(self, ful, offsets, sizes, strides):
        data = ful.data
        index = _slice_index(data.shape, offsets, sizes, strides, "extract_slice")
        return TensorHandle(data[index].copy(), ful.dtype.scalar)

    def create_insert_slice(self, ful, sub, offsets, sizes, strides):
        data = ful.data.copy()
        index = _slice_index(data.shape, offsets, sizes, strides, "insert_slice")
        if tuple(sub.data.shape) != tuple(int(s) for s in sizes):
            raise ValueError(
                f"insert_slice: the inserted tile has shape {tuple(sub.data.shape)}, "
                f"the sizes say {tuple(sizes)}"
            )
        data[index] = sub.data
        return TensorHandle(data, ful.dtype.scalar)

    def create_extract_scalar(self, src, indices):
        position = tuple(_int(i) for i in indices)
        shape = src.data.shape
        if len(position) != len(shape) or any(not 0 <= p < n for p, n in zip(position, shape)):
            raise IndexError(f"get_element: index {position} is outside a tensor of shape {shape}")
        return TensorHandle(np.array([src.data[position]], dtype=src.data.dtype), src.dtype.scalar)

    def create_gather(self, src, index, axis):
        indices = index.data.astype(np.int64)
        extent = src.data.shape[axis]
        if indices.size and (indices.min() < 0 or indices.max() >= extent):
            raise IndexError(
                f"gather: an index along axis {axis} is outside 0..{extent - 1} "
                f"(min {indices.min()}, max {indices.max()})"
            )
        return TensorHandle(np.take_along_axis(src.data, indices, axis=axis), src.dtype.scalar)

    def create_flip(self, src, dim):
        return TensorHandle(np.flip(src.data, axis=dim).copy(), src.dtype.scalar)

    def create_sort(self, src, dim, descending):
        values = _as_fp32(src)
        ordered = np.sort(values, axis=dim, kind="stable")
        if descending:
            ordered = np.flip(ordered, axis=dim)
        if _is_bf16(src):
            ordered = fp32_to_bf16_bits(ordered)
        return TensorHandle(np.ascontiguousarray(ordered), src.dtype.scalar)

    def create_custom_op_for_inter_core_sync(self, op_name, *_args):
        programs = int(np.prod(self.grid_dim))
        if op_name == "sync_block_all" and programs > 1:
            raise NotOnCpuError(
                "sync_block_all",
                f"a barrier across all {programs} programs; the interpreter runs programs "
                "one after another",
            )
        return None

    def create_extern_elementwise(self, lib_name, lib_path, symbol, args, ret_type, is_pure):
        from ascend_lint.cpu_device.ascend_ops import MATH

        name = _hmf_name(symbol)
        if name not in MATH:
            raise NotOnCpuError(
                f"the extern function {symbol}", "not in the CPU stand-in's math table"
            )
        compute, _result = MATH[name]
        with np.errstate(all="ignore"):
            out = np.asarray(compute(*[_as_fp32(a) for a in args]))
        scalar = getattr(ret_type, "scalar", ret_type)
        if scalar == tl.bfloat16:
            data = fp32_to_bf16_bits(out)
        else:
            data = out.astype(interpreter._get_np_dtype(scalar))
        return TensorHandle(data, scalar)

    replace("create_extern_elementwise", create_extern_elementwise)
    replace("create_extract_slice", create_extract_slice)
    replace("create_insert_slice", create_insert_slice)
    replace("create_extract_scalar", create_extract_scalar)
    replace("create_gather", create_gather)
    replace("create_flip", create_flip)
    replace("create_sort", create_sort)
    replace("create_custom_op_for_inter_core_sync", create_custom_op_for_inter_core_sync)
    # compile hints carry no meaning on CPU
    replace("create_annotation", lambda self, *args: None)
    for name in ("get_unit_attr", "get_bool_attr", "get_int32_attr", "get_str_attr",
                 "get_i64_array_attr"):  # fmt: skip
        replace(name, lambda self, *args: args[0] if args else None)
    return replaced


_HMF_ALIASES = {"recip": "reciprocal", "powi": "pow"}


def _hmf_name(symbol: str) -> str:
    """``__hmf_tanhf`` / ``__hmf_tanhDh`` (triton-ascend's math library symbols, fp32 and
    fp16 variants) -> ``tanh``."""
    name = symbol.removeprefix("__hmf_")
    for suffix in ("Dh", "f"):
        if name.endswith(suffix) and name[: -len(suffix)] in _known_stems():
            name = name[: -len(suffix)]
            break
    return _HMF_ALIASES.get(name, name)


def _known_stems():
    from ascend_lint.cpu_device.ascend_ops import MATH

    return set(MATH) | set(_HMF_ALIASES)


def _int(value) -> int:
    data = getattr(getattr(value, "handle", value), "data", value)
    data = getattr(data, "value", data)  # constexpr
    return int(np.asarray(data).reshape(-1)[0]) if isinstance(data, np.ndarray) else int(data)


def _slice_index(shape, offsets, sizes, strides, op: str) -> tuple:
    if not len(offsets) == len(sizes) == len(strides) == len(shape):
        raise ValueError(
            f"{op}: a tensor of rank {len(shape)} needs one offset, size and stride per "
            f"dimension (got {len(offsets)}, {len(sizes)}, {len(strides)})"
        )
    index = []
    for dim, (offset, size, stride) in enumerate(zip(offsets, sizes, strides)):
        offset, size, stride = _int(offset), _int(size), _int(stride)
        last = offset + (size - 1) * stride
        if size < 1 or stride < 0 or offset < 0 or last >= shape[dim]:
            raise IndexError(
                f"{op}: dimension {dim} of a tensor of shape {tuple(shape)}: offset {offset}, "
                f"size {size}, stride {stride} reaches outside it"
            )
        index.append(slice(offset, last + 1, stride) if stride else slice(offset, offset + 1))
    return tuple(index)


def _patch_reductions(interpreter) -> dict:
    import triton.language as tl

    interface = interpreter.ReduceScanOpIneterface
    original_apply = interface.apply
    TensorHandle = interpreter.TensorHandle

    def apply(self, input):
        inputs = input if isinstance(input, tuple) else (input,)
        if self.axis is not None and inputs:
            rank = len(inputs[0].shape)
            if not -rank <= self.axis < rank:
                raise ValueError(f"axis {self.axis} out of bounds for rank {rank}")
            self.axis = self.axis % rank
        bf16 = [i.dtype == tl.bfloat16 for i in inputs]
        if not any(bf16):
            return original_apply(self, input)
        widened = tuple(
            tl.core.tensor(
                TensorHandle(bf16_bits_to_fp32(i.handle.data), tl.float32),
                tl.block_type(tl.float32, i.shape) if i.shape else tl.float32,
            )
            if is_bf16
            else i
            for i, is_bf16 in zip(inputs, bf16)
        )
        result = original_apply(self, widened if isinstance(input, tuple) else widened[0])
        results = result if isinstance(result, tuple) else (result,)
        narrowed = tuple(
            _narrow(r, tl, TensorHandle) if k < len(bf16) and bf16[k] else r
            for k, r in enumerate(results)
        )
        return narrowed if isinstance(result, tuple) else narrowed[0]

    interface.apply = apply
    return {"ReduceScanOpIneterface.apply": original_apply}


def _narrow(result, tl, TensorHandle):
    if result.dtype != tl.float32:
        return result  # an index (argmax) or a flag
    data = fp32_to_bf16_bits(result.handle.data)
    kind = tl.block_type(tl.bfloat16, result.shape) if result.shape else tl.bfloat16
    return tl.core.tensor(TensorHandle(data, tl.bfloat16), kind)


def _patch_builtins_imported_by_name(interpreter) -> dict:
    """``from triton.language.math import rsqrt`` and a kernel calling ``rsqrt(x)``: the
    interpreter hands its builder to the builtins reached through ``tl`` (it rewrites
    the attributes of triton.language and its math module), not to one bound to a name
    of the kernel's module, whose call then fails ("Did you forget to add @triton.jit
    ?").  The compiler resolves such a name like ``tl.math.rsqrt``; here the name is
    bound to the same builtin called with the builder."""
    import triton.language as tl

    original = interpreter._patch_lang

    def _patch_lang(fn):
        original(fn)
        names = fn.__globals__
        for name, value in list(names.items()):
            if tl.core.is_builtin(value):
                names[name] = _called_with_builder(value, interpreter.interpreter_builder)

    interpreter._patch_lang = _patch_lang
    return {"triton.runtime.interpreter._patch_lang": original}


def _called_with_builder(builtin, builder):
    def call(*args, **kwargs):
        kwargs.pop("_builder", None)
        return builtin(*args, _builder=builder, **kwargs)

    call.__name__ = getattr(builtin, "__name__", "builtin")
    call.__wrapped__ = builtin
    return call


def install() -> dict:
    """Apply every fill once; returns what each replaced."""
    from triton.runtime import interpreter

    if getattr(interpreter, _PATCHED, False):
        return {}
    replaced = _patch_builder(interpreter)
    replaced.update(_patch_reductions(interpreter))
    replaced.update(_patch_builtins_imported_by_name(interpreter))
    builder = interpreter.interpreter_builder
    replaced["interpreter_builder.codegen_fns['min_dot_size']"] = builder.codegen_fns.get(
        "min_dot_size"
    )
    builder.codegen_fns["min_dot_size"] = lambda lhs_type, rhs_type: (1, 1, 1)
    from ascend_lint.cpu_device import ascend_ops

    replaced.update(ascend_ops.install_on_language())
    setattr(interpreter, _PATCHED, True)
    return replaced
