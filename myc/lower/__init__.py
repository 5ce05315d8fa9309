"""Lowering: optimized typed graphs to host programs of kernels and library calls."""
