"""What installing the CPU stand-in did in this process: one record, read by the
package (``installed``) and by the driver triton makes without arguments."""

from __future__ import annotations

from dataclasses import dataclass, field

from ascend_lint.cpu_device.targets import Target


@dataclass
class InstallRecord:
    """What ``install`` did: the target, and each thing it replaced with what was there
    before (None where nothing was)."""

    target: Target
    compile_worker: bool
    replaced: dict = field(default_factory=dict)

    def describe(self) -> str:
        groups = sorted({name.rsplit(".", 1)[0] for name in self.replaced})
        return (
            f"Ascend {self.target.name} ({self.target.arch}) on CPU; replaced "
            f"{len(self.replaced)} objects in: {', '.join(groups) or 'nothing'}"
        )


_record: InstallRecord | None = None


def installed() -> InstallRecord | None:
    """The record of the install in this process, or None."""
    return _record


def remember(record: InstallRecord) -> None:
    global _record
    _record = record
