"""The Ascend parts the CPU stand-in can pretend to be: core counts and arch strings.

What a suite reads from the driver (``num_aicore``, ``num_vectorcore``) sizes its
grids, so the stand-in reports the numbers of a real part.  Sources:

* A2 (Atlas A2, Ascend 910B): CANN's SoC description ``platform_config/Ascend910B4.ini``
  says ``ai_core_cnt=20``, ``cube_core_cnt=20``, ``vector_core_cnt=40`` (the 910B1/B2
  descriptions say 24 and 48; ``Ascend910B3.ini`` says 20 and 40).  Ascend910B4 is the
  arch the compile gate lowers for by default, so A2 stands for that part.
* A3 (Atlas A3, Ascend 910_93): ``platform_config/Ascend910_9392.ini`` says 24 AI cores
  and 48 vector cores, the same numbers ``aclrtGetDeviceInfo`` reports on that part.
* A5 (Ascend 950 / 910_95): an Ascend950PR_9589 reports 64 vector cores.  Its cube
  count follows from the one-cube-to-two-vector-cores layout triton-ascend's programming
  guide describes ("the number of cube cores (usually half of the number of vector
  cores)").  triton-ascend 3.2 spells the 950 parts ``Ascend910_95xx`` in its list of
  valid ``TRITON_ASCEND_ARCH`` values, so that is the arch string reported.

triton-ascend's own NPU driver (``backends/ascend/driver.py``) reports
``num_vectorcore = 2 * num_aicore`` and ``max_shared_mem = 1``; the stand-in does the
same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One Ascend part as the driver describes it."""

    name: str  # the opt-in's spelling: A2, A3, A5
    arch: str  # the NPU arch string triton-ascend's driver reports
    num_aicore: int  # cube cores (AI cores)
    num_vectorcore: int  # vector cores
    ub_bytes: int  # Unified Buffer per vector core (see ascend_lint.ub_model)

    def device_properties(self) -> dict:
        """``driver.active.utils.get_device_properties(device)`` on this part."""
        return {
            "max_shared_mem": 1,
            "num_aicore": self.num_aicore,
            "num_vectorcore": self.num_vectorcore,
        }


TARGETS: dict[str, Target] = {
    "A2": Target("A2", "Ascend910B4", num_aicore=20, num_vectorcore=40, ub_bytes=192 * 1024),
    "A3": Target("A3", "Ascend910_9392", num_aicore=24, num_vectorcore=48, ub_bytes=192 * 1024),
    "A5": Target("A5", "Ascend910_9589", num_aicore=32, num_vectorcore=64, ub_bytes=248 * 1024),
}

DEFAULT_TARGET = "A2"


def get_target(name: str) -> Target:
    """The target named ``name`` (A2, A3, A5; any case)."""
    wanted = (name or "").strip().upper()
    if wanted not in TARGETS:
        raise ValueError(
            f"{name!r} is not an Ascend target the CPU stand-in knows; choose one of "
            f"{', '.join(TARGETS)}"
        )
    return TARGETS[wanted]
