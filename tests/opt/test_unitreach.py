"""``UnitReach`` answers reachability questions exactly while units merge: checked
against a plain graph search on random DAGs and random valid merges."""

import random

from myc.opt.unitreach import UnitReach, bits


def _paths(succ: dict[int, set[int]], live: list[int]) -> dict[int, set[int]]:
    """Units reachable from each unit (a plain search)."""
    out = {}
    for u in live:
        seen, stack = set(), list(succ[u])
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(succ[v])
        out[u] = seen
    return out


def test_bits():
    assert bits(0) == [] and bits(0b1011) == [0, 1, 3] and bits(1 << 300) == [300]


def test_reachability_stays_exact_under_merges():
    rng = random.Random(0)
    for _ in range(40):
        n = rng.randint(2, 30)
        succ = [set() for _ in range(n)]
        for u in range(n):
            for v in range(u + 1, n):
                if rng.random() < 0.15:
                    succ[u].add(v)
        ur = UnitReach(n, [set(s) for s in succ])
        graph = {u: set(s) for u, s in enumerate(succ)}  # the merged graph, by hand
        live = list(range(n))
        for _ in range(3 * n):
            a, b = rng.sample(live, 2) if len(live) > 1 else (None, None)
            if a is None:
                break
            reach = _paths(graph, live)
            indirect = any(b in reach[s] for s in graph[a] if s != b) or \
                any(a in reach[s] for s in graph[b] if s != a)
            assert ur.indirect(a, b) == indirect
            assert ur.direct(a, b) == (b in graph[a] or a in graph[b])
            if indirect:
                continue
            ur.merge(a, b)
            graph[a] = (graph[a] | graph[b]) - {a, b}
            for u in live:
                if b in graph[u]:
                    graph[u].discard(b)
                    if u != a:
                        graph[u].add(a)
            live.remove(b)
            del graph[b]
            reach = _paths(graph, live)
            for u in live:
                assert {v for v in live if ur.desc[u] & ur.mask[v]} == reach[u]
