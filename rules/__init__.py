"""The rule registry: one module per code, named after the rule."""

from __future__ import annotations

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules.asc000.rule import UnparsableFile
from ascend_lint.rules.asc001.rule import StridedTimeGather
from ascend_lint.rules.asc002.rule import StalePointerMath
from ascend_lint.rules.asc003.rule import RuntimeBranchInLoop
from ascend_lint.rules.asc004.rule import LaunchNumWarpsStages
from ascend_lint.rules.asc005.rule import RuntimeDmaPathSplit
from ascend_lint.rules.asc006.rule import ConstexprOrRuntime
from ascend_lint.rules.asc007.rule import LateInt64Cast
from ascend_lint.rules.asc008.rule import Int64BlockPtrOffset
from ascend_lint.rules.asc009.rule import Int32VarlenOffsets
from ascend_lint.rules.asc010.rule import DotLhsReuse
from ascend_lint.rules.asc011.rule import InplacePointerAdvanceInLoop
from ascend_lint.rules.asc012.rule import GridOverCoreCount
from ascend_lint.rules.asc013.rule import PerCallConstexpr
from ascend_lint.rules.asc014.rule import CudaOnlyApi
from ascend_lint.rules.asc015.rule import GpuOnlyMemoryHint
from ascend_lint.rules.asc016.rule import DotPrecisionOption
from ascend_lint.rules.asc017.rule import UnsupportedDtype
from ascend_lint.rules.asc018.rule import VectorIntDivMod
from ascend_lint.rules.asc019.rule import MaskedNegativeOffset
from ascend_lint.rules.asc020.rule import ChainedBoolOp
from ascend_lint.rules.asc021.rule import TransposedBatchBase
from ascend_lint.rules.asc022.rule import UbOverflow
from ascend_lint.rules.asc023.rule import GridMissesWork
from ascend_lint.rules.asc024.rule import WhereArmLoad
from ascend_lint.rules.asc025.rule import ZeroSizeLaunch
from ascend_lint.rules.asc026.rule import CoreTypeMismatch
from ascend_lint.rules.asc027.rule import DataDependentGather
from ascend_lint.rules.asc028.rule import UnalignedInnermostDim
from ascend_lint.rules.asc029.rule import MixedBasePointer
from ascend_lint.rules.asc030.rule import AliasedPointerArgs
from ascend_lint.rules.asc031.rule import AscendApiLimit
from ascend_lint.rules.asc032.rule import IntVectorCompare
from ascend_lint.rules.asc100.rule import UnusedNoqa

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
