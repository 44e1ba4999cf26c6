"""ascend-lint: finds Triton kernel habits that are slow or wrong on Ascend NPUs."""

__version__ = "0.1.0"
