"""Runs the ninth corpus: ``python -m tests.realworld.wild9.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild9 import PROGRAMS

PACKAGE = "tests.realworld.wild9"

FEATURES: dict[str, str] = {}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
