"""Ahead-of-time libraries: built by myc.aot, called from a C program with no Python in
the process, compared with myc.jit."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import myc

CC = os.environ.get("CC") or shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None or shutil.which(CC) is None,
                                reason="no C compiler ('cc')")

CODES = {"float32": 0, "float64": 1, "int64": 2, "bool": 3}

# The C driver: reads the inputs' raw data from a binary file, calls the entry point,
# writes each output's raw data to another file.  MODE "strided" passes input 0
# through byte strides over a buffer twice as wide (a non-contiguous view); MODE
# "badshape" gives input 0 a wrong first dimension; "aslimit" caps the address space
# (setrlimit) at the current use plus argv[4] MiB before the call.
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "@HEADER@"

static const int64_t ndims[] = {@NDIMS@};
static const int64_t shapes[] = {@SHAPES@};
static const int32_t dtypes[] = {@DTYPES@};
static const int64_t itemsizes[] = {@ITEMSIZES@};
#define N_IN @NIN@
#define N_OUT @NOUT@

int main(int argc, char **argv) {
    const char *mode = argc > 3 ? argv[3] : "plain";
    FILE *in = fopen(argv[1], "rb");
    if (!in) return 10;
    myc_array inputs[N_IN + 1], outputs[N_OUT + 1];
    int64_t shape_store[64], stride_store[64];
    const int64_t *sh = shapes;
    for (int i = 0; i < N_IN; i++) {
        int64_t n = 1;
        for (int64_t a = 0; a < ndims[i]; a++) n *= sh[a];
        void *data = malloc(n * itemsizes[i] + 1);
        if (fread(data, itemsizes[i], n, in) != (size_t)n) return 11;
        inputs[i].data = data;
        inputs[i].ndim = ndims[i];
        inputs[i].shape = (int64_t *)sh;
        inputs[i].strides = NULL;
        inputs[i].dtype = dtypes[i];
        sh += ndims[i];
    }
    fclose(in);
    if (strcmp(mode, "strided") == 0) {
        /* input 0 again, every element followed by a garbage one: strides double */
        int64_t n = 1, nd = inputs[0].ndim, is = itemsizes[0];
        for (int64_t a = 0; a < nd; a++) n *= inputs[0].shape[a];
        char *wide = malloc(2 * n * is);
        for (int64_t k = 0; k < n; k++) {
            memcpy(wide + 2 * k * is, (char *)inputs[0].data + k * is, is);
            memset(wide + (2 * k + 1) * is, 0x7f, is);
        }
        int64_t acc = 2 * is;
        for (int64_t a = nd - 1; a >= 0; a--) {
            stride_store[a] = acc;
            acc *= inputs[0].shape[a];
        }
        inputs[0].data = wide;
        inputs[0].strides = stride_store;
    }
    if (strcmp(mode, "badshape") == 0) {
        memcpy(shape_store, inputs[0].shape, inputs[0].ndim * sizeof(int64_t));
        shape_store[0] += 1;
        inputs[0].shape = shape_store;
    }
    if (strcmp(mode, "aslimit") == 0 && argc > 4) {
        /* the current address space, from /proc, plus the allowance */
        long pages = 0;
        FILE *st = fopen("/proc/self/statm", "r");
        if (!st || fscanf(st, "%ld", &pages) != 1) return 12;
        fclose(st);
        struct rlimit lim;
        lim.rlim_cur = lim.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)atol(argv[4]) * 1048576;
        if (setrlimit(RLIMIT_AS, &lim) != 0) return 13;
    }
    int status = @ENTRY@(inputs, N_IN, outputs, N_OUT);
    if (status != MYC_OK) {
        printf("status %d: %s\n", status, @ENTRY@_last_error());
        return 0;
    }
    FILE *out = fopen(argv[2], "wb");
    for (int i = 0; i < N_OUT; i++) {
        int64_t n = 1;
        for (int64_t a = 0; a < outputs[i].ndim; a++) n *= outputs[i].shape[a];
        int64_t is = outputs[i].dtype == MYC_F32 ? 4 : outputs[i].dtype == MYC_BOOL ? 1 : 8;
        fwrite(outputs[i].data, is, n, out);
        @ENTRY@_free(outputs[i].data);
    }
    fclose(out);
    printf("ok\n");
    return 0;
}
"""


