"""reference_kernels.core_grid: where the core counts of a 1-D core-grid launch come from."""

import pytest
import torch
import triton

from reference_kernels import core_grid


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(core_grid.AI_CORES_ENV, raising=False)
    monkeypatch.delenv(core_grid.VECTOR_CORES_ENV, raising=False)
    core_grid._driver_core_counts.cache_clear()
    yield
    core_grid._driver_core_counts.cache_clear()


class _FakeDriver:
    """Stands in for triton's active driver (triton-ascend's NPU one by default): the
    properties the helpers read."""

    def __init__(self, backend="npu"):
        self.backend = backend
        self.asked = []
        outer = self

        class _Utils:
            @staticmethod
            def get_device_properties(index):
                outer.asked.append(index)
                if outer.backend == "npu":
                    return {
                        "num_aicore": 20 + index,
                        "num_vectorcore": 40 + index,
                        "max_shared_mem": 1,
                    }
                return {"multiprocessor_count": 132 + index, "max_shared_mem": 232448}

        self.utils = _Utils()

    def get_current_target(self):
        return type("Target", (), {"backend": self.backend})()

    def get_current_device(self):
        return 0


def test_defaults_without_an_npu_driver():
    # The kernel tests run under the interpreter: no NPU driver is active.
    assert core_grid.num_ai_cores() == core_grid.DEFAULT_AI_CORES == 24
    assert core_grid.num_vector_cores(torch.zeros(1)) == core_grid.DEFAULT_VECTOR_CORES == 48


def test_npu_driver_properties_for_the_tensor_device(monkeypatch):
    fake = _FakeDriver()
    monkeypatch.setattr(triton.runtime.driver, "active", fake)
    assert core_grid.num_ai_cores() == 20  # no index: the driver's current device
    assert core_grid.num_ai_cores(torch.zeros(1)) == 20  # a CPU tensor has no index either
    assert core_grid.num_ai_cores(3) == 23
    assert core_grid.num_vector_cores(2) == 42
    assert fake.asked == [0, 3, 2]  # one driver query per device (cached)


def test_cuda_driver_gives_programs_per_sm(monkeypatch):
    # The same kernels on a GPU: a 910B's 24 programs would leave most of an H200 idle.
    fake = _FakeDriver(backend="cuda")
    monkeypatch.setattr(triton.runtime.driver, "active", fake)
    assert core_grid.num_ai_cores() == core_grid.PROGRAMS_PER_SM * 132 == 528
    assert core_grid.num_vector_cores(1) == core_grid.PROGRAMS_PER_SM * 133
    assert fake.asked == [0, 1]


def test_other_drivers_fall_back_to_the_defaults(monkeypatch):
    monkeypatch.setattr(triton.runtime.driver, "active", _FakeDriver(backend="hip"))
    assert core_grid.num_ai_cores(0) == core_grid.DEFAULT_AI_CORES
    assert core_grid.num_vector_cores(0) == core_grid.DEFAULT_VECTOR_CORES


def test_environment_overrides_a_cuda_driver(monkeypatch):
    monkeypatch.setattr(triton.runtime.driver, "active", _FakeDriver(backend="cuda"))
    monkeypatch.setenv(core_grid.AI_CORES_ENV, "24")
    assert core_grid.num_ai_cores(0) == 24


def test_environment_overrides_driver_and_default(monkeypatch):
    monkeypatch.setattr(triton.runtime.driver, "active", _FakeDriver())
    monkeypatch.setenv(core_grid.AI_CORES_ENV, "3")
    monkeypatch.setenv(core_grid.VECTOR_CORES_ENV, " 5 ")
    assert core_grid.num_ai_cores(1) == 3
    assert core_grid.num_vector_cores(1) == 5
    monkeypatch.setenv(core_grid.AI_CORES_ENV, "")
    assert core_grid.num_ai_cores(1) == 21  # empty means unset


@pytest.mark.parametrize("raw", ["0", "-4", "many", "2.5"])
def test_bad_environment_value_is_a_clear_error(monkeypatch, raw):
    monkeypatch.setenv(core_grid.AI_CORES_ENV, raw)
    with pytest.raises(ValueError, match=core_grid.AI_CORES_ENV):
        core_grid.num_ai_cores()
