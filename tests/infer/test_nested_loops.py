"""Loop nodes inside loop bodies: a loop the tracer keeps as a loop node inside another
loop's body (past ``control.NESTED_UNROLL_NODES``, or with a trip count the outer loop
decides: ``for j in range(i)``, a data-dependent ``while``) runs inline in the outer
loop's native function on the CPU (``loopgen.NativeLoop._loop_step``), taped inner loops
and their backward loops included.  Values against NumPy, gradients against central
differences, forward mode against both, on every backend; the failure paths (an index
out of range, a Python int past 64 bits, Ctrl-C) as CPython's."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycIndexError
from tests.backends import BACKENDS
from tests.cpu.test_native_plan import reloaded
from tests.cpu.test_native_program import programs_run
from tests.infer.test_loops import _loop_runners
from tests.runtime.test_interrupt import _run_child


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    # the structure is read from the specialized programs, which a disk-cache hit drops
    monkeypatch.setenv("MYC_CACHE_DIR", "off")


def double_loop(x, y):
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            acc = acc * 0.9 + x[i] * y[j]
    return acc


def inner_while(x):
    """A static outer ``for``, an inner ``while`` whose trip count depends on data."""
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        k = 0
        while v > 1.0 and k < 40:
            v = v * 0.5 + 0.1
            k += 1
        total = total + v * v + k * 0.25 + np.sin(v) * x[i]
    return total


def triangle(x):
    """The inner trip count is the outer counter."""
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            acc = acc + x[i] * x[j] * 0.01
        acc = acc * 0.99
    return acc


def nested_rnn(w, xs):
    """Array state in both loops: the inner loop's kernels, a taped array state."""
    h = np.zeros(4)
    loss = 0.0
    for i in range(xs.shape[0]):
        h = h * 0.5
        for j in range(xs.shape[1]):
            h = np.tanh(w @ h + xs[i, j])
        loss = loss + np.sum(h * h)
    return loss


def _args(name):
    rng = np.random.default_rng(7)
    if name == "double_loop":
        return (rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40))
    if name == "inner_while":
        return (rng.uniform(0.2, 30.0, 90),)
    if name == "triangle":
        return (rng.uniform(-1, 1, 40),)
    return (rng.standard_normal((4, 4)) * 0.4, rng.standard_normal((10, 30, 4)))


PROGRAMS = {"double_loop": double_loop, "inner_while": inner_while, "triangle": triangle,
            "nested_rnn": nested_rnn}


def _fd(f, args, k, d, eps=1e-6):
    up = [np.array(a, dtype=float) for a in args]
    dn = [np.array(a, dtype=float) for a in args]
    up[k] = up[k] + eps * d
    dn[k] = dn[k] - eps * d
    return (f(*up) - f(*dn)) / (2 * eps)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_nested_loop_nodes_run_natively(name):
    f = PROGRAMS[name]
    args = _args(name)
    for fn in (f, myc.grad(f)):
        text = myc.ir(fn, *args, stage="kernels")
        notes = [ln for ln in text.splitlines() if ln.startswith("# loop")]
        nested = [ln for ln in notes if "nested in the loop" in ln]
        assert nested, text.split("host program")[0]
        assert all("inline in the native function" in ln for ln in nested), notes
        assert not any("stepped from Python" in ln for ln in notes), notes
    jitted = myc.jit(f)
    jitted(*args)
    runners = _loop_runners(jitted)  # the program object: a native loop holding a loop
    assert any(r.native is not None and r.native.inner for r in runners)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_nested_loop_value_grad_jvp(name, backend):
    f = PROGRAMS[name]
    args = _args(name)
    want = f(*args)
    assert myc.jit(f, backend=backend)(*args) == pytest.approx(want, rel=1e-10)
    rng = np.random.default_rng(1)
    g = myc.grad(f, backend=backend)(*args)
    d = rng.standard_normal(np.shape(args[0]))
    fd = _fd(f, args, 0, d)
    assert np.sum(g * d) == pytest.approx(fd, rel=1e-5, abs=1e-7)
    tangents = (d,) + tuple(np.zeros_like(a) for a in args[1:])
    out, tan = myc.jvp(f, args, tangents, backend=backend)
    assert out == pytest.approx(want, rel=1e-10)
    assert tan == pytest.approx(fd, rel=1e-5, abs=1e-7)


