"""The garbage collector made rarer while a program compiles (myc/support/gcpause.py):
raised during the compile, the caller's settings back after it (also when it fails),
a collector the user disabled or tuned left alone."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import myc
from myc.support import gcpause


def test_threshold_raised_while_compiling_and_restored(monkeypatch):
    from myc import pipeline

    seen = []
    real = pipeline.compile

    def spy(*args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compile", spy)
    before = gc.get_threshold()

    @myc.jit
    def f(x):
        return np.sin(x) * 2.0

    f(np.ones(3))
    assert seen and set(seen) == {gcpause.THRESHOLD0}
    assert gc.get_threshold() == before
    with gcpause.compiling():
        with gcpause.compiling():  # reentrant: the inner end restores nothing
            pass
        assert gc.get_threshold()[0] == gcpause.THRESHOLD0
    assert gc.get_threshold() == before


def test_restored_when_the_compile_fails():
    before = gc.get_threshold()

    @myc.jit
    def bad(x):
        return x.no_such_method()

    with pytest.raises(myc.MycError):
        bad(np.ones(3))
    assert gc.get_threshold() == before


def test_a_users_settings_are_left_alone():
    before = gc.get_threshold()
    try:
        gc.set_threshold(500_000, 10, 10)
        with gcpause.compiling():
            assert gc.get_threshold()[0] == 500_000
        gc.disable()
        with gcpause.compiling():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.set_threshold(*before)


def test_threads_compiling_together_restore_once():
    before = gc.get_threshold()
    inside = threading.Barrier(2)

    def compile_one():
        with gcpause.compiling():
            inside.wait(timeout=10)

    ts = [threading.Thread(target=compile_one) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert gc.get_threshold() == before
