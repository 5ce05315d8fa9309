"""Peak memory of one call, measured the same way for every framework.

On Linux the kernel keeps a resident-set high-water mark per process (``VmHWM`` in
``/proc/self/status``) and resets it to the current RSS when ``5`` is written to
``/proc/self/clear_refs``.  So: collect garbage, read RSS, reset the mark, make one call,
read the mark; the difference is the extra resident memory the call touched at its peak
(temporaries and outputs; inputs already existed).  It sees every allocator -- NumPy's,
PyTorch's, LLVM-compiled code's -- unlike ``tracemalloc``, which misses PyTorch.  Memory an
allocator keeps cached from earlier calls is already resident, so a framework that caches
(PyTorch's CPU allocator for small blocks) can show less than it uses: read the figures as
"new memory touched at the peak", a lower bound.

Elsewhere the fallback is ``resource.getrusage(...).ru_maxrss``, a high-water mark that
cannot be reset: a delta appears only when a call sets a new process-wide peak, so zeros
mean "not measurable", and the record says which method was used.  GPU memory is not
measured.
"""

from __future__ import annotations

import gc
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_STATUS = Path("/proc/self/status")
_CLEAR = Path("/proc/self/clear_refs")


def _status_kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _hwm_resettable() -> bool:
    try:
        _CLEAR.write_text("5")
        _status_kib("VmHWM")
        return True
    except (OSError, KeyError, ValueError):
        return False


METHOD = "linux-vmhwm" if _hwm_resettable() else "ru_maxrss-delta"


def peak_delta_mib(call: Callable[[], Any]) -> float:
    """Extra resident memory (MiB) at the peak of one ``call()``."""
    gc.collect()
    if METHOD == "linux-vmhwm":
        before = _status_kib("VmRSS")
        _CLEAR.write_text("5")
        out = call()
        peak = _status_kib("VmHWM")
        del out
        return max(peak - before, 0) / 1024.0
    scale = 1.0 if sys.platform == "darwin" else 1024.0  # bytes on macOS, KiB on Linux
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = call()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del out
    return max(after - before, 0) * scale / 2**20