def build_driver(tmp_path, so_path, h_path, entry, inputs, n_out):
    src = DRIVER
    for key, val in {
        "@HEADER@": os.path.basename(h_path),
        "@NDIMS@": ", ".join(str(a.ndim) for a in inputs),
        "@SHAPES@": ", ".join(str(s) for a in inputs for s in a.shape) or "0",
        "@DTYPES@": ", ".join(str(CODES[str(a.dtype)]) for a in inputs),
        "@ITEMSIZES@": ", ".join(str(a.itemsize) for a in inputs),
        "@NIN@": str(len(inputs)), "@NOUT@": str(n_out), "@ENTRY@": entry,
    }.items():
        src = src.replace(key, val)
    c_path = tmp_path / "driver.c"
    c_path.write_text(src)
    exe = tmp_path / "driver"
    libdir = os.path.dirname(so_path)
    libname = os.path.basename(so_path)[3:-3]
    subprocess.run([CC, "-O1", "-o", str(exe), str(c_path), f"-I{os.path.dirname(h_path)}",
                    f"-L{libdir}", f"-l{libname}", f"-Wl,-rpath,{libdir}"], check=True)
    return exe


def run_c(tmp_path, exe, inputs, outs_like, mode="plain", extra=()):
    """Run the C driver (no Python in that process); its outputs, shaped like
    ``outs_like``."""
    in_path, out_path = tmp_path / "in.bin", tmp_path / "out.bin"
    with open(in_path, "wb") as f:
        for a in inputs:
            f.write(np.ascontiguousarray(a).tobytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    res = subprocess.run([str(exe), str(in_path), str(out_path), mode, *extra],
                         capture_output=True, text=True, env=env, check=True, timeout=60)
    if res.stdout.strip() != "ok":
        return res.stdout.strip()
    raw = out_path.read_bytes()
    outs, pos = [], 0
    for like in outs_like:
        like = np.asarray(like)
        n = like.nbytes
        outs.append(np.frombuffer(raw[pos:pos + n], like.dtype).reshape(like.shape))
        pos += n
    assert pos == len(raw)
    return outs


def flat(v):
    if isinstance(v, tuple):
        return [x for item in v for x in flat(item)]
    return [np.asarray(v)]


def check_against_jit(tmp_path, fn, sig, inputs, rtol=1e-5, atol=1e-6, name="lib"):
    so, h = myc.aot(fn, sig, str(tmp_path / f"lib{name}.so"))
    assert os.path.exists(so) and os.path.exists(h)
    entry = open(h).read().split("\nint ")[-1].split("(")[0].strip()
    expected = flat(myc.jit(fn)(*inputs))
    exe = build_driver(tmp_path, so, h, entry, inputs, len(expected))
    got = run_c(tmp_path, exe, inputs, expected)
    assert isinstance(got, list), got
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        # summation order differs from BLAS: absolute error scales with the magnitudes
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol * max(1.0, np.abs(e).max()))
    return exe, expected


def elementwise_reduce(x, b):
    return np.sum(np.tanh(x) * b + x * x, axis=1), np.max(x)


def mlp(x, w1, b1, w2):
    h = np.tanh(x @ w1 + b1)
    return h @ w2


def loss(w1, w2, x):
    h = np.tanh(x @ w1)
    return np.mean((h @ w2) ** 2)


def gather(x, i):
    return x[i]


def reductions_3d(x, y):
    s = np.sum(x, axis=(0, 2), keepdims=True)
    m = np.max(x * y, axis=0)
    return np.mean(x, axis=2) - 1.0, s, m, np.min(x), (x > 0.5) & (y < 0.0)


