"""ASC014 cuda-only-api: here its identity (code, name, one-line summary, and the reference
functions that show its fix, read without importing the check); `rule.py` (the check and
its VALID/INVALID examples), `ASC014.md` (its documentation), `snapshots/` (the fixed
output of its examples).
"""

CODE = "ASC014"
NAME = "cuda-only-api"
SUMMARY = '`device="cuda"`, `.cuda()`, `torch.cuda.*`, NVIDIA device properties or CUDA libdevice next to Triton kernels'
REFERENCES = ("core_grid.py::_driver_core_counts",)
SHOWS = 'props["num_vectorcore"]'
