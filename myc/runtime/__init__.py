"""Calling compiled code: argument checking and conversion, outputs (``args``); the
per-signature cache of programs and its disk cache (``specialize``), guarded variants
(``variants``), the recompile bound (``recompiles``), running ``vjp``/``jvp`` (``vjp``)."""
