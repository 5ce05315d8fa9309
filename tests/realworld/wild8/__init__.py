"""An eighth corpus: published NumPy programs written as scalar loops over array cells
(C ported line by line) -- Stam's stable fluids with per-cell boundary loops, a relaxation
calling a routine that changes its grid in place, and advection by ``int()`` of clamped
floats and bilinear gathers -- re-expressed for this repository with the published data
flow: see README.md here."""

PROGRAMS = ("stable_fluids",)
