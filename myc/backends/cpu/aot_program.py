"""The ahead-of-time program: what ``myc/aot/build.py`` builds and the CPU backend compiles.

It exists so the front half (``myc/aot/build.py``, ``myc/aot/dynamic.py``, ``myc/aot/loops.py``)
and the header writer can describe a program without importing the LLVM emitter.

An :class:`AotProgram` (target-neutral) has input and output values with static shapes
(or polynomials in dynamic sizes, ``myc/aot/dynamic.py``) and dtypes, and a list of
operations over values:

* :class:`KernelOp` -- a fused kernel (kernel IR), called over its whole parallel range;
  ``divide_by`` divides an output in place afterwards (a ``mean``);
* :class:`Gemm` -- ``C = A @ B`` on contiguous row-major float matrices;
* :class:`Permute` -- a transpose, copied into a new contiguous buffer;
* :class:`Alias` -- a reshape: the same contiguous data under another shape;
* the control-flow operations of :mod:`myc.backends.cpu.aot_loopgen`.

The ABI constants (dtype and status codes) live here too: the emitted entry point and
the C header (:mod:`myc.backends.cpu.aot_header`) must agree on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np

from myc.backends.cpu.codegen import ITEMSIZE
from myc.lower.dims import Dim
from myc.lower.kernel import Kernel

DTYPE_CODE = {"float32": 0, "float64": 1, "int64": 2, "bool": 3}
SHORT = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "bool"}
STATUS = {"MYC_OK": 0, "MYC_ERR_ARGC": 1, "MYC_ERR_NULL": 2, "MYC_ERR_DTYPE": 3,
          "MYC_ERR_NDIM": 4, "MYC_ERR_SHAPE": 5, "MYC_ERR_ALLOC": 6, "MYC_ERR_RAISE": 7}
# the most bytes one array of a library may take: above any machine's address space
# (x86-64 and AArch64 user space is at most 2^56 bytes), and far enough below 2^63
# that the arena's sums, a tape's rows and 64 threads' partials stay in 64 bits
MAX_BYTES = 1 << 56


@dataclass(eq=False)
class Value:
    """An array with a static shape; ``const`` holds the data of a constant."""

    dtype: str
    shape: tuple[int, ...]
    name: str = ""
    const: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return prod(self.shape) * ITEMSIZE[self.dtype]

    def describe(self) -> str:
        return f"{SHORT[self.dtype]}[{','.join(map(str, self.shape))}]"


@dataclass(eq=False)
class KernelOp:
    kernel: Kernel
    inputs: list[Value]
    outputs: list[Value]
    divide_by: list[int | None] = field(default_factory=list)


@dataclass(eq=False)
class Gemm:
    a: Value
    b: Value
    out: Value
    m: int
    n: int
    k: int


@dataclass(eq=False)
class Permute:
    src: Value
    out: Value
    perm: tuple[int, ...]


@dataclass(eq=False)
class Alias:
    src: Value
    out: Value


@dataclass(eq=False)
class AotProgram:
    name: str  # the exported C symbol
    inputs: list[Value]
    ops: list
    outputs: list[Value]
    symbols: dict[str, int] = field(default_factory=dict)  # dynamic size -> lower bound
    max_size: int = MAX_BYTES  # a dynamic size above this is refused (and see aot_limits)


def c_strides(shape: tuple[int, ...], itemsize: int) -> list[int]:
    """The byte strides of a C-contiguous array of ``shape``."""
    out, acc = [], itemsize
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def is_size_const(v: Value) -> bool:
    """A constant computed from dynamic sizes (see ``myc/aot/dynamic.py``)."""
    return v.const is not None and v.const.dtype == object


def is_dynamic(v: Value) -> bool:
    return any(isinstance(d, Dim) for d in v.shape)
