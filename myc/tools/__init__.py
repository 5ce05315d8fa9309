"""Developer tools run as ``python -m myc.tools.<name>``."""
