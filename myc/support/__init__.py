"""Services every stage may use: the disk cache (and its key and pruning), a bounded LRU,
the recursion limit, the run statistics and fallback records, the version.

It imports nothing from the stages (only ``myc.errors`` and ``myc.timings``, which sit
beside it at the bottom of the import order: ``docs/architecture.md``).
"""
