"""The root conftest of a test suite written for an Ascend NPU: it imports torch_npu and
puts the tensors on the NPU."""

import pytest
import torch
import torch_npu  # noqa: F401  (registers the npu device)


@pytest.fixture
def device():
    torch.npu.set_device(0)
    return "npu"
