"""Run by ``test_gpu.py`` in a subprocess on a real GPU (a crash inside cuBLAS cannot
take the test run with it): 2-D float32/float64 products, transposed operands among
them, called on the same CuPy arrays until a CUDA graph is captured and replayed
(``myc.backends.gpu.capture_gemm``); checked against NumPy.  Prints the graph stats
and the products' largest relative error; exit 0 when every value was right."""

from __future__ import annotations

import json
import sys

import cupy
import numpy as np

import myc
from myc.backends.gpu import graphs


def products(x, w, v, u):
    return x @ w, x.T @ x, x @ v.T, np.dot(x.T, u.T)


def main() -> int:
    worst = 0.0
    for dtype, rtol in ((np.float32, 1e-4), (np.float64, 1e-12)):
        rng = np.random.default_rng(0)
        host = [rng.standard_normal(s).astype(dtype)
                for s in ((64, 32), (32, 16), (8, 32), (16, 64))]
        x, w, v, u = host
        want = [x @ w, x.T @ x, x @ v.T, x.T @ u.T]
        dev = [cupy.asarray(h) for h in host]
        f = myc.jit(products, backend="cuda")
        for _ in range(5):
            got = [g.get() for g in f(*dev)]
            for g, r in zip(got, want, strict=True):
                err = float(np.max(np.abs(g - r)) / np.max(np.abs(r)))
                worst = max(worst, err)
                if not err <= rtol * 10:
                    print(json.dumps({"dtype": str(np.dtype(dtype)), "error": err}))
                    return 1
    stats = graphs.graph_stats()
    print(json.dumps({"stats": stats, "worst relative error": worst}))
    return 0 if stats.get("captured") == 2 and stats.get("replayed", 0) >= 4 else 2


if __name__ == "__main__":
    sys.exit(main())
