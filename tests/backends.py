"""The backends every semantics battery runs on: the evaluator, the CPU backend, and
OpenCL wherever PyOpenCL is installed (CI installs it; PoCL runs it on the CPU)."""

from __future__ import annotations

import importlib.util

BACKENDS = ("interp", "cpu") + (("opencl",) if importlib.util.find_spec("pyopencl") else ())
