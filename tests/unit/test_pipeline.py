"""The one stage sequence (``myc/pipeline.py``) and the backend registry
(``myc/backends/registry.py``), as ``docs/architecture.md`` describes them."""

import numpy as np
import pytest

import myc
from myc import pipeline
from myc.backends import registry
from myc.backends.cpu.runtime import compile_kernel
from myc.lower import target


def mlp_loss(w1, b1, w2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2
    return np.mean((out - y) ** 2)


def _mlp_args():
    f32 = np.float32
    rng = np.random.default_rng(0)
    return (rng.standard_normal((8, 16)).astype(f32), np.zeros(16, f32),
            rng.standard_normal((16, 1)).astype(f32), rng.standard_normal((32, 8)).astype(f32),
            np.ones((32, 1), f32))


def test_the_stages_in_order():
    assert pipeline.STAGES == ("parsed", "ad", "typed", "optimized", "fused", "kernels",
                               "target")
    with pytest.raises(myc.MycTypeError, match="stages: parsed, ad, typed, optimized, fused"):
        myc.ir(mlp_loss, *_mlp_args(), stage="grouped")


def test_the_fused_stage_shows_the_groups_lowering_compiles():
    args = _mlp_args()
    fused = myc.ir(mlp_loss, *args, stage="fused")
    kernels = myc.ir(mlp_loss, *args, stage="kernels")
    groups = [ln for ln in fused.splitlines() if ln.startswith("group")]
    compiled = [ln for ln in kernels.splitlines() if ln.lstrip().startswith("kernel ")]
    assert len(groups) == len(compiled) == 2
    assert "= tanh" in fused and "= mean" in fused
    assert fused.startswith(myc.ir(mlp_loss, *args, stage="optimized"))


def stacked(x):
    # (not native: cumsum is no native host step, so the program steps)
    return np.concatenate((np.exp(x), np.cumsum(x, axis=0)))


def test_a_lone_elementwise_group_is_said_to_stay_a_numpy_step():
    x = np.ones((600, 600))
    text = myc.ir(stacked, x, stage="fused")
    assert "group0[600, 600]: stores %2 -- a lone elementwise operation: a NumPy step " \
        "instead" in text
    assert "kernel " not in myc.ir(stacked, x, stage="kernels")


class Counting(registry.Cpu):
    """A backend a test registers: the CPU's kernels, counted; no native host code, so
    every kernel step goes through ``kernel_compiler``."""

    name = "counting"
    cache_tag = "|counting"
    native_host = False
    source_keyed = False

    def __init__(self):
        self.compiled = 0

    def kernel_compiler(self):
        def count(kernel):
            self.compiled += 1
            return compile_kernel(kernel)

        return count


def test_a_registered_backend_is_used_through_the_registry_alone(monkeypatch, tmp_path):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    b = Counting()
    monkeypatch.setitem(target._TARGETS, b.name, b)

    def f(x):
        return np.sum(np.tanh(x) * x + 1.0)

    x = np.linspace(-1.0, 1.0, 4096)
    fn = myc.jit(f, backend="counting")
    np.testing.assert_allclose(fn(x), f(x), rtol=1e-12)
    assert b.compiled >= 1
    assert fn.stats().backend == "counting"


def test_an_unknown_backend_lists_the_registered_ones():
    with pytest.raises(myc.MycValueError, match="unknown backend 'metal'; available: "
                       "interp, cpu, opencl, cuda, rocm"):
        myc.jit(mlp_loss, backend="metal")
    with pytest.raises(myc.MycValueError, match="available: interp, cpu, opencl, cuda, rocm"):
        registry.backend("metal")


def halve_until_small(x):
    while np.max(x) > 0.1:
        x = x * 0.5
    return np.sum(np.tanh(x))


def test_the_target_stage_on_cpu_is_each_kernels_llvm_ir():
    """``stage="target"`` on the cpu backend: the host program, then the optimized LLVM
    IR of every kernel, those of a loop's body included (the API promises LLVM IR)."""
    x = np.linspace(0.5, 2.0, 64).astype(np.float32)
    text = myc.ir(halve_until_small, x, stage="target", backend="cpu")
    assert text.startswith("host program halve_until_small")
    sections = text.split("; ---- kernel ")[1:]
    assert sections, "the loop body's kernel"
    for sec in sections:
        assert "target triple" in sec and "define " in sec
    assert any("_loop_" in sec.split()[0] for sec in sections)
