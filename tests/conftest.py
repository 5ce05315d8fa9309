"""Test-wide settings: internal failures of the specializer fail tests instead of
falling back to the reference evaluator (users get the fallback, with a warning);
``MYC_STRICT=internal`` leaves the other fallbacks to warnings and ``f.stats()``, which
the tests that care check (``MYC_STRICT=1`` makes each an error).  The disk cache lives
in a fresh temporary directory, never in the user's cache (and its key in another)."""

import os
import tempfile

os.environ.setdefault("MYC_STRICT", "internal")
os.environ.setdefault("MYC_CACHE_DIR", tempfile.mkdtemp(prefix="myc-test-cache-"))
# the key that authenticates cache entries: a test's own, never the user's
os.environ.setdefault("MYC_CACHE_KEY_FILE",
                      os.path.join(tempfile.mkdtemp(prefix="myc-test-key-"), "cache-key"))
