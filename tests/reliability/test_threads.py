"""Threads calling compiled functions concurrently leave process-wide state as it was.

The evaluator raises Python's recursion limit while it runs; a per-call save/restore
raced between threads and left it at 20000 for good (then unrelated deep recursion can
overflow the C stack).  Now the first thread in saves it and the last one out restores it.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import myc
from myc.support.recursion import raised_recursion_limit
from tests.backends import BACKENDS


def countdown(n, x):
    if n <= 0:
        return x
    return countdown(n - 1, x + 1.0)


def loss(w, x):
    return np.sum(np.tanh(x * w) ** 2)


def run_threads(fn, n_threads: int = 16, rounds: int = 20) -> list[BaseException]:
    start = threading.Barrier(n_threads)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            start.wait()
            for _ in range(rounds):
                fn(i)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.parametrize("backend", BACKENDS)
def test_recursion_limit_restored_after_concurrent_calls(backend):
    before = sys.getrecursionlimit()
    f = myc.jit(countdown, backend=backend)
    g = myc.grad(myc.jit(loss, backend=backend))
    x = np.linspace(-1.0, 1.0, 7)

    def call(i: int) -> None:
        assert f(i % 5 + 1, 0.5) == 0.5 + (i % 5 + 1)
        np.testing.assert_allclose(g(0.3, x), myc.grad(loss)(0.3, x), rtol=1e-12)

    assert run_threads(call) == []
    assert sys.getrecursionlimit() == before


def test_interleaved_users_restore_on_last_exit():
    before = sys.getrecursionlimit()
    inside = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with raised_recursion_limit(before + 1000):
            inside.set()
            release.wait()

    t = threading.Thread(target=holder)
    t.start()
    inside.wait()
    with raised_recursion_limit(before + 1000):
        assert sys.getrecursionlimit() == before + 1000
    assert sys.getrecursionlimit() == before + 1000  # the holder is still in
    release.set()
    t.join()
    assert sys.getrecursionlimit() == before


def test_a_limit_changed_meanwhile_is_left_alone():
    before = sys.getrecursionlimit()
    try:
        with raised_recursion_limit(before + 1000):
            sys.setrecursionlimit(before + 5)  # the user's own change wins
        assert sys.getrecursionlimit() == before + 5
    finally:
        sys.setrecursionlimit(before)