def test_second_argument_gradient_of_a_nested_loop():
    x, y = _args("double_loop")
    g = myc.grad(double_loop, argnums=1)(x, y)
    d = np.random.default_rng(2).standard_normal(y.shape)
    assert np.sum(g * d) == pytest.approx(_fd(double_loop, (x, y), 1, d), rel=1e-5)


def test_a_reloaded_program_runs_its_nested_loops():
    """The buffers of the nested loops are in the plan (a disk-cache hit)."""
    args = _args("nested_rnn")
    progs = programs_run(myc.jit(myc.grad(nested_rnn)), *args)
    want = progs[-1].run(list(args))
    again = reloaded(progs[-1])
    got = again.run(list(args))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    loops = [st.fn for st in again.steps if st.kind == "loop"]
    assert loops and all(lp.native is not None for lp in loops)
    assert any(lp.native.extras for lp in loops)


def far_index(x):
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(i + 2):
            acc = acc + x[j] * 0.5
    return acc


def test_an_index_out_of_range_in_a_nested_loop_raises():
    x = np.linspace(0.0, 1.0, 30)
    with pytest.raises(IndexError):
        far_index(x)
    with pytest.raises(MycIndexError):
        myc.jit(far_index)(x)
    assert "nested in the loop" in myc.ir(far_index, x, stage="kernels")


def grows(x):
    """Python ints past 64 bits in the inner loop: the native code hands the call back
    to the host runner, which computes in Python's ints."""
    total = 0
    for i in range(x.shape[0]):
        k = int(x[i])
        j = 0
        while j < i:
            k = k * 3
            j += 1
        total = total + k
    return total


def test_a_python_int_past_64_bits_in_a_nested_loop():
    x = np.ones(60)
    for n in (20, 60):
        got = myc.jit(grows)(x[:n])
        assert got == grows(x[:n])  # (3**59 is past 2**63 at n = 60)
    assert "nested in the loop" in myc.ir(grows, x, stage="kernels")


_FOREVER = """
import numpy as np
import myc

def forever(x):
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        while v > 0.0:
            v = v + 1.0
        total = total + v
    return total

x = np.ones(300)
text = myc.ir(forever, x, stage="kernels")
assert "inline in the native function" in text, text
f = myc.jit(forever)
assert f(-x) == -300.0  # compiled (the inner loops exit at once)
print("ready", flush=True)
try:
    f(x)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
print("handler kept", flush=True)
"""


def test_ctrl_c_stops_a_nested_native_loop(tmp_path):
    assert "KeyboardInterrupt" in _run_child(tmp_path, _FOREVER)


def rows_of_lists(x):
    """An inner loop counted by the outer counter that grows a list cannot be a loop
    node: the outer loop unrolls instead (its counter, then the count, static)."""
    total = 0.0
    for i in range(x.shape[0]):
        parts = []
        for j in range(i):
            parts.append(x[j] * x[i])
        total = total + sum(parts) * 0.5
    return total


def counted_by_data(x, n):
    acc = 0.0
    for j in range(int(n[0])):
        acc = acc + x[j]
    return acc


def test_loops_counted_at_run_time_that_cannot_be_loop_nodes():
    x = np.linspace(-1.0, 1.0, 40)
    assert myc.jit(rows_of_lists)(x) == pytest.approx(rows_of_lists(x), rel=1e-12)
    n = np.array([7])
    assert myc.jit(counted_by_data)(x, n) == pytest.approx(counted_by_data(x, n))


def tanh_nest(x):
    for i in range(30):
        for j in range(40):
            x = np.tanh(x * 0.9 + 0.1)
        x = x * 1.01
    return np.sum(x * x)


def test_an_aot_library_runs_nested_loop_nodes(tmp_path):
    """AOT lowers nested loop nodes itself (``lower/planned_loops.py``): its library and
    the JIT's native nested loops agree, value and gradient."""
    from tests.aot.test_aot import check_against_jit

    x = np.linspace(-1.0, 1.0, 8)
    assert myc.ir(tanh_nest, x, stage="optimized").count("= loop(") >= 2
    assert "nested in the loop" in myc.ir(tanh_nest, x, stage="kernels")
    check_against_jit(tmp_path, tanh_nest, "f64[8]", [x], rtol=1e-10)
    check_against_jit(tmp_path, myc.value_and_grad(tanh_nest), "f64[8]", [x], rtol=1e-9,
                      name="vg")
