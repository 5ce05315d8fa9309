"""The finer kind of each host-program step (``Step.op``) is decided by the lowering, and
the native generator's checks and emitters are keyed on it (``loopgen._CHECKS`` and
``_EMITS``), not on primitive names."""

from __future__ import annotations

import pickle

import numpy as np

import myc
from myc.backends.cpu import loopgen
from myc.lower.hostplan import Value
from myc.lower.placement import ARRAY_KINDS, SCRATCH, Exit, Placement, Shared, State
from myc.lower.program import once_view
from myc.lower.step_ops import OP_KINDS, fill_value, op_kind, primitives_of
from myc.lower.target import target
from myc.prims import REGISTRY
from tests.cpu.test_native_program import programs_run
from tests.infer.test_loops import safe_inverse


def products(a, b, idx):
    c = a @ b.T
    r = c[idx]
    s = np.concatenate([r, r], axis=0)
    return np.reshape(np.transpose(s), (-1,))


def gathered_sum(a, b):
    return np.sum((a @ b.T)[np.array([0, 2])])


def _kinds(prog) -> list[tuple[str, str]]:
    return [(st.op, st.name) for st in prog.steps if st.kind == "op"]


def test_lowering_names_each_op_steps_kind():
    a, b, idx = np.ones((4, 3)), np.ones((5, 3)), np.array([0, 2])
    (prog,) = programs_run(myc.jit(products), a, b, idx)
    kinds = _kinds(prog)
    assert ("gemm", "matmul") in kinds and ("index", "getitem") in kinds
    assert ("tuple", "make_tuple") in kinds and ("concatenate", "concatenate") in kinds
    assert ("transpose", "transpose") in kinds and ("alias", "reshape") in kinds
    assert all(op in OP_KINDS for op, _ in kinds)
    assert prog.native is not None  # every kind here has its emitter
    np.testing.assert_allclose(myc.jit(products)(a, b, idx), products(a, b, idx))
    (gprog,) = programs_run(myc.grad(gathered_sum), a, b)
    assert ("scatter_add", "getitem_grad") in _kinds(gprog)
    assert gprog.native is not None
    # kept with the program in the disk cache
    again = pickle.loads(pickle.dumps(prog))
    assert _kinds(again) == kinds


def test_a_guarded_step_has_its_operations_kind():
    (prog,) = programs_run(myc.jit(safe_inverse), np.array([1.0, 3.0]))
    (st,) = [st for st in prog.steps if st.guarded]
    assert (st.op, st.name) == ("scalar", "truediv")  # guarded(path, truediv, ...)
    assert all(not st.guarded for st in prog.steps if st.kind != "op")


def test_every_operation_the_generator_covers_has_a_kind_it_dispatches_on():
    """A primitive native code covers is either an array step with its own check and
    emitter, or a step on numbers the scalar emitter computes by its name."""
    array_steps = primitives_of(ARRAY_KINDS)
    assert {"getitem", "getitem_grad", "zeros", "ones_like", "concatenate"} <= array_steps
    for name in array_steps:
        kind = op_kind(name)
        assert kind in loopgen._CHECKS and kind in loopgen._EMITS, name
    scalar_kinds = {"scalar", "select", "tape_get", "index", "arg_extreme"}
    for name in loopgen._SCALAR:
        assert op_kind(name) in scalar_kinds, name
    assert set(loopgen._CHECKS) <= set(OP_KINDS) and set(loopgen._EMITS) <= set(OP_KINDS)


def test_each_primitive_declares_a_known_step_kind():
    """The kind of a primitive's steps is declared with the primitive (``step_kind``):
    one of the host program's kinds; fusible primitives are steps on numbers unless
    declared otherwise, and every fill says what it writes."""
    for name, p in REGISTRY.items():
        assert p.step_kind in OP_KINDS, name
        assert op_kind(name) == p.step_kind
    assert op_kind("add") == "scalar" and op_kind("to_int") == "scalar"
    assert op_kind("matmul") == "gemm" and op_kind("argsort") == "host"
    assert {n: fill_value(n) for n in primitives_of({"fill"})} == {
        "zeros": 0, "zeros_like": 0, "ones": 1, "ones_like": 1}


def test_the_cpu_backend_declares_the_kinds_it_emits():
    kinds = target("cpu").native_kinds()
    assert kinds == loopgen.NATIVE_KINDS and "host" not in kinds
    assert kinds == set(OP_KINDS) - {"host"}  # every kind but NumPy-only steps
    assert not target("interp").native_kinds()


def centered(x, w):
    m = np.mean(x, axis=1)  # a mean: its kernel output is divided after the call
    return np.sum(np.tanh(x @ w) * m[:, None]), np.mean(x)


