"""The rule registry: one module per code, named after the rule."""

from __future__ import annotations

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules.asc000_unparsable_file import UnparsableFile
from ascend_lint.rules.asc001_strided_time_gather import StridedTimeGather
from ascend_lint.rules.asc002_stale_pointer_math import StalePointerMath
from ascend_lint.rules.asc003_runtime_branch_in_loop import RuntimeBranchInLoop
from ascend_lint.rules.asc004_launch_num_warps_stages import LaunchNumWarpsStages
from ascend_lint.rules.asc005_runtime_dma_path_split import RuntimeDmaPathSplit
from ascend_lint.rules.asc006_constexpr_or_runtime import ConstexprOrRuntime
from ascend_lint.rules.asc007_late_int64_cast import LateInt64Cast
from ascend_lint.rules.asc008_int64_block_ptr_offset import Int64BlockPtrOffset
from ascend_lint.rules.asc009_int32_varlen_offsets import Int32VarlenOffsets
from ascend_lint.rules.asc010_dot_lhs_reuse import DotLhsReuse
from ascend_lint.rules.asc011_inplace_pointer_advance_in_loop import InplacePointerAdvanceInLoop
from ascend_lint.rules.asc012_grid_over_core_count import GridOverCoreCount
from ascend_lint.rules.asc013_per_call_constexpr import PerCallConstexpr
from ascend_lint.rules.asc014_cuda_only_api import CudaOnlyApi
from ascend_lint.rules.asc015_gpu_only_memory_hint import GpuOnlyMemoryHint
from ascend_lint.rules.asc016_dot_precision_option import DotPrecisionOption
from ascend_lint.rules.asc017_unsupported_dtype import UnsupportedDtype
from ascend_lint.rules.asc018_vector_int_div_mod import VectorIntDivMod
from ascend_lint.rules.asc019_masked_negative_offset import MaskedNegativeOffset
from ascend_lint.rules.asc020_chained_bool_op import ChainedBoolOp
from ascend_lint.rules.asc021_transposed_batch_base import TransposedBatchBase
from ascend_lint.rules.asc022_ub_overflow import UbOverflow
from ascend_lint.rules.asc023_grid_misses_work import GridMissesWork
from ascend_lint.rules.asc024_where_arm_load import WhereArmLoad
from ascend_lint.rules.asc025_zero_size_launch import ZeroSizeLaunch
from ascend_lint.rules.asc026_core_type_mismatch import CoreTypeMismatch
from ascend_lint.rules.asc027_data_dependent_gather import DataDependentGather
from ascend_lint.rules.asc028_unaligned_innermost_dim import UnalignedInnermostDim
from ascend_lint.rules.asc029_mixed_base_pointer import MixedBasePointer
from ascend_lint.rules.asc030_aliased_pointer_args import AliasedPointerArgs
from ascend_lint.rules.asc031_ascend_api_limit import AscendApiLimit
from ascend_lint.rules.asc032_int_vector_compare import IntVectorCompare
from ascend_lint.rules.asc100_unused_noqa import UnusedNoqa

ALL_RULES: tuple[type[Rule], ...] = (
    UnparsableFile,
    StridedTimeGather,
    StalePointerMath,
    RuntimeBranchInLoop,
    LaunchNumWarpsStages,
    RuntimeDmaPathSplit,
    ConstexprOrRuntime,
    LateInt64Cast,
    Int64BlockPtrOffset,
    Int32VarlenOffsets,
    DotLhsReuse,
    InplacePointerAdvanceInLoop,
    GridOverCoreCount,
    PerCallConstexpr,
    CudaOnlyApi,
    GpuOnlyMemoryHint,
    DotPrecisionOption,
    UnsupportedDtype,
    VectorIntDivMod,
    MaskedNegativeOffset,
    ChainedBoolOp,
    TransposedBatchBase,
    UbOverflow,
    GridMissesWork,
    WhereArmLoad,
    ZeroSizeLaunch,
    CoreTypeMismatch,
    DataDependentGather,
    UnalignedInnermostDim,
    MixedBasePointer,
    AliasedPointerArgs,
    AscendApiLimit,
    IntVectorCompare,
    UnusedNoqa,
)
RULES_BY_CODE: dict[str, type[Rule]] = {r.code: r for r in ALL_RULES}

# Reported by the engine itself: a file no rule could check.
SYNTAX_ERROR_CODE = UnparsableFile.code
SYNTAX_ERROR_NAME = UnparsableFile.name
# Reported by the engine after suppression: a noqa code that silenced nothing.
UNUSED_NOQA_CODE = UnusedNoqa.code

__all__ = [
    "ALL_RULES",
    "RULES_BY_CODE",
    "SYNTAX_ERROR_CODE",
    "Finding",
    "Invalid",
    "Rule",
    "RuleContext",
]
