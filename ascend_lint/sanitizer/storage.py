"""The storage a kernel's tensor argument owns: what every lane of an access is checked
against.

A tensor argument is a view; the kernel receives its first element's address, but the
memory it may legitimately touch is the whole storage behind the view (a kernel handed
``x[1:]`` may read ``x[0]``).  ``Storage`` keeps both, with what a finding names: the
kernel parameter, the view's shape and dtype.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Storage:
    param: str  # the kernel parameter the tensor was bound to
    shape: tuple[int, ...]  # the view's shape, as the launcher passed it
    dtype: str  # torch's name: float32, int64, ...
    start: int  # address of the storage's first byte
    nbytes: int  # size of the whole storage
    view_offset: int  # bytes from the storage start to the view's first element

    @property
    def end(self) -> int:
        return self.start + self.nbytes

    def describe(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        return f"{self.param} ({self.dtype}[{dims}])"

    def as_dict(self) -> dict:
        return {
            "tensor": self.param,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "storage_bytes": self.nbytes,
            "view_offset_bytes": self.view_offset,
        }


def storage_of(value, param: str) -> Storage | None:
    """The storage behind a launch argument, or None for an object with an address but
    no storage this process can see (then its lanes are attributed by address)."""
    tensor = value
    # triton.reinterpret(x, dtype) wraps the tensor: the storage is the wrapped one's
    while not hasattr(tensor, "untyped_storage") and hasattr(tensor, "base"):
        tensor = tensor.base
    if not hasattr(tensor, "untyped_storage"):
        return None
    try:
        storage = tensor.untyped_storage()
        start = int(storage.data_ptr())
        nbytes = int(storage.nbytes())
        first = int(value.data_ptr())
    except Exception:  # a tensor subclass or device this process cannot read
        return None
    dtype = str(getattr(value, "dtype", tensor.dtype)).rsplit(".", 1)[-1]
    return Storage(
        param=param,
        shape=tuple(int(d) for d in getattr(tensor, "shape", ())),
        dtype=dtype,
        start=start,
        nbytes=nbytes,
        view_offset=first - start,
    )
