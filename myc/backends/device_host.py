"""What every device-resident backend's host glue shares (``opencl``; ``cuda`` and
``rocm`` through ``myc.backends.gpu.host``).

A device-resident backend keeps a program's arrays on its device between steps; the
host program (``myc.lower.program``) asks its registry entry for the value hooks of
``myc.lower.target.Target`` (arguments to the device, results back, scalars, loop
bodies' results, the evaluator's arguments).  Those hooks are the same logic on every
device -- only what "on the device", "copy to the host", "read a scalar" and "upload"
mean differs -- so they are written once here, on a :class:`DeviceHost` that each
backend's host module subclasses with those four, and the registry's
``DeviceResident`` entry delegates to it.  What differs for real (which steps run on
the device, how kernels launch, how a call's foreign arrays are taken) stays in the
backend's own host module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.prims.abstract import AScalar
from myc.prims.containers import leaves, map_leaves

# steps that only move values around: device values pass through them as they are
STRUCTURAL = frozenset({"make_tuple", "loop_out", "tape_get"})


class DeviceConst:
    """An array constant of a device host program: uploaded on first use, then reused
    by every call (the host copy is what the disk cache stores).  Each backend
    subclasses it with its :meth:`upload`."""

    def __init__(self, host: np.ndarray):
        self.host = host
        self._dev: Any = None

    def upload(self, host: np.ndarray) -> Any:
        raise NotImplementedError

    def device(self) -> Any:
        if self._dev is None:
            self._dev = self.upload(self.host)
        return self._dev

    def __getstate__(self) -> dict:
        return {"host": self.host, "_dev": None}

    def __repr__(self) -> str:
        return repr(self.host)


def program_scalar(value: Any, a: AScalar) -> Any:
    """A scalar read from a device (a 0-d host array or a NumPy scalar) as the
    program's type ``a`` promises: a Python scalar when weak, else a NumPy scalar."""
    v = np.asarray(value)[()]
    if a.weak:
        return {"f": float, "i": int, "b": bool}[a.dtype.kind](v)
    return a.dtype.type(v)


def is_runner(fn: Any) -> bool:
    """Is ``fn`` a loop or a typed call (it takes device values as they are)?"""
    from myc.lower.program import CallRunner, LoopRunner

    return isinstance(fn, LoopRunner | CallRunner)


class DeviceHost:
    """A device's host glue.  A subclass says what its device arrays are
    (:meth:`on_device`), how one comes to the host (:meth:`to_host`), how the host
    reads a device scalar (:meth:`read_scalar`), how a host array is uploaded
    (:meth:`upload`) and how a host fallback is counted (:meth:`count_fallback`);
    ``const`` is its :class:`DeviceConst` subclass."""

    const: type[DeviceConst] = DeviceConst

    # -- what a device says -------------------------------------------------------------
    def on_device(self, v: Any) -> bool:
        raise NotImplementedError

    def to_host(self, v: Any) -> Any:
        """``v`` as a host value (a device array copied, a constant's host copy)."""
        raise NotImplementedError

    def read_scalar(self, v: Any) -> Any:
        """A device scalar's value on the host."""
        raise NotImplementedError

    def upload(self, host: np.ndarray) -> Any:
        raise NotImplementedError

    def count_fallback(self, name: str) -> None:
        raise NotImplementedError

    # -- the value hooks, written once ----------------------------------------------------
    def any_on_device(self, values: list[Any]) -> bool:
        on = self.on_device
        return any(on(v) for v in leaves(tuple(values)))

    def to_host_values(self, values: list[Any]) -> list[Any]:
        return [map_leaves(v, self.to_host) for v in values]

    def to_device_values(self, values: list[Any]) -> list[Any]:
        """The NumPy arrays among ``values`` copied to the device (a program's arguments:
        once, then every step reading them reads the device copy); device arrays as
        they are; constants as their device copy."""
        out = values
        const = self.const
        for i, v in enumerate(values):
            t = type(v)
            if t is np.ndarray or t is const:
                if out is values:
                    out = list(values)
                try:
                    out[i] = v.device() if t is const else self.upload(v)
                except MemoryError:  # (a broadcast view too big to copy: the first
                    pass  # step that reads it says so, with its line)
        return out

    def body_results(self, values: list[Any]) -> list[Any]:
        """A loop or call body's results as device values (constants as their device
        copy)."""
        const = self.const
        return [v.device() if type(v) is const else v for v in values]

    def device_constants(self, operands: list[tuple[bool, Any]]
                         ) -> list[tuple[bool, Any]]:
        """``(is_slot, value)`` operands with array constants as ``const`` s."""
        const = self.const
        return [(False, const(x)) if not is_slot and type(x) is np.ndarray
                else (is_slot, x) for is_slot, x in operands]

    def results(self, values: list[Any], outputs: list[tuple[bool, Any]],
                specs: list[Any], guards: int, device_in: bool) -> list[Any]:
        """A program's results as the caller gets them: scalars read back as the
        program's types promise; arrays on the host unless an argument was a device
        array (the guards' values, which the host checks, always)."""
        out = list(values)
        for i, ((is_slot, x), v) in enumerate(zip(outputs, values, strict=False)):
            if is_slot and self.on_device(v):
                a = specs[x]
                if isinstance(a, AScalar):
                    out[i] = program_scalar(self.read_scalar(v), a)
        if not device_in:
            return self.to_host_values(out)
        if guards:
            n = len(out) - guards
            out = out[:n] + self.to_host_values(out[n:])
        return out

    def evaluator_args(self, args: tuple) -> tuple:
        """A call's arguments for the reference evaluator (which reads host arrays):
        device arrays copied to the host, counted as the fallback ``evaluator``."""
        on = self.on_device
        if any(on(v) for v in leaves(args)):
            self.count_fallback("evaluator")
            return tuple(self.to_host_values(list(args)))
        return args


__all__ = ["STRUCTURAL", "DeviceConst", "DeviceHost", "is_runner", "program_scalar"]
