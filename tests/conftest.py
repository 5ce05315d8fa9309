"""Test-wide settings: internal failures of the specializer fail tests instead of
silently falling back to the reference evaluator (users get the fallback), and the
disk cache lives in a fresh temporary directory, never in the user's cache (and its key
in another)."""

import os
import tempfile

os.environ.setdefault("MYC_STRICT", "1")
os.environ.setdefault("MYC_CACHE_DIR", tempfile.mkdtemp(prefix="myc-test-cache-"))
# the key that authenticates cache entries: a test's own, never the user's
os.environ.setdefault("MYC_CACHE_KEY_FILE",
                      os.path.join(tempfile.mkdtemp(prefix="myc-test-key-"), "cache-key"))
