"""Helpers autograd users import from ``autograd.misc``, under the same names, so a
program ported by swapping ``autograd`` for ``myc`` keeps its optimizer and flattening
calls: ``myc.misc.flatten`` (also inside compiled code) and ``myc.misc.optimizers``."""

from myc.misc.flatten import flatten, flatten_func

__all__ = ["flatten", "flatten_func"]
