"""Naming conventions of Triton kernels: the last tie-breaker, never the only evidence.

Rules decide from what values are (constexpr, loaded, launcher-bound, the axis they
index); a name is consulted only where that evidence is silent, and each use says so.
"""

from __future__ import annotations

import re

# Naming conventions of Triton kernels, used where a rule must tell axes apart.
# Head counts multiply the time index in a [B, T, HV] layout ...
_HEAD_COUNT = re.compile(r"^(H|HV|HQ|HK|NH|H_?V|N_?HEADS?|NUM_HEADS|num_heads|n_heads|nheads)$")
# ... and a sequence length multiplies the head index in the transposed [B, HV, T] one.
_LENGTH = re.compile(r"^(T\w*|L|N_CTX|\w*(len|LEN|seq|SEQ)\w*)$")


def is_head_count(name: str) -> bool:
    return bool(_HEAD_COUNT.match(name))


def is_length(name: str) -> bool:
    return bool(_LENGTH.match(name))


# A sequence or token count spelled the usual ways (`T`, `T_seq`, `seq_len`, `max_seqlen`,
# `num_tokens`, `N_CTX`); a generic `*_len` (`vec_len`, `list_len`) is not one.
_SEQUENCE_LENGTH = re.compile(
    r"^(T|T_\w+|L|N_CTX|\w*seq_?lens?\w*|\w*SEQ_?LENS?\w*|\w*(num|n)_tokens|\w*NUM_TOKENS)$"
)


def is_sequence_length(name: str) -> bool:
    return bool(_SEQUENCE_LENGTH.match(name))


# Sizes fixed by the model or the tiling, spelled the usual ways (`head_num`, `num_kv_heads`,
# `head_dim`, `hidden_size`, `n_experts`, `kv_group_num`, `block_size`, `vocab_size`).
_MODEL_WORDS = (
    "head",
    "dim",
    "hidden",
    "expert",
    "group",
    "vocab",
    "channel",
    "feature",
    "embed",
    "block",
    "width",
    "window",
    "page",
    "layer",
)
_VARYING_WORDS = ("token", "seq", "batch", "row", "len")


# Single letters for feature sizes: head dims `K`/`V`, hidden `D`, experts `E`, channels `C`.
_MODEL_LETTERS = frozenset({"D", "K", "V", "E", "C"})


def is_model_dimension(name: str) -> bool:
    if name in _MODEL_LETTERS:
        return True
    lowered = name.lower()
    return any(w in lowered for w in _MODEL_WORDS) and not any(w in lowered for w in _VARYING_WORDS)


# Learned parameters (`weight`, `conv_weight`, `bias`, `gamma`): their sizes are the model's.
_PARAMETER_TENSOR = re.compile(
    r"^(\w*_)?(weight|weights|bias|gamma|beta|w|b)(_\w*)?$", re.IGNORECASE
)


def is_parameter_tensor(name: str) -> bool:
    return bool(_PARAMETER_TENSOR.match(name))


def is_head_name(name: str) -> bool:
    """`H`, `HV`, `num_heads`, and the lower-case and suffixed spellings (`h`, `Hq`, `Hg`)."""
    return is_head_count(name) or is_head_count(name.upper()) or bool(_SHORT_HEADS.match(name))


_SHORT_HEADS = re.compile(r"^([Hh][a-z]?|n_?(q|k|kv|v)?_?h(eads?)?|num_(q|k|kv|v)_?heads?)$")


def is_batch_name(name: str) -> bool:
    return name in ("B", "b", "bs", "BS") or "batch" in name.lower()


def is_token_count(name: str) -> bool:
    """`token_num`, `n_rows`, `n_elements`: a count of tokens, rows or elements."""
    lowered = name.lower()
    return any(
        word in lowered
        for word in ("token", "n_rows", "num_rows", "n_elements", "numel", "total_len")
    )


# Serving caches and state pools (`kv_cache`, `conv_state`, `ssm_states`, `block_pool`):
# allocated once, their leading dimension counts slots, not this call's tokens. Hidden
# states are activations, not a pool.
_CACHE_TENSOR = re.compile(
    r"^(\w*cache|\w*caches|\w*pool|(\w+_)?(conv|ssm|kv|recurrent|mamba|cache)_?states?)$",
    re.IGNORECASE,
)


def is_cache_tensor(name: str) -> bool:
    return bool(_CACHE_TENSOR.match(name))
