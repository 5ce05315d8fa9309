"""The exact ``fmod`` every GPU target uses (``myc.backends.gpu.fmod``)."""

from myc.backends.gpu.fmod import fmod_function

__all__ = ["fmod_function"]
