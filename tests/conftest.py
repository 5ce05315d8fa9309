"""Test-wide settings: internal failures of the specializer fail tests instead of
silently falling back to the reference evaluator (users get the fallback)."""

import os

os.environ.setdefault("MYC_STRICT", "1")
