"""A small MLP loss with a data-dependent loop, compiled by myc.

Run:  python examples/mlp_loss.py
"""

import numpy as np

import myc


def mlp_loss(w1, b1, w2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2
    return np.mean((out - y) ** 2)


def newton_sqrt(a, tol=1e-12):
    """Data-dependent while loop: Newton's iteration for sqrt(a)."""
    x = a
    steps = 0
    while abs(x * x - a) > tol and steps < 100:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def main() -> None:
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 16)).astype(np.float32) * 0.3
    b1 = np.zeros(16, np.float32)
    w2 = rng.standard_normal((16, 1)).astype(np.float32) * 0.3
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True))

    loss = myc.jit(mlp_loss)
    print("mlp loss  (myc):   ", loss(w1, b1, w2, x, y))
    print("mlp loss  (python):", mlp_loss(w1, b1, w2, x, y))
    print("newton_sqrt(2.0):  ", myc.jit(newton_sqrt)(2.0))
    print()
    print(myc.ir(newton_sqrt, 2.0))


if __name__ == "__main__":
    main()