def transposes(x, w):
    return np.transpose(x, (2, 0, 1)).reshape(6, 20) @ w, x.T, np.sum(x.T * 2.0, axis=0)


def ints(a, b):
    return a * b + 3, np.sum(a, axis=0), np.maximum(a, b), (a % 3 == 0)


def scalar_in(x, s):
    return np.exp(x * s) + s, np.sum(x) * s


def big_fused(x, b):
    return np.sum(np.tanh(x) * b + x * x), np.exp(x - np.max(x, axis=1, keepdims=True))


def rng_inputs(*shapes, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def test_elementwise_reduction(tmp_path):
    inputs = rng_inputs((300, 4), (4,))
    exe, expected = check_against_jit(tmp_path, elementwise_reduce, "f32[300,4], f32[4]",
                                      inputs)
    # a non-contiguous input is copied by the library and gives the same results
    got = run_c(tmp_path, exe, inputs, expected, mode="strided")
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_mlp_forward_with_matmul(tmp_path):
    inputs = rng_inputs((70, 33), (33, 300), (300,), (300, 10), seed=1)
    check_against_jit(tmp_path, mlp, "f32[70,33], f32[33,300], f32[300], f32[300,10]",
                      inputs, rtol=1e-4, atol=1e-5)


def test_mlp_forward_f64(tmp_path):
    inputs = rng_inputs((5, 3), (3, 4), (4,), (4, 2), dtype=np.float64, seed=2)
    check_against_jit(tmp_path, mlp, tuple(inputs), inputs, rtol=1e-12, atol=1e-12)


def test_value_and_grad(tmp_path):
    inputs = rng_inputs((8, 16), (16, 3), (32, 8), seed=3)
    fn = myc.value_and_grad(loss, (0, 1))
    _, expected = check_against_jit(tmp_path, fn, "f32[8,16], f32[16,3], f32[32,8]", inputs,
                                    rtol=1e-4, atol=1e-6)
    assert [e.shape for e in expected] == [(), (8, 16), (16, 3)]


@pytest.mark.parametrize("fn, sig, dtypes", [
    (reductions_3d, "f64[4,5,6], f64[5,6]", None),
    (transposes, "f32[4,5,6], f32[20,3]", None),
    (ints, "i64[7,3], i64[3]", "int"),
    (scalar_in, "f32[33], f32[]", None),
    (big_fused, "f32[4096,4], f32[4]", None),
], ids=["reductions_3d", "transposes", "ints", "scalar_in", "big_fused"])
def test_programs(tmp_path, fn, sig, dtypes):
    from myc.aot import parse_signature

    shapes = [a.shape for a in parse_signature(sig)]
    like = parse_signature(sig)
    if dtypes == "int":
        rng = np.random.default_rng(5)
        inputs = [rng.integers(-9, 9, s).astype(np.int64) for s in shapes]
    else:
        inputs = [a.astype(lk.dtype) for a, lk in zip(rng_inputs(*shapes, dtype=np.float64),
                                                      like, strict=True)]
    check_against_jit(tmp_path, fn, sig, inputs, rtol=1e-5, atol=1e-5)


def test_wrong_shape_is_a_status_and_a_message(tmp_path):
    inputs = rng_inputs((300, 4), (4,))
    exe, expected = check_against_jit(tmp_path, elementwise_reduce, "f32[300,4], f32[4]",
                                      inputs)
    msg = run_c(tmp_path, exe, inputs, expected, mode="badshape")
    assert msg.startswith("status 5:"), msg
    assert "shape[0] is 301, expected 300" in msg


def test_unsupported_program_is_rejected(tmp_path):
    with pytest.raises(myc.MycError, match="getitem|gather|not supported"):
        myc.aot(gather, (np.zeros((5, 3), np.float32), np.zeros(2, np.int64)),
                str(tmp_path / "libg.so"))


def test_guarded_control_flow_is_rejected(tmp_path):
    def f(x):
        if np.sum(x) > 0:  # a Python float on one side, a NumPy float32 on the other:
            t = 0.0        # the JIT guards on the branch taken, a library cannot
        else:
            t = np.sum(x)
        return x * 2.0, t

    with pytest.raises(myc.MycError, match="control flow.*could only guard"):
        myc.aot(f, "f32[4]", str(tmp_path / "libf.so"))


def check_dynamic(tmp_path, fn, sig, input_sets, rtol=1e-5, atol=1e-6):
    """One library for ``sig`` (with named sizes), called from C on every input set."""
    so, h = myc.aot(fn, sig, str(tmp_path / "libdyn.so"))
    entry = open(h).read().split("\nint ")[-1].split("(")[0].strip()
    for k, inputs in enumerate(input_sets):
        expected = flat(myc.jit(fn)(*inputs))
        sub = tmp_path / f"run{k}"
        sub.mkdir()
        exe = build_driver(sub, so, h, entry, inputs, len(expected))
        got = run_c(sub, exe, inputs, expected)
        assert isinstance(got, list), got
        for g, e in zip(got, expected, strict=True):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol * max(1.0, np.abs(e).max()))
    return so, h


