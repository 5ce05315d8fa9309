"""Ctrl-C inside native code: a flag the machine code polls, set by a C signal handler.

A native loop runs in one ctypes call with the GIL released, so CPython cannot run its
Python-level SIGINT handler until the call returns -- an endless ``while`` would need
``kill -9``.  So SIGINT's C handler is ``myc_on_sigint`` (machine code made here, not a
ctypes callback: a signal handler must not take the GIL): while a compiled call that can
loop runs in the main thread (``arm``/``disarm``: two memory writes), it sets the flag
``myc_interrupt``; always, it then calls the handler it replaced (CPython's, which marks
the signal pending as usual -- outside compiled calls nothing changes).  Generated loops
read the flag once per iteration and return their bail-out status when it is set; the
caller then runs the pending Python handlers (``PyErr_CheckSignals``: the default one
raises ``KeyboardInterrupt``).

The handler is installed at the first armed call and again whenever the Python-level
SIGINT handler has changed since (``signal.signal`` puts CPython's C handler back); an
ignored or default SIGINT is left alone.  Swapping handlers on every call instead would
cost two ``sigaction`` system calls per call (8 us on the development VM).  Only Linux
is covered (the handler sits at offset 0 of glibc's ``struct sigaction`` and the flags
at 136); elsewhere native loops are not interruptible, as before.
"""

from __future__ import annotations

import _signal  # (signal.getsignal converts to an enum: 100x slower per call; and
import ctypes  # importing ``signal`` builds its enums: 1.6 ms of a first call)
import sys
import threading

import llvmlite.binding as llvm

SYMBOL = "myc_interrupt"  # the i32 flag generated code reads (an external global)

_CELLS = (ctypes.c_int32 * 2)()  # [the flag, armed?]
_FLAG = ctypes.c_int32.from_buffer(_CELLS, 0)
_ARMED = ctypes.c_int32.from_buffer(_CELLS, 4)
_PREV = ctypes.c_void_p(0)  # the C handler ours chains to
_SA_SIGINFO = 4
_FLAGS_OFF = 136  # sa_flags in glibc's struct sigaction (x86-64 and aarch64)
_SIZE = 256  # room for the struct on any glibc target

llvm.add_symbol(SYMBOL, ctypes.addressof(_CELLS))

_MAIN = threading.main_thread().ident
_UNSEEN = object()
# python: the Python-level handler when we last looked; ours: is our C handler in force
_state: dict = {"depth": 0, "python": _UNSEEN, "ours": False}


class _Sigaction:
    """libc's ``sigaction`` on raw struct buffers, and the handler made for it."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.call = libc.sigaction
        self.call.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        self.call.restype = ctypes.c_int
        self.ours = _handler()
        self.new = ctypes.create_string_buffer(_SIZE)  # ours, made from the one replaced
        self.seen = ctypes.create_string_buffer(_SIZE)

    def make(self, old: bytes) -> bool:
        """Our action from the one in force (same mask and flags); False when that one
        is not a plain C handler we can chain to (ignored, default, SA_SIGINFO)."""
        handler = ctypes.c_void_p.from_buffer_copy(old, 0).value or 0
        flags = ctypes.c_int.from_buffer_copy(old, _FLAGS_OFF).value
        if handler <= 1 or flags & _SA_SIGINFO or handler == self.ours:
            return False
        ctypes.memmove(self.new, old, _SIZE)
        ctypes.c_void_p.from_buffer(self.new, 0).value = self.ours
        _PREV.value = handler
        return True


def _handler() -> int:
    """``void myc_on_sigint(int)``: set the flag, call the replaced handler (the
    addresses are this process's: this code is never cached)."""
    from myc.backends.cpu.jit import JitModule

    flag = ctypes.addressof(_CELLS)
    text = f"""
define void @myc_on_sigint(i32 %sig) {{
entry:
  %armed = load atomic i32, ptr inttoptr (i64 {flag + 4} to ptr) seq_cst, align 4
  %on = icmp ne i32 %armed, 0
  br i1 %on, label %set, label %chain
set:
  store atomic i32 1, ptr inttoptr (i64 {flag} to ptr) seq_cst, align 4
  br label %chain
chain:
  %prev = load atomic ptr, ptr inttoptr (i64 {ctypes.addressof(_PREV)} to ptr) seq_cst, align 8
  call void %prev(i32 %sig)
  ret void
}}
"""
    jit = JitModule(text)
    _KEEP.append(jit)
    return jit.address("myc_on_sigint")


_KEEP: list = []
_impl: list[_Sigaction | None] = []


def _sigaction() -> _Sigaction | None:
    if not _impl:
        try:
            _impl.append(_Sigaction() if sys.platform == "linux" else None)
        except Exception:  # noqa: BLE001 - no libc sigaction: not interruptible
            _impl.append(None)
    return _impl[0]


def arm() -> bool:
    """Route SIGINT to the flag for a native call starting now (main thread only; nested
    calls share the outermost's arming).  True when ``disarm`` must be called."""
    if threading.get_ident() != _MAIN:
        return False
    if _state["depth"]:
        _state["depth"] += 1
        return True
    py = _signal.getsignal(_signal.SIGINT)
    if py is not _state["python"]:  # first call, or the user set another handler
        _state["ours"] = _install()
        _state["python"] = py
    if not _state["ours"]:
        return False
    _FLAG.value = 0
    _ARMED.value = 1
    _state["depth"] = 1
    return True


def _install() -> bool:
    """Put ours in front of the C handler in force (False: none to chain to)."""
    sa = _sigaction()
    if sa is None or sa.call(_signal.SIGINT, None, sa.seen) != 0:
        return False
    if ctypes.c_void_p.from_buffer(sa.seen, 0).value == sa.ours:
        return True  # still ours (the Python-level handler was changed from C)
    return sa.make(sa.seen.raw) and sa.call(_signal.SIGINT, sa.new, None) == 0


def disarm() -> None:
    """The end of the call ``arm`` armed: SIGINT only marks Python's signal again."""
    _state["depth"] -= 1
    if _state["depth"] == 0:
        _ARMED.value = 0  # (the flag stays up until ``interrupted`` or ``took``)


def took(exc: BaseException) -> bool:
    """Did ``exc`` come from a SIGINT handler run as a native call returned?  CPython
    may run the handler at any bytecode after the call, before ``interrupted`` does:
    the step runner asks here before it turns an exception into a ``MycError``."""
    if getattr(exc, "myc_from_signal", False):
        return True
    if _FLAG.value and threading.get_ident() == _MAIN:
        _FLAG.value = 0
        return True
    return False


def interrupted() -> bool:
    """After a native call bailed out: was it for a SIGINT?  Then the pending Python
    handlers run here (the default one raises ``KeyboardInterrupt``); False when none
    was pending, or a handler returned (the caller then goes on as for any bail-out:
    the step-by-step runner, where Python sees signals itself)."""
    if not _FLAG.value or threading.get_ident() != _MAIN:
        return False
    _FLAG.value = 0
    try:
        ctypes.pythonapi.PyErr_CheckSignals()
    except Exception as exc:  # the user's handler raised: not an error of the program
        try:
            exc.myc_from_signal = True  # (the step runner passes it on as it is)
        except AttributeError:
            pass
        raise
    return True
