"""Threads parsing the same function at once never see a half-built graph.

The frontend enters a function's graph in its cache before lowering the body (a
recursive call must find it).  Another thread that asked for the same function then got
that graph unfinished ("graph countdown has no output" under load in
``test_threads.py``).  Parsing now holds one reentrant lock, so the other thread waits.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import myc
from myc.errors import MycSyntaxError
from myc.frontend import lower


def helper(x):
    return np.tanh(x) * 2.0


def outer(n, x):
    if n <= 0:
        return x
    return outer(n - 1, helper(x))


def test_a_second_thread_waits_for_the_graph_being_lowered(monkeypatch):
    for fn in (outer, helper):
        lower._GRAPHS.pop(fn, None)
    inside, second_done = threading.Event(), threading.Event()
    read = lower.read_function

    def read_slowly(fn):
        if fn is helper and threading.current_thread() is first:
            inside.set()  # ``outer``'s graph is in the cache, its body half lowered
            second_done.wait(0.5)  # before the fix, the second thread finished now
        return read(fn)

    monkeypatch.setattr(lower, "read_function", read_slowly)
    seen: dict[str, object] = {}

    def parse_first() -> None:
        seen["first"] = lower.parse(outer)

    def parse_second() -> None:
        inside.wait(10)
        g = lower.parse(outer)
        seen["second_built"] = not lower._still_building(g)
        seen["second"] = g
        second_done.set()

    first = threading.Thread(target=parse_first)
    second = threading.Thread(target=parse_second)
    first.start()
    second.start()
    first.join()
    second.join()
    assert inside.is_set()
    assert seen["second_built"], "the second thread got a half-built graph"
    assert seen["second"] is seen["first"]  # one graph per function


def ping(n, x):
    if n <= 0:
        return x
    y = pong(n - 1, x)
    with open("/dev/null"):  # unsupported: the parse of ping fails after pong's
        pass
    return y


def pong(n, x):
    return ping(n, x) * 2.0


def test_a_failed_parse_forgets_the_graphs_that_reached_it():
    """``pong``'s graph (complete) called ``ping``'s (never finished): it must not stay
    cached after ``ping`` failed, or the next parse of ``pong`` returns it."""
    for fn in (ping, pong):
        lower._GRAPHS.pop(fn, None)
    with pytest.raises(MycSyntaxError):
        lower.parse(ping)
    assert pong not in lower._GRAPHS
    with pytest.raises(MycSyntaxError):
        myc.jit(pong)(3, 1.0)


def test_threads_parsing_fresh_recursive_functions_agree():
    """Many threads asking for one function at once, repeated on fresh functions."""
    for _ in range(5):
        for fn in (outer, helper):
            lower._GRAPHS.pop(fn, None)
        start = threading.Barrier(8)
        graphs, errors = [], []

        def work() -> None:
            try:
                start.wait()
                g = lower.parse(outer)
                assert not lower._still_building(g)
                graphs.append(g)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert all(g is graphs[0] for g in graphs)
    assert myc.jit(outer)(3, 0.5) == outer(3, 0.5)