def mean_over_rows(x, b):
    return np.sum(np.tanh(x * b), axis=1) / x.shape[1] + np.mean(x), x.T * 2.0


def test_dynamic_size_one_library_for_every_n(tmp_path):
    sets = [rng_inputs((n, 4), (4,), seed=n) for n in (1, 2, 3, 100, 1037)]
    so, h = check_dynamic(tmp_path, mean_over_rows, "f32[N,4], f32[4]", sets)
    header = open(h).read()
    assert "inputs[0]: x f32[N,4]" in header and "outputs[0]: f32[N]" in header
    assert "N: a dynamic size" in header
    # a non-contiguous input of a dynamic size is copied too
    inputs = sets[3]
    expected = flat(myc.jit(mean_over_rows)(*inputs))
    exe = build_driver(tmp_path, so, h, "mean_over_rows", inputs, len(expected))
    got = run_c(tmp_path, exe, inputs, expected, mode="strided")
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_dynamic_batch_value_and_grad_mlp(tmp_path):
    fn = myc.value_and_grad(loss, (0, 1))
    sets = [rng_inputs((8, 16), (16, 3), (b, 8), seed=b) for b in (1, 5, 64, 300)]
    check_dynamic(tmp_path, fn, "f32[8,16], f32[16,3], f32[B,8]", sets, rtol=1e-4)


def test_two_dynamic_sizes_and_a_square(tmp_path):
    def outer_stats(x, y):
        z = x @ y  # [N, M] @ [M, N] -> [N, N]
        return np.sum(z * z, axis=0), z.T + z, np.mean(y, axis=0)

    sets = [rng_inputs((n, m), (m, n), dtype=np.float64, seed=n + m)
            for n, m in ((2, 3), (7, 1), (40, 17))]
    check_dynamic(tmp_path, outer_stats, "f64[N,M], f64[M,N]", sets, rtol=1e-10)


def test_dynamic_size_mismatch_and_bounds_are_statuses(tmp_path):
    so, h = myc.aot(lambda_free_pair, "f32[N,4], f32[N]", str(tmp_path / "libb.so"))
    inputs = rng_inputs((10, 4), (10,))
    expected = flat(myc.jit(lambda_free_pair)(*inputs))
    exe = build_driver(tmp_path, so, h, "lambda_free_pair", inputs, len(expected))
    got = run_c(tmp_path, exe, inputs, expected)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5)
    # input 0 says N = 11, input 1 still has 10 elements
    msg = run_c(tmp_path, exe, inputs, expected, mode="badshape")
    assert msg.startswith("status 5:"), msg
    assert "input 1 (y, expected f32[N])" in msg and "shape[0] is 10, expected N = 11" in msg


