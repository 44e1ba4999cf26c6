# Golden-output fixture: a fixable ASC004 in an autotune config, and a repeated config
# whose finding cites the first one (a related location).
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BT": 64}, num_stages=2)], key=["T"])
@triton.jit
def tuned_kernel(x, T, BT: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({"BT": 64}), triton.Config({"BT": 64})], key=["T"])
@triton.jit
def repeated_kernel(x, T, BT: tl.constexpr):
    pass
