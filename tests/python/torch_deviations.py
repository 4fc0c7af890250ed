"""Where torch 2.13's own CPU result depends on the machine, the tests compare with the
mathematically right value instead (Python's math module in float64, or the limit).

torch picks its CPU kernels at run time (ATEN_CPU_CAPABILITY=default|avx2|avx512) and their
special-value handling, last-bit rounding and summation order are not the same on every CPU, so
a test that takes torch's value as the reference there passes on one CI machine and fails on
another. Each entry below names the op, dtypes and inputs where that happens, the right value,
and a one-line reason. Everything else keeps torch as the reference.
"""
import math
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Deviation:
    op: str
    dtypes: tuple
    applies: Callable[[float], bool]  # on the input value
    right: Callable[[float], float]  # the mathematically right result for that input
    reason: str


DEVIATIONS = [
    Deviation("gelu", ("float32",), lambda x: x == math.inf, lambda x: math.inf,
              "torch's vectorized float gelu gives nan at +inf on some CPUs (AVX-512 EPYC, at every "
              "ATEN_CPU_CAPABILITY) and inf on others; gelu(x) = x * Phi(x) -> +inf"),
]


def reference(op, dtype, inputs, torch_values):
    """torch's results of `op` on the flat list `inputs`, with each element where torch is known
    to depend on the CPU replaced by the right value."""
    out = list(torch_values)
    for d in DEVIATIONS:
        if d.op == op and dtype in d.dtypes:
            for i, x in enumerate(inputs):
                if d.applies(x):
                    out[i] = d.right(x)
    return out