def test_kernel_steps_are_hostplan_kernel_ops():
    """A JIT kernel step carries the same data an AOT library's kernel launch is
    (``hostplan.KernelOp``: the kernel, its buffers, each output's divisor), made by the
    lowering and read by the native generator; kept with the program in the disk cache."""
    from myc.lower.hostplan import KernelOp

    x, w = np.arange(12.0).reshape(3, 4), np.ones((4, 2))
    (prog,) = programs_run(myc.jit(centered), x, w)
    kernels = [st for st in prog.steps if st.kind == "kernel"]
    assert kernels and all(isinstance(st.host, KernelOp) for st in kernels)
    assert all(st.host is None for st in prog.steps
               if st.kind != "kernel" and st.op not in ("gemm", "gemm_acc"))
    divs = []
    for st in kernels:
        op = st.host
        assert op.kernel is st.kernel
        assert [(v.dtype, v.shape) for v in op.outputs] == [
            (b.dtype, b.shape) for b in st.kernel.output_buffers()]
        assert [(v.dtype, v.shape) for v in op.inputs] == [
            (b.dtype, b.shape) for b in st.kernel.inputs]
        assert len(op.divide_by) == len(st.outputs)
        divs += [d for d in op.divide_by if d is not None]
    assert sorted(divs) == [4, 12]  # the row means' and the whole mean's counts
    assert prog.native is not None
    got = myc.jit(centered)(x, w)
    want = centered(x, w)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    again = pickle.loads(pickle.dumps(prog))
    assert [st.host.divide_by for st in again.steps if st.kind == "kernel"] == [
        st.host.divide_by for st in kernels]


def scaled(x, w):
    s = np.sum(x * x)  # a kernel's output, read by the kernel after the product
    return np.sum(np.tanh(x @ w) * s)


def test_slots_are_hostplan_values():
    """Every slot holding data is one ``hostplan.Value`` (``HostProgram.values``), the
    object its kernel steps' data write and read -- so a kernel's output read by a later
    step is the same value in both, as in an AOT library's plan -- kept so through the
    disk cache's pickling."""
    from myc.lower.hostplan import Value
    from myc.prims.abstract import AArray, AScalar

    x, w = np.arange(12.0).reshape(3, 4), np.ones((4, 2))
    (prog,) = programs_run(myc.jit(scaled), x, w)
    for p in [prog, pickle.loads(pickle.dumps(prog))]:
        assert len(p.values) == p.nslots == len(p.specs)
        for a, v in zip(p.specs, p.values, strict=True):
            if isinstance(a, (AArray, AScalar)):
                assert isinstance(v, Value)
                assert (v.dtype, v.shape) == (str(a.dtype), tuple(a.shape))
            else:
                assert v is None
        written = {}
        shared = 0
        for st in p.steps:
            if st.kind != "kernel":
                continue
            for (is_slot, s), v in zip(st.inputs, st.host.inputs, strict=True):
                if is_slot and v is p.values[s]:
                    shared += s in written
                elif is_slot:  # (only where the kernel holds it otherwise)
                    assert (v.dtype, v.shape) != (p.values[s].dtype, p.values[s].shape)
            for s, v in zip(st.outputs, st.host.outputs, strict=True):
                assert v is p.values[s]
                written[s] = v
        assert shared  # the sum: one kernel's output, the next one's input
    np.testing.assert_allclose(myc.jit(scaled)(x, w), scaled(x, w))


def permuted(x, y):
    return np.sum(np.transpose(x, (2, 0, 1)) * 2.0) + np.sum(x.T @ y) + np.sum(
        np.transpose(x, (0, -1, -2)) * 3.0)


def test_transpose_steps_are_hostplan_permutes():
    """A JIT transpose step carries the ``hostplan.Permute`` an AOT library's transpose
    is (its source and result slots' values and the permutation, negative axes counted
    from the end), which the native generator reads for its strided copy or a GEMM's
    transpose flag."""
    from myc.lower.hostplan import Permute

    x, y = np.arange(24.0).reshape(2, 3, 4), np.ones((2, 5))
    (prog,) = programs_run(myc.jit(permuted), x, y)
    ops = [st for st in prog.steps if st.op in ("transpose", "matrix_transpose")]
    assert ops and all(isinstance(st.host, Permute) for st in ops)
    assert all(st.host.src is prog.values[st.inputs[0][1]] and
               st.host.out is prog.values[st.output] for st in ops)
    perms = sorted(st.host.perm for st in ops)
    assert perms == [(0, 2, 1), (2, 0, 1), (2, 1, 0)]
    assert prog.native is not None
    np.testing.assert_allclose(myc.jit(permuted)(x, y), permuted(x, y))


def summed_products(a, b, c, d):
    return (a @ b.T + c @ d) * 2.0


