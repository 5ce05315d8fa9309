"""Ctrl-C stops a compiled call that loops forever: native loops (the flag they poll),
loops stepped from Python, the evaluator -- and the user's SIGINT handler is kept."""

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="SIGINT polling: Linux")

_CHILD = """
import signal, sys, time
import numpy as np
import myc

def forever(x):
    while np.max(x) > 0.0:
        x = x + 1.0
    return x

f = myc.jit(forever, backend={backend!r})
x = np.ones({size})
if {backend!r} == "cpu":
    mode = "runs natively" if not {native_off} else "stepped"
    assert mode in myc.ir(forever, x, stage="kernels"), myc.ir(forever, x, stage="kernels")
f(-x)  # compiled (the loop runs zero times): the endless call below starts at once
{handler}
print("ready", flush=True)
try:
    f(x)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
except Custom:
    print("Custom", flush=True)
assert signal.getsignal(signal.SIGINT) is {expect}
print("handler kept", flush=True)
"""


def _interrupt(tmp_path, backend="cpu", size=8, native_off=False, handler="") -> str:
    custom = "class Custom(Exception): pass\n"
    if handler:
        custom += handler + "\nsignal.signal(signal.SIGINT, on_int)\n"
        expect = "on_int"
    else:
        expect = "signal.default_int_handler"
    code = _CHILD.format(backend=backend, size=size, native_off=native_off,
                         handler=custom, expect=expect)
    return _run_child(tmp_path, code, native_off)


def _run_child(tmp_path, code: str, native_off: bool = False) -> str:
    """Run ``code`` until it prints "ready", interrupt it 0.5 s later, its output."""
    child = tmp_path / "child.py"  # (myc reads functions' source from files)
    child.write_text(code)
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    if native_off:
        env["MYC_NO_NATIVE_LOOPS"] = "1"
    proc = subprocess.Popen([sys.executable, str(child)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # compiling may take a while on a busy machine
        assert line.strip() == "ready", line + proc.stderr.read()
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)  # "within a few seconds": generous
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out + err
    assert "handler kept" in out, out + err
    return out


def test_ctrl_c_stops_a_native_loop(tmp_path):
    assert "KeyboardInterrupt" in _interrupt(tmp_path)


def test_ctrl_c_stops_a_native_loop_of_big_kernels(tmp_path):
    assert "KeyboardInterrupt" in _interrupt(tmp_path, size=2_000_000)


def test_ctrl_c_stops_a_loop_stepped_from_python(tmp_path):
    assert "KeyboardInterrupt" in _interrupt(tmp_path, native_off=True)


def test_ctrl_c_stops_the_evaluator(tmp_path):
    assert "KeyboardInterrupt" in _interrupt(tmp_path, backend="interp")


def test_the_users_handler_runs_and_is_kept(tmp_path):
    handler = "def on_int(sig, frame):\n    raise Custom()"
    assert "Custom" in _interrupt(tmp_path, handler=handler)


_FIB = """
import numpy as np
import myc

def fib(x):
    if x < 2.0:
        return x
    return fib(x - 1.0) + fib(x - 2.0)

f = myc.jit(fib)
assert f(10.0) == 55.0
assert "runs natively" in myc.ir(fib, 10.0, stage="kernels").splitlines()[0]
print("ready", flush=True)
try:
    f(80.0)  # 10^16 calls on the machine stack
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
print("handler kept", flush=True)
"""


def test_ctrl_c_stops_native_recursion(tmp_path):
    assert "KeyboardInterrupt" in _run_child(tmp_path, _FIB)
