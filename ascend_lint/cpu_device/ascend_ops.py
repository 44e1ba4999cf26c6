"""Ascend-only language ops, each runnable under triton's interpreter and in a compile.

An op defined here is a triton builtin with two paths.  Called by triton's code
generator (a compile: the compile gate's worker, an NPU) it hands the call to
triton-ascend 3.2's own implementation (``tl.extract_slice``, the ``ascend``
libdevice ...).  Called from a kernel running under the interpreter, it computes the
result with numpy on the interpreter's tiles.  ``cann_modules.py`` builds the
``triton.language.extra.cann`` modules from these ops, and ``install_on_language``
puts the interpreter-capable versions where triton 3.2 exposes the ops itself
(``tl.extract_slice`` ..., whose own interpreter path fails on integer offsets).
"""

from __future__ import annotations

import os

import numpy as np

from ascend_lint.cpu_device.errors import NotOnCpuError

TRITON_BUILTIN = "__triton_builtin__"


def _interpreting(builder, name: str) -> bool:
    """True for a call the interpreter makes; False for the code generator's."""
    if builder is None:
        if os.environ.get("TRITON_INTERPRET", "0") != "1":
            raise ValueError(
                f"{name} must be called inside a @triton.jit function (no builder was given)"
            )
        return True
    from triton.runtime.interpreter import InterpreterBuilder

    return isinstance(builder, InterpreterBuilder)


def dual(name: str, interpret, compile_with=None):
    """A builtin: ``interpret(*args, **kwargs)`` under the interpreter, else
    ``compile_with(*args, _builder=..., **kwargs)``."""

    def op(*args, _builder=None, _generator=None, **kwargs):
        if _interpreting(_builder, name):
            return interpret(*args, **kwargs)
        if compile_with is None:
            raise NotOnCpuError(name, "triton-ascend 3.2 has no implementation to compile it with")
        return compile_with(*args, _builder=_builder, **kwargs)

    op.__name__ = name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = getattr(interpret, "__doc__", None)
    setattr(op, TRITON_BUILTIN, True)
    return op


def unavailable(name: str, why: str, compile_with=None):
    """A builtin that raises ``NotOnCpuError`` naming ``name`` under the interpreter
    (and in a compile too, unless ``compile_with`` compiles it)."""

    def interpret(*_args, **_kwargs):
        raise NotOnCpuError(name, why)

    return dual(name, interpret, compile_with)


# -- interpreter helpers ---------------------------------------------------------------
def _value(x):
    """Unwrap constexpr and interpreter scalars to Python values."""
    x = getattr(x, "value", x)
    handle = getattr(x, "handle", None)
    if handle is not None and hasattr(handle, "data") and not getattr(x, "shape", None):
        return handle.data.reshape(-1)[0].item()
    return x


def _values(items) -> list:
    items = _value(items)
    return [_value(i) for i in items]


def _tensor(data, dtype, shape):
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    kind = tl.block_type(dtype, list(shape)) if shape else dtype
    return tl.core.tensor(TensorHandle(data, dtype), kind)


def _builder():
    from triton.runtime.interpreter import interpreter_builder

    return interpreter_builder


# -- the ops, interpreter side ---------------------------------------------------------
def extract_slice_interp(ful, offsets, sizes, strides):
    """``tensor.extract_slice``: element i of the result along dimension d is the
    source's element ``offsets[d] + i * strides[d]``."""
    sizes = [int(s) for s in _values(sizes)]
    handle = _builder().create_extract_slice(
        ful.handle, _values(offsets), sizes, [int(s) for s in _values(strides)]
    )
    return _tensor(handle.data, ful.dtype, sizes)


def insert_slice_interp(ful, sub, offsets, sizes, strides):
    """``tensor.insert_slice``: a copy of ``ful`` with ``sub`` written at the positions
    ``extract_slice`` with the same offsets, sizes and strides would read."""
    if ful.dtype != sub.dtype:
        raise TypeError(f"insert_slice: inserting {sub.dtype} into {ful.dtype}")
    handle = _builder().create_insert_slice(
        ful.handle,
        sub.handle,
        _values(offsets),
        [int(s) for s in _values(sizes)],
        [int(s) for s in _values(strides)],
    )
    return _tensor(handle.data, ful.dtype, ful.shape)


def get_element_interp(src, indice):
    """``tensor.extract``: one element, as a scalar of the tensor's type."""
    handle = _builder().create_extract_scalar(src.handle, _values(indice))
    return _tensor(handle.data, src.dtype, [])


