"""The programs of docs/loops.md: run ``python docs/examples/loops_examples.py``."""

import numpy as np

import myc


def settle(x0):
    """Iterate until the largest step is tiny: the trip count depends on the data."""
    x = x0
    i = 0
    while i < 1000:
        step = 0.05 * np.sin(x)
        x = x - step
        i += 1
        if np.max(np.abs(step)) < 1e-4:
            break
    return np.sum(x), i


def settle_loss(x0):
    return settle(x0)[0]


if __name__ == "__main__":
    x = np.linspace(4.0, 8.0, 8).astype(np.float32)
    print(myc.ir(settle, x, stage="optimized"))
    f = myc.jit(settle)
    for lo in (4.0, 5.0, 7.5):  # different trip counts, one compiled program
        x = np.linspace(lo, lo + 0.5, 8).astype(np.float32)
        print(f(x), settle(x))
    vg = myc.value_and_grad(settle_loss)
    print(myc.ir(vg, x, stage="optimized").splitlines()[0])
    v, g = vg(x)
    print(v, g[:3])
