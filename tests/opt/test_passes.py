"""Structural tests of specialization and the optimizer: what the graphs look like."""

from __future__ import annotations

from collections import Counter

import numpy as np

import myc
from myc.ad.grad import grad_graph
from myc.ad.reverse import reverse_transform
from myc.frontend.lower import parse
from myc.infer.trace import trace
from myc.ir.manager import Manager
from myc.ir.nodes import Constant, Graph
from myc.ir.verify import verify
from myc.opt.fusion import fuse
from myc.opt.passes import optimize
from myc.opt.rewrite import prim_of


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def sum_gelu(x):
    return np.sum(gelu(x))


def mlp_loss(w1, b1, w2, b2, x, labels):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    n = x.shape[0]
    return np.mean(lse - logits[np.arange(n), labels])


def log_one_plus(x):
    return np.sum(np.log(1 + x * x))


def expm1_pattern(x):
    return np.exp(x) - 1


def cse_twice(x):
    return np.exp(x) * 2 + np.exp(x)


def identities(x):
    y = x * 1 + 0
    return -(-y) / 1


def loop_fn(x, n):
    i = 0
    while i < n:
        x = np.sin(x)
        i += 1
    return np.sum(x)


def typed_optimized(graph, args):
    g, _ = trace(graph, args)
    optimize(g, verify_each=True)
    verify(g)
    return g


def ops(g: Graph) -> Counter:
    return Counter(prim_of(n).name for n in Manager(g).owned[g] if prim_of(n))


def graph_constants(g: Graph) -> list:
    return [c for c in Manager(g).constants[g] if isinstance(c.value, Graph)]


def test_grad_of_sum_gelu_is_closure_free_and_fuses_into_at_most_two_groups():
    x = np.linspace(-2, 2, 1 << 14).astype(np.float32)
    g = typed_optimized(grad_graph(parse(sum_gelu)), [x])
    assert len(Manager(g).graphs) == 1 and not graph_constants(g)
    groups = fuse(g)
    assert 1 <= len(groups) <= 2, groups
    assert ops(g)["tanh"] == 1  # forward tanh reused by the adjoint


def test_value_and_grad_of_sum_gelu_is_one_kernel_with_a_reduction_and_a_store():
    x = np.linspace(-2, 2, 1 << 14).astype(np.float32)
    g = typed_optimized(grad_graph(parse(sum_gelu), 0, True), [x])
    groups = fuse(g)
    assert len(groups) == 1
    names = [prim_of(m).name for m in groups[0].members]
    assert "sum" in names and len(groups[0].outputs) == 2


def test_mlp_value_and_grad_leaves_matmuls_and_a_handful_of_fused_groups():
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((64, 32)).astype(np.float32), np.zeros(32, np.float32),
            rng.standard_normal((32, 16)).astype(np.float32), np.zeros(16, np.float32),
            rng.standard_normal((512, 64)).astype(np.float32), rng.integers(0, 16, 512)]
    g = typed_optimized(grad_graph(parse(mlp_loss), (0, 1, 2, 3), True), args)
    assert not graph_constants(g)
    counts = ops(g)
    assert counts["matmul"] == 5  # forward 2, backward 3 (no gradient for x)
    groups = fuse(g)
    assert len(groups) <= 10, groups
    fused = {m.id for grp in groups for m in grp.members}
    loose = [prim_of(n).name for n in Manager(g).owned[g]
             if prim_of(n) and n.id not in fused]
    assert set(loose) <= {"matmul", "mT", "getitem", "getitem_grad", "make_tuple", "mean",
                          "truediv", "cast_grad", "sum", "expand_reduced",
                          "reshape"}, loose


def test_log_one_plus_becomes_log1p():
    g = typed_optimized(parse(log_one_plus), [np.ones(8)])
    assert ops(g)["log1p"] == 1 and ops(g)["log"] == 0
    text = myc.ir(log_one_plus, np.ones(8), stage="optimized")
    assert "log1p" in text


