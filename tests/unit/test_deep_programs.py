"""No stage recurses on the program's depth: a straight chain of elementwise operations
compiles -- parse, AD, tracing, the passes, fusion, kernel code generation, printing,
fingerprinting, verifying -- under a recursion limit far below the chain's length.
(A 20k-step chain once hit Python's limit in the kernel code generator.)"""

import importlib.util
import inspect
import sys

import numpy as np

import myc
from myc.frontend.fingerprint import fingerprint
from myc.ir.printer import print_graph
from myc.ir.verify import verify

STEPS = 700  # 1,400 operations in one chain


def _chain_module(tmp_path):
    body = "".join("    x = x * 0.999 + 0.001\n" for _ in range(STEPS))
    src = (f"import numpy as np\n\n\ndef chain(x):\n{body}    return x\n\n\n"
           "def chain_loss(x):\n    return np.sum(chain(x) * chain(x))\n")
    path = tmp_path / "deep_chain.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("deep_chain", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _reference(x):
    for _ in range(STEPS):
        x = x * 0.999 + 0.001
    return x


def test_a_long_chain_compiles_under_a_low_recursion_limit(tmp_path):
    mod = _chain_module(tmp_path)
    x = np.linspace(0.0, 1.0, 1024)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 400)  # well below the chain's 1,400
    try:
        y = myc.jit(mod.chain)(x)
        g = myc.grad(mod.chain_loss)(x)
        graph = myc.grad(mod.chain_loss).__myc_graph__()
        verify(graph)
        assert fingerprint(graph)
        assert len(print_graph(graph)) > STEPS
        assert "mul" in myc.ir(mod.chain, x, stage="optimized")
    finally:
        sys.setrecursionlimit(limit)
    np.testing.assert_allclose(y, _reference(x), rtol=1e-12)
    ref = _reference(x)
    np.testing.assert_allclose(g, 2.0 * ref * 0.999 ** STEPS, rtol=1e-9)
