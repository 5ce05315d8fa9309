"""Random chains of row reductions and elementwise work (softmax-, norm- and
logsumexp-like), big enough to be fused, compiled and differentiated: the CPU backend
against the reference evaluator, value and gradient."""

from __future__ import annotations

import importlib.util
import itertools
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import myc

# each step maps (t, x) -> a new t of x's shape; r(.) stands for a row reduction
STEPS = [
    "t - np.max(t, axis=-1, keepdims=True)",
    "np.exp(t - np.max(t, axis=-1, keepdims=True))",
    "t / (1.0 + np.sum(t * t, axis=-1, keepdims=True))",
    "t - np.mean(t, axis=-1, keepdims=True)",
    "t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + 1e-3)",
    "np.tanh(t) * np.min(x, axis=-1, keepdims=True)",
    "t * x + np.sum(x, axis=-1, keepdims=True) * 0.01",
    "np.log(np.sum(np.exp(t - np.max(t, axis=-1, keepdims=True)), axis=-1, keepdims=True)) + t",
    "np.sin(t) + np.max(np.cos(t), axis=-1, keepdims=True)",
    "t * 0.5 - np.max(t, axis=0, keepdims=True)",
]
TAILS = ["np.sum(t * w)", "np.sum(np.max(t, axis=-1, keepdims=True) * w)", "np.mean(t) + np.sum(t * w)"]
SHAPES = [(24, 40), (3, 9, 31), (300, 5), (2, 260)]


_DIR = Path(tempfile.mkdtemp(prefix="myc_rowfusion_"))
_count = itertools.count()


def _build(steps: list[int], tail: int):
    """The program as a function of a module file (myc reads functions' source)."""
    body = "\n".join(f"    t = {STEPS[i]}" for i in steps)
    src = f"import numpy as np\n\n\ndef f(x, w):\n    t = x\n{body}\n    return {TAILS[tail]}\n"
    name = f"_myc_rowfusion_{next(_count)}"
    path = _DIR / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f, src


@settings(max_examples=30, deadline=None, derandomize=True)
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=4),
       tail=st.integers(0, len(TAILS) - 1), shape=st.sampled_from(SHAPES),
       seed=st.integers(0, 2**16))
def test_random_row_programs(steps, tail, shape, seed):
    f, src = _build(steps, tail)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(shape)
    v_cpu, g_cpu = myc.jit(myc.value_and_grad(f))(x, w)
    v_ref, g_ref = myc.jit(myc.value_and_grad(f), backend="interp")(x, w)
    scale = max(1.0, float(np.abs(g_ref).max()))
    assert np.isclose(v_cpu, v_ref, rtol=1e-9, atol=1e-9 * max(1.0, abs(v_ref))), src
    np.testing.assert_allclose(g_cpu, g_ref, rtol=1e-8, atol=1e-9 * scale, err_msg=src)
    assert np.isclose(myc.jit(f)(x, w), f(x, w), rtol=1e-9, atol=1e-9), src
