"""The mini-batch training loop of tests/runtime/minibatch_net.py at MNIST's shapes:
40 gradient steps (batch 256 of 2,048 float64 images, a 784-200-100-10 tanh MLP),
a fresh disk cache, so every program the loop needs is compiled in the loop.  Prints
the loop's wall and CPU time, the programs compiled, and a single call's steady time
(min over repeats of one step value, CPU time).

    python -m benchmarks.minibatch_loop [--steps 40] [--backend cpu]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--repeats", type=int, default=20)
    a = ap.parse_args()
    os.environ["MYC_CACHE_DIR"] = tempfile.mkdtemp(prefix="myc-minibatch-")
    import myc
    from tests.runtime.minibatch_net import build, train

    loss, layers = build(2048, 784, (200, 100, 10), 256)
    gradient = myc.grad(loss, backend=a.backend)
    w, c = time.perf_counter(), time.process_time()
    train(gradient, layers, a.steps)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    st = gradient.stats()
    print(f"{a.steps} steps: wall {wall:.2f} s, cpu {cpu:.2f} s, "
          f"programs compiled {st.compiles}, evaluator calls {st.evaluator_calls}")
    best = float("inf")
    for _ in range(a.repeats):
        c = time.process_time()
        gradient(layers, 3)
        best = min(best, time.process_time() - c)
    print(f"single call (step 3), steady: {best * 1e3:.2f} ms cpu (min of {a.repeats})")


if __name__ == "__main__":
    main()