def test_exp_minus_one_becomes_expm1():
    g = typed_optimized(parse(expm1_pattern), [np.ones(8)])
    assert ops(g)["expm1"] == 1 and ops(g)["exp"] == 0


def test_logsumexp_is_stabilized():
    def lse(x):
        return np.log(np.sum(np.exp(x), axis=1))

    g = typed_optimized(parse(lse), [np.ones((2, 3))])
    assert ops(g)["max"] >= 1
    out = myc.jit(lse)(np.array([[1000.0, 1000.0, 0.0]]))
    np.testing.assert_allclose(out, [1000.0 + np.log(2.0)])


def test_cse_merges_identical_subexpressions():
    g = typed_optimized(parse(cse_twice), [np.ones(8)])
    assert ops(g)["exp"] == 1


def test_algebraic_identities_vanish():
    g = typed_optimized(parse(identities), [np.ones(8)])
    assert not ops(g) - Counter({"make_tuple": 1}), ops(g)


def test_a_loops_adjoint_is_a_loop():
    jg = reverse_transform(parse(loop_fn))
    mng = Manager(jg)
    headers = [h for h in mng.graphs if h.name.startswith("J:") and h.kind == "loop_header"]
    assert headers
    header = headers[0]
    # the adjoint of the body tail-calls the adjoint of the header: still a loop
    callers = [g for g in mng.graphs if g.output is not None and g.output.is_apply
               and isinstance(g.output.inputs[0], Constant) and g.output.inputs[0].value is header]
    assert any(g.kind == "loop_body" for g in callers)


def test_data_dependent_loop_gradient_runs_and_specialized_programs_are_cached():
    f = myc.jit(loop_fn)
    x = np.linspace(0.1, 1.0, 5)
    np.testing.assert_allclose(f(x, 3), np.sum(np.sin(np.sin(np.sin(x)))))
    sf = f._executable
    f(x, 3)
    assert len(sf.cache) == 1  # the same signature hits the cache
    f(np.ones(3), 3)
    assert len(sf.cache) == 2  # a new shape re-specializes


def lse_loss(x):
    m = np.max(x, axis=1, keepdims=True)
    s = np.sum(np.exp(x - m), axis=1)
    return np.sum(np.log(s) + m[:, 0])


def test_rematerialized_values_are_not_also_stored():
    """exp(x - m) is recomputed by the backward kernel; no kernel may still write it out
    (found in W7: three dead 32 MB stores per call)."""
    x = np.ones((512, 256), np.float32)
    text = myc.ir(myc.value_and_grad(lse_loss), x, stage="kernels")
    big_stores = [ln for ln in text.splitlines() if "= store" in ln and "[512, 256]" in ln]
    assert len(big_stores) == 1, big_stores  # the gradient only
    v, g = myc.value_and_grad(lse_loss)(x)
    np.testing.assert_allclose(g, np.full_like(x, 1.0 / 256), rtol=1e-5)


def nested_wheres(x):
    c = np.sum(x) > 0.0  # one condition, decided twice
    inner = np.where(c, np.sin(x), 2.0 * x)
    return np.where(c, inner, np.where(c, 4.0 * x, np.cos(x)))


def test_a_choice_nested_in_a_choice_on_the_same_condition_is_decided():
    """``where(c, where(c, a, b), d)`` -> ``where(c, a, d)`` (a gradient's backward loop
    masks each cotangent by the same path at every step: chains of one select)."""
    g = typed_optimized(parse(nested_wheres), [np.ones(8)])
    assert ops(g)["where"] == 1 and not ops(g)["mul"], ops(g)
    f = myc.jit(nested_wheres)
    for x in (np.linspace(-1.0, 2.0, 8), np.linspace(-3.0, 0.5, 8)):
        np.testing.assert_allclose(f(x), nested_wheres(x), rtol=1e-15)