def lambda_free_pair(x, y):
    return np.sum(x, axis=1) * y


def test_dynamic_size_whose_structure_changes_is_rejected(tmp_path):
    def unrolled(x):
        acc = x
        for _ in range(x.shape[0]):  # N nested tanh: the kernel grows with N
            acc = np.tanh(acc)
        return acc

    with pytest.raises(myc.MycError, match="depends on the value of N"):
        myc.aot(unrolled, "f32[N]", str(tmp_path / "libu.so"))


def test_dynamic_size_lower_bound_is_checked_at_run_time(tmp_path):
    from myc.aot import program_at, signature_specs
    from myc.aot.dynamic import generalize

    specs = signature_specs("f32[N,4], f32[4]")

    def build(examples):  # as if the program could not be compiled for N < 3
        if examples[0].shape[0] < 3:
            raise myc.MycError("too small")
        return program_at(lambda_free_pair2, examples)

    prog = generalize(build, specs, ["N"], "lambda_free_pair2")
    assert prog.symbols == {"N": 3}
    from myc.backends.cpu.aot_codegen import build_object
    from myc.backends.cpu.aot_header import header

    so, h = tmp_path / "liblb.so", tmp_path / "liblb.h"
    obj = tmp_path / "lb.o"
    obj.write_bytes(build_object(prog))
    subprocess.run([CC, "-shared", "-o", str(so), str(obj), "-lm"], check=True)
    h.write_text(header(prog, "LB_H"))
    for n, ok in ((2, False), (3, True), (9, True)):
        inputs = rng_inputs((n, 4), (4,), seed=n)
        expected = flat(myc.jit(lambda_free_pair2)(*inputs))
        sub = tmp_path / f"n{n}"
        sub.mkdir()
        exe = build_driver(sub, str(so), str(h), "lambda_free_pair2", inputs, 1)
        got = run_c(sub, exe, inputs, expected)
        if ok:
            np.testing.assert_allclose(got[0], expected[0], rtol=1e-5)
        else:
            assert got.startswith("status 5:") and "N must be between 3 and" in got, got


def lambda_free_pair2(x, b):
    return np.sum(x * b, axis=1)


def test_cli(tmp_path):
    from myc.cli import main

    src = tmp_path / "mod.py"
    src.write_text("import numpy as np\n\ndef f(x, b):\n    return np.sum(x * b)\n")
    out = tmp_path / "libcli.so"
    assert main(["aot", f"{src}:f", "--sig", "f32[64,4], f32[4]", "-o", str(out)]) == 0
    assert out.exists() and (tmp_path / "libcli.h").exists()
    assert main(["aot", f"{src}:f", "--sig", "f32[N,4], f32[4]", "-o", str(out)]) == 0
    assert "N: a dynamic size" in (tmp_path / "libcli.h").read_text()
    assert main(["aot", f"{src}:f", "--sig", "f32[N+1,4], f32[4]", "-o", str(out)]) == 1


def big_reductions(x, b):
    return np.sum(x), np.max(x, axis=0), np.sum(np.tanh(x) * b, axis=1), x * 2.0 + b


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_big_kernels_run_on_threads(tmp_path, threads, monkeypatch):
    """Kernels over more than 65536 elements are split over MYC_NUM_THREADS threads
    (partials of shared reductions combined), with static and dynamic sizes."""
    monkeypatch.setenv("MYC_NUM_THREADS", threads)  # read by the library at run time
    inputs = rng_inputs((300, 512), (512,), seed=7)
    check_against_jit(tmp_path, big_reductions, "f32[300,512], f32[512]", inputs,
                      rtol=1e-4, atol=1e-5)
    sets = [rng_inputs((n, 512), (512,), seed=n) for n in (3, 257)]
    check_dynamic(tmp_path, big_reductions, "f32[N,512], f32[512]", sets, rtol=1e-4,
                  atol=1e-5)
