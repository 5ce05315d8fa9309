"""Host arrays of other libraries (``__dlpack__`` in host memory: a torch CPU tensor, a
JAX CPU array) are arguments like NumPy arrays: read through ``np.from_dlpack`` without a
copy, never written, results NumPy; an array on a GPU is a clear error on the cpu
backend (the GPU backends take those)."""

from __future__ import annotations

import numpy as np
import pytest

import myc


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


class FakeGpuArray:
    """An array that says it lives on a CUDA device (DLPack device type 2)."""

    def __dlpack__(self, stream=None):
        raise AssertionError("must not be read")

    def __dlpack_device__(self):
        return (2, 0)


def test_a_torch_cpu_tensor_is_an_argument():
    torch = pytest.importorskip("torch")
    w = torch.linspace(-1, 1, 12, dtype=torch.float32).reshape(4, 3).requires_grad_(True)
    x = torch.ones(5, 4, dtype=torch.float32)
    before = w.detach().clone()
    v, g = myc.value_and_grad(loss)(w, x)
    wn, xn = w.detach().numpy(), x.numpy()
    v2, g2 = myc.value_and_grad(loss)(wn, xn)
    assert isinstance(g, np.ndarray) and g.dtype == np.float32
    np.testing.assert_allclose(v, v2, rtol=1e-6)
    np.testing.assert_allclose(g, g2, rtol=1e-6)
    assert torch.equal(w.detach(), before)


def test_a_jax_cpu_array_is_an_argument():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.linspace(0.0, 1.0, 6, dtype=jnp.float32)
    got = myc.jit(_sin_sum)(x)
    np.testing.assert_allclose(got, np.sum(np.sin(np.asarray(x))), rtol=1e-6)


def _sin_sum(x):
    return np.sum(np.sin(x))


def test_a_gpu_array_on_the_cpu_backend_is_a_clear_error():
    with pytest.raises(myc.MycTypeError, match="on a device"):
        myc.jit(_sin_sum)(FakeGpuArray())
