"""The ABI constants of an ahead-of-time library: dtype and status codes.

The emitted entry point (``aot_abi``) and the C header (``aot_header``) must agree on
them; the program they describe is a :class:`myc.lower.hostplan.HostPlan`.
"""

from __future__ import annotations

DTYPE_CODE = {"float32": 0, "float64": 1, "int64": 2, "bool": 3}
STATUS = {"MYC_OK": 0, "MYC_ERR_ARGC": 1, "MYC_ERR_NULL": 2, "MYC_ERR_DTYPE": 3,
          "MYC_ERR_NDIM": 4, "MYC_ERR_SHAPE": 5, "MYC_ERR_ALLOC": 6, "MYC_ERR_RAISE": 7}