def halved(x):
    while np.sum(x) > 1.0:
        x = x * 0.5
    return x


def test_buffers_are_placed_in_lower_by_value():
    """Where each step result goes is ``lower/placement``'s, keyed by the result's
    ``hostplan.Value``: the ``b.T`` a product reads is a transpose flag (never made),
    the sum of products accumulates into the first product's buffer (nothing else reads
    it), a run-once program's result is written into the array handed back, and a
    loop's kernel writes the next state into the state's free buffer."""
    a, b, c, d = np.ones((4, 3)), np.ones((5, 3)), np.ones((4, 2)), np.ones((2, 5))
    (prog,) = programs_run(myc.jit(summed_products), a, b, c, d)
    pl = Placement(once_view(prog), 0).place(set(), set(), False)
    (mt,) = [st for st in prog.steps if st.op == "transpose"]
    (gemm,) = [st for st in prog.steps if st.op == "gemm"]
    (acc,) = [st for st in prog.steps if st.op == "gemm_acc"]
    (kernel,) = [st for st in prog.steps if st.kind == "kernel"]
    assert pl.flags == {mt.output: mt.inputs[0]} and not pl.copied
    assert prog.values[mt.output] not in pl.buffers
    assert pl.buffers[prog.values[gemm.output]] == SCRATCH
    assert pl.buffers[prog.values[acc.output]] == Shared(prog.values[gemm.output])
    assert pl.buffers[kernel.host.outputs[0]] == Exit(0)
    assert prog.native is not None
    np.testing.assert_allclose(myc.jit(summed_products)(a, b, c, d),
                               summed_products(a, b, c, d))
    (prog,) = programs_run(myc.jit(halved), np.ones(8))
    (loop,) = [st for st in prog.steps if st.kind == "loop"]
    body = loop.fn.body
    pl = Placement(body, loop.fn.nstate).place(set(), set(), False)
    (kernel,) = [st for st in body.steps if st.kind == "kernel"]
    states = [pl.buffers[v] for v in kernel.host.outputs if isinstance(pl.buffers[v], State)]
    assert states == [State(0)] and not pl.direct
    np.testing.assert_allclose(myc.jit(halved)(np.ones(8)), halved(np.ones(8)))


def batched_products(a, b, c, x, y, g):
    return a @ b, a @ c, x @ c + y @ g


def test_product_steps_are_hostplan_gemms():
    """A JIT product step carries the ``hostplan.Gemm`` an AOT library's product is, the
    shapes paired as np.matmul pairs them (``hostplan.gemm_op``: batch dimensions
    broadcast, each operand's element stride per batch dimension, 0 where broadcast; a
    1-d operand a row or column), which the native generator reads for its products."""
    from myc.lower.hostplan import Gemm, gemm_op

    a, b = np.arange(24.0).reshape(2, 1, 3, 4), np.ones((5, 4, 2))
    c, x, y, g = np.ones((4, 6)), np.ones((3, 4)), np.full((3, 2), 2.0), np.ones((2, 6))
    args = (a, b, c, x, y, g)
    (prog,) = programs_run(myc.jit(batched_products), *args)
    gemms = [st for st in prog.steps if st.op in ("gemm", "gemm_acc")]
    assert len(gemms) == 4 and all(isinstance(st.host, Gemm) for st in gemms)
    assert all(st.host.a is prog.values[st.inputs[0][1]] and st.host.b is prog.values[
        st.inputs[1][1]] and st.host.out is prog.values[st.output] for st in gemms)
    ab, ac = gemms[0].host, gemms[1].host
    assert (ab.batch, ab.a_strides, ab.b_strides, ab.tall) == ((2, 5), (12, 0), (0, 8), False)
    assert (ab.m, ab.n, ab.k) == (3, 2, 4)
    assert (ac.batch, ac.tall, ac.m, ac.n, ac.k) == ((2, 1), True, 3, 6, 4)
    (acc,) = [st for st in gemms if st.op == "gemm_acc"]
    assert acc.host.acc is prog.values[acc.inputs[2][1]] and acc.host.alpha == 1.0
    vec = Value("float64", (4,))
    dot = gemm_op(vec, vec, Value("float64", ()))
    assert (dot.m, dot.n, dot.k, dot.batch) == (1, 1, 4, ())
    assert gemm_op(vec, Value("float64", (3, 2)), Value("float64", (2,))) is None
    assert gemm_op(Value("float64", (2, 3, 4)), Value("float64", (3, 4, 2)),
                   Value("float64", (3, 3, 2))) is None  # batches 2 and 3
    assert prog.native is not None
    for got, want in zip(myc.jit(batched_products)(*args), batched_products(*args),
                         strict=True):
        np.testing.assert_allclose(got, want)