def flip_interp(x, dim=-1):
    dim = _value(dim)
    rank = len(x.shape)
    dim = rank - 1 if dim is None else int(dim)
    if not -rank <= dim < rank:
        raise ValueError(f"flip: dim {dim} is outside a tensor of rank {rank}")
    handle = _builder().create_flip(x.handle, dim % rank)
    return _tensor(handle.data, x.dtype, x.shape)


def sort_interp(x, dim=-1, descending=False):
    rank = len(x.shape)
    dim = int(_value(dim))
    if dim % rank != rank - 1:
        raise ValueError(f"sort: only the last dimension can be sorted (got dim={dim})")
    handle = _builder().create_sort(x.handle, rank - 1, bool(_value(descending)))
    return _tensor(handle.data, x.dtype, x.shape)


def nothing_interp(*_args, **_kwargs):
    """A compiler hint: nothing to do when the interpreter runs the kernel."""
    return None


def sync_block_all_interp(mode, event_id):
    _builder().create_custom_op_for_inter_core_sync("sync_block_all", _value(mode))


def parallel_interp(arg1, arg2=None, step=None, **_options):
    """``tl.parallel`` loops over its range; its iterations are independent."""
    start, stop = (0, _value(arg1)) if arg2 is None else (_value(arg1), _value(arg2))
    return range(int(start), int(stop), int(_value(step) or 1))


# -- elementwise math (the cann libdevice) ---------------------------------------------
def _floats(x):
    """numpy values of an argument in fp32 (bf16 from its bit pattern), or a scalar."""
    import triton.language as tl

    from ascend_lint.cpu_device.bf16 import bf16_bits_to_fp32

    if isinstance(x, tl.core.tensor):
        data = x.handle.data
        if x.dtype == tl.bfloat16:
            return bf16_bits_to_fp32(data)
        return data.astype(np.float32) if x.dtype.is_floating() and x.dtype != tl.float64 else data
    return np.asarray(_value(x))


def _elementwise(name: str, compute, result: str = "same"):
    """``result``: "same" (the first tensor argument's type), "int1", "int32"."""

    def interpret(*args):
        import triton.language as tl

        from ascend_lint.cpu_device.bf16 import fp32_to_bf16_bits

        tensors = [a for a in args if isinstance(a, tl.core.tensor)]
        if not tensors:
            raise TypeError(f"{name} needs a tensor argument")
        first = tensors[0]
        with np.errstate(all="ignore"):
            out = np.asarray(compute(*[_floats(a) for a in args]))
        shape = np.broadcast_shapes(*[t.handle.data.shape for t in tensors])
        block = any(t.shape for t in tensors)
        if result == "int1":
            dtype, data = tl.int1, out.astype(bool)
        elif result == "int32":
            dtype, data = tl.int32, out.astype(np.int32)
        elif first.dtype == tl.bfloat16:
            dtype, data = tl.bfloat16, fp32_to_bf16_bits(out)
        else:
            from triton.runtime.interpreter import _get_np_dtype

            dtype, data = first.dtype, out.astype(_get_np_dtype(first.dtype))
        data = np.broadcast_to(data, shape).copy()
        return _tensor(data, dtype, list(shape) if block else [])

    interpret.__doc__ = f"``{name}`` computed with numpy in fp32."
    return interpret


def _ldexp(x, e):
    return np.ldexp(x, np.asarray(e).astype(np.int32))


def _ilogb(x):
    return np.floor(np.log2(np.abs(x)))


def _float_as_int(x):
    return np.asarray(x, dtype=np.float32).view(np.int32)


_VECTOR_GAMMA = np.vectorize(__import__("math").gamma, otypes=[np.float64])
_VECTOR_LGAMMA = np.vectorize(__import__("math").lgamma, otypes=[np.float64])


def _erfinv(y):
    from math import erf

    # Newton's method on erf(x) = y from a rational first guess: float32-accurate
    y = np.asarray(y, dtype=np.float64)
    a = 0.147
    ln = np.log1p(-y * y)
    first = 2 / (np.pi * a) + ln / 2
    x = np.sign(y) * np.sqrt(np.sqrt(first * first - ln / a) - first)
    verf = np.vectorize(erf, otypes=[np.float64])
    for _ in range(3):
        x = x - (verf(x) - y) / (2 / np.sqrt(np.pi) * np.exp(-x * x))
    return np.where(np.abs(y) == 1, np.sign(y) * np.inf, x)


