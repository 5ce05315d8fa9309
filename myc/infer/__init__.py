"""Specialization: abstract values, shape/dtype rules, and the specializing tracer."""
