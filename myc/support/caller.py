"""Where a warning should point: the user's frame, not myc's."""

from __future__ import annotations

import os
import sys

_MYC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller point at the first
    frame outside myc: the user's call."""
    f = sys._getframe(1)
    level = 1
    while f is not None and f.f_code.co_filename.startswith(_MYC_DIR):
        f = f.f_back
        level += 1
    return level
