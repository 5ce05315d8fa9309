"""``python -m benchmarks``: same as ``myc bench``."""

import sys

from benchmarks.cli import main

sys.exit(main())
