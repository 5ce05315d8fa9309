"""myc's version, here so the disk cache can key by it without importing the package's API."""

__version__ = "0.1.0"
