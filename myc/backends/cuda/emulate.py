"""The emulator for backend="cuda": the shared one (``myc.backends.gpu.emulate``)."""

from myc.backends.gpu.emulate import EmulatedKernel, add_emulator_entries

__all__ = ["EmulatedKernel", "add_emulator_entries"]
