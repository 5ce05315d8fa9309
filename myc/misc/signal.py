# ruff: noqa: B905 - myc compiles this module, and its zip() takes no strict=
"""autograd's ``convolve`` with ``axes=`` and ``dot_axes=``: a convolution that also
contracts axes (a convolutional layer's input channels) and keeps others as batch.

autograd extends ``scipy.signal.convolve`` (its ``autograd.scipy.signal.convolve``) with
these two arguments; SciPy's own function has neither, so a program written for autograd
cannot swap its import to SciPy for this one call.  This is the same function written in
NumPy: it runs under CPython, and myc compiles it as any user code (one slice and one
matrix product per kernel position).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _others(n: int, used: list) -> list:
    return [i for i in range(n) if i not in used]


def convolve(A: Any, B: Any, axes: Any = None, dot_axes: Any = ((), ()),
             mode: str = "full") -> Any:
    """Convolve ``A`` with ``B`` along ``axes`` (a pair of axis lists, default all of
    ``A``'s and ``B``'s axes), summing products over ``dot_axes`` (a pair); the result's
    axes are ``A``'s others, then ``B``'s others, then the convolved ones.  ``mode``
    ``'full'`` or ``'valid'`` (any other value is read as ``'valid'``), as
    ``scipy.signal.convolve``: the kernel is flipped."""
    if not axes:
        axes = (list(range(A.ndim)), list(range(B.ndim)))
    conv_a, conv_b = list(axes[0]), list(axes[1])
    dot_a, dot_b = list(dot_axes[0]), list(dot_axes[1])
    other_a = _others(A.ndim, conv_a + dot_a)
    other_b = _others(B.ndim, conv_b + dot_b)
    a_other_shape = tuple([A.shape[i] for i in other_a])
    b_other_shape = tuple([B.shape[i] for i in other_b])
    n_dot = int(np.prod([A.shape[i] for i in dot_a]))
    kshape = [B.shape[i] for i in conv_b]
    # canonical layouts: A as (others, dot, conv...), B as (dot, others, conv...)
    a3 = np.transpose(A, other_a + dot_a + conv_a)
    a3 = np.reshape(a3, (int(np.prod(a_other_shape)), n_dot) + tuple(
        [A.shape[i] for i in conv_a]))
    b3 = np.transpose(B, dot_b + other_b + conv_b)
    b3 = np.reshape(b3, (n_dot, int(np.prod(b_other_shape))) + tuple(kshape))
    if mode == "full":
        widths = [(0, 0), (0, 0)] + [(k - 1, k - 1) for k in kshape]
        a3 = np.pad(a3, widths)
    in_shape = [a3.shape[d + 2] for d in range(len(kshape))]
    out_shape = tuple([n - k + 1 for n, k in zip(in_shape, kshape)])  # noqa: B905
    offsets = [()]
    for k in kshape:
        offsets = [o + (j,) for o in offsets for j in range(k)]
    n_out = int(np.prod(out_shape))
    total = 0.0
    for o in offsets:
        window = a3[(slice(None), slice(None)) + tuple(
            [slice(j, j + n) for j, n in zip(o, out_shape)])]
        window = np.reshape(window, (window.shape[0], n_dot, n_out))
        flipped = tuple([k - 1 - j for j, k in zip(o, kshape)])
        kmat = b3[(slice(None), slice(None)) + flipped]  # (dot, others of B)
        total = total + np.einsum("adp,db->abp", window, kmat)
    return np.reshape(total, a_other_shape + b_other_shape + out_shape)