MATH: dict = {
    "reciprocal": (lambda x: 1.0 / x, "same"),
    "log1p": (np.log1p, "same"),
    "expm1": (np.expm1, "same"),
    "relu": (lambda x: np.maximum(x, 0), "same"),
    "isinf": (np.isinf, "int1"),
    "isnan": (np.isnan, "int1"),
    "signbit": (np.signbit, "int1"),
    "isfinited": (np.isfinite, "int1"),
    "finitef": (np.isfinite, "int1"),
    "tan": (np.tan, "same"),
    "atan": (np.arctan, "same"),
    "tanh": (np.tanh, "same"),
    "asin": (np.arcsin, "same"),
    "acos": (np.arccos, "same"),
    "sinh": (np.sinh, "same"),
    "cosh": (np.cosh, "same"),
    "asinh": (np.arcsinh, "same"),
    "acosh": (np.arccosh, "same"),
    "atanh": (np.arctanh, "same"),
    "atan2": (np.arctan2, "same"),
    "hypot": (np.hypot, "same"),
    "pow": (np.power, "same"),
    "fmod": (np.fmod, "same"),
    "ldexp": (_ldexp, "same"),
    "ilogb": (_ilogb, "int32"),
    "trunc": (np.trunc, "same"),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "same"),
    "nearbyint": (np.rint, "same"),
    "rint": (np.rint, "same"),
    "log10": (np.log10, "same"),
    "copysign": (np.copysign, "same"),
    "nextafter": (lambda x, y: np.nextafter(np.float32(x), np.float32(y)), "same"),
    "cyl_bessel_i0": (np.i0, "same"),
    "erfinv": (_erfinv, "same"),
    "gamma": (_VECTOR_GAMMA, "same"),
    "lgamma": (_VECTOR_LGAMMA, "same"),
    "div_rz": (lambda x, y: np.trunc(x / y), "same"),
    "fast_dividef": (lambda x, y: x / y, "same"),
    "fast_expf": (np.exp, "same"),
    "float_as_int": (_float_as_int, "int32"),
    "exp": (np.exp, "same"),
    "exp2": (np.exp2, "same"),
    "log": (np.log, "same"),
    "log2": (np.log2, "same"),
    "sqrt": (np.sqrt, "same"),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), "same"),
    "sin": (np.sin, "same"),
    "cos": (np.cos, "same"),
    "floor": (np.floor, "same"),
    "ceil": (np.ceil, "same"),
    "abs": (np.abs, "same"),
    "fabs": (np.abs, "same"),
    "erf": (np.vectorize(__import__("math").erf, otypes=[np.float64]), "same"),
    "fmin": (np.fmin, "same"),
    "fmax": (np.fmax, "same"),
    "div_rn": (lambda x, y: x / y, "same"),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), "same"),
}


def math_op(name: str, compile_module=None):
    """The dual-path op ``name`` of ``MATH``; compiled through ``compile_module``'s own
    function of that name where it has one."""
    compute, result = MATH[name]
    compile_with = getattr(compile_module, name, None) if compile_module is not None else None
    return dual(name, _elementwise(name, compute, result), compile_with)


def install_on_language() -> dict:
    """Interpreter-capable Ascend ops where triton 3.2 exposes them itself, and
    ``triton.language.extra.libdevice`` / ``.ascend.libdevice`` functions that run
    under the interpreter (their own bodies are empty stubs or extern calls the
    interpreter cannot make).  The test process only: the worker compiles."""
    import triton.language as tl
    import triton.language.extra.libdevice as generic_libdevice
    from triton.language.extra.ascend import libdevice as ascend_libdevice

    replaced: dict = {}

    def put(owner, attr: str, value, label: str):
        replaced[label] = getattr(owner, attr, None)
        setattr(owner, attr, value)

    ops = {
        "extract_slice": extract_slice_interp,
        "insert_slice": insert_slice_interp,
        "get_element": get_element_interp,
        "compile_hint": nothing_interp,
        "multibuffer": nothing_interp,
    }
    for attr, interpret in ops.items():
        original = getattr(tl, attr, None)
        op = dual(f"tl.{attr}", interpret, original)
        put(tl, attr, op, f"triton.language.{attr}")
        if attr in ("extract_slice", "insert_slice", "get_element"):
            put(tl.tensor, attr, op, f"triton.language.tensor.{attr}")
    put(tl, "parallel", parallel_interp, "triton.language.parallel")
    for module, label in (
        (generic_libdevice, "triton.language.extra.libdevice"),
        (ascend_libdevice, "triton.language.extra.ascend.libdevice"),
    ):
        for name in MATH:
            if hasattr(module, name):
                put(module, name, math_op(name, module), f"{label}.{name}")
    # the rest of the generic module are empty stubs: under the interpreter they would
    # return None; say instead which function has no CPU implementation
    for name, value in list(vars(generic_libdevice).items()):
        if callable(value) and not name.startswith("_") and name not in MATH:
            why = "no CPU implementation of this libdevice function"
            label = f"triton.language.extra.libdevice.{name}"
            put(generic_libdevice, name, unavailable(f"libdevice.{name}", why), label)
    return replaced
