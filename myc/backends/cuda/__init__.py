"""The CUDA backend: kernel IR to PTX through LLVM (the NVPTX instance of the shared GPU
emitter, ``myc.backends.gpu``), launched through CuPy.

``codegen`` and ``host`` are the shared GPU modules, reachable here under their old
names."""

from __future__ import annotations

import importlib
from typing import Any

_SHARED = {"codegen", "host", "execute"}


def __getattr__(name: str) -> Any:
    if name in _SHARED:
        return importlib.import_module(f"myc.backends.gpu.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
