"""Test programs written in the myc subset of Python.

Every function here is plain Python that also runs unchanged under CPython; the
harness (``tests/test_programs.py``) runs each one both ways and compares.

Register a function with example arguments::

    @case((1.0, 2), (3.5, 0))
    def f(x, n): ...

Each positional argument of ``case`` is one tuple of call arguments.  Fewer
arguments than parameters exercise default values.  ``CASES`` collects
``(func, [arg_tuple, ...])`` in definition order; ``all_cases()`` imports every
program module and returns the list.
"""

import importlib

import numpy as np

CASES = []

MODULES = (
    "basics",
    "control",
    "loops",
    "closures",
    "recursion",
    "tuples",
    "arrays",
    "numpy_ops",
    "builtins_math",
)


def case(*arg_tuples):
    """Record ``func`` with the given argument tuples in ``CASES``."""
    if not arg_tuples:
        raise ValueError("case() needs at least one argument tuple")
    for a in arg_tuples:
        if not isinstance(a, tuple):
            raise TypeError(f"case arguments must be tuples, got {a!r}")

    def register(func):
        CASES.append((func, list(arg_tuples)))
        return func

    return register


def rng(seed):
    """A deterministic generator for building example arrays."""
    return np.random.default_rng(seed)


def randn(seed, *shape, dtype=np.float64):
    return rng(seed).standard_normal(shape).astype(dtype)


def uniform(seed, *shape, low=0.0, high=1.0, dtype=np.float64):
    return rng(seed).uniform(low, high, shape).astype(dtype)


def randint(seed, low, high, *shape):
    return rng(seed).integers(low, high, shape, dtype=np.int64)


def all_cases():
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
    return CASES
