"""The C ABI of ahead-of-time libraries under hostile calls, watched by AddressSanitizer.

Each library below is called from a C driver compiled with ``gcc -fsanitize=address``
(the library itself is not instrumented, but every ``malloc``/``free``/``memcpy``/
``memset`` it makes goes through ASan's interceptors, and LeakSanitizer checks at exit
that every failed call freed what it allocated).  The driver makes one call per case:
wrong counts, NULL ``inputs``/``outputs``/``data``/``shape``, wrong dtypes and ranks,
sizes 0, 1, -1, 2^31, 2^62, INT64_MIN/MAX and the bounds' neighbours, zero, negative,
huge and INT64_MIN strides, and the combination of issue 16 (2^31 x 2^31 with zero
strides: a valid broadcast view whose byte count overflows 64 bits).  Each call must
return the status the ABI promises (``docs/aot.md``) with a message naming the
problem, leave ``outputs`` untouched when it fails, and compute the right values
when it succeeds.  The driver runs under ``max_allocation_size_mb=64`` with
``allocator_may_return_null=1``: a size that is valid but too big to allocate here is
``MYC_ERR_ALLOC``, never an allocation that touches gigabytes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from math import prod

import numpy as np
import pytest

import myc

GCC = shutil.which("gcc")
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
MAX_BYTES = 1 << 56  # the ABI's limit on one array (docs/aot.md)
CAP_MB = 64  # ASan's max_allocation_size_mb: bigger mallocs return NULL
ASAN_OPTIONS = (f"allocator_may_return_null=1:max_allocation_size_mb={CAP_MB}:"
                "detect_leaks=1:abort_on_error=0:exitcode=99")
CODES = {"float32": 0, "float64": 1, "int64": 2, "bool": 3}
OK, ARGC, NULL, DTYPE, NDIM, SHAPE, ALLOC = range(7)


def _asan_reason() -> str | None:
    """Why ASan cannot be used here (``None``: it can)."""
    if GCC is None:
        return "no gcc"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "t.c"), os.path.join(tmp, "t")
        with open(src, "w") as f:
            f.write("#include <stdlib.h>\nint main(void){free(malloc(8));return 0;}\n")
        res = subprocess.run([GCC, "-fsanitize=address", "-o", exe, src],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            return f"gcc -fsanitize=address does not build: {res.stderr.strip()[:200]}"
        res = subprocess.run([exe], capture_output=True, text=True, check=False,
                             env={**os.environ, "ASAN_OPTIONS": ASAN_OPTIONS})
        if res.returncode != 0:
            return f"an ASan program does not run here: {res.stderr.strip()[:200]}"
    return None


_REASON = _asan_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"AddressSanitizer: {_REASON}")


# ---------------------------------------------------------------- the libraries
def ew(x):
    return np.tanh(x) * 2.0, np.sum(x, axis=1)


def mixed(a, b, k, m):
    return a @ b, k * 3, np.where(m, np.sum(a, axis=1), 0.0)


def shrink(x):
    while np.sum(np.abs(x)) > 1.0:
        x = np.tanh(x) * 0.5  # the backward loop reads x: taped
    return np.sum(x * x)


@dataclass
class Lib:
    fn: object
    sig: str
    base: dict[str, int]  # the dynamic sizes of the pristine inputs
    name: str
    specs: list = field(default_factory=list)  # (dtype, shape with names)


LIBS = [
    Lib(ew, "f32[N,M]", {"N": 3, "M": 5}, "ew"),
    Lib(mixed, "f64[N,4], f64[4,2], i64[5], bool[N]", {"N": 3}, "mixed"),
    Lib(myc.value_and_grad(shrink), "f32[N]", {"N": 6}, "vg_shrink"),
]


def _inputs(lib: Lib) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    out = []
    for dt, shape in lib.specs:
        shp = tuple(lib.base[d] if isinstance(d, str) else d for d in shape)
        if dt == "bool":
            out.append(rng.random(shp) < 0.5)
        elif dt == "int64":
            out.append(rng.integers(-9, 10, shp).astype(np.int64))
        else:
            out.append(rng.uniform(-2.0, 2.0, shp).astype(dt))
    return out


# ---------------------------------------------------------------- the cases
@dataclass
class Case:
    what: str
    code: str  # C statements between reset() and the call
    status: int
    message: str = ""  # a part of the expected message (a regular expression)
    inputs: list | None = None  # the arrays the call sees, where it succeeds


def _c_strides(shape, itemsize: int) -> list[int]:
    out, acc = [], itemsize
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def _cases(lib: Lib, arrays: list[np.ndarray], bounds: dict[str, tuple[int, int]]):
    n_in = len(arrays)
    cases = [
        Case("n_inputs = 0", "ni = 0;", ARGC, r"expected n_inputs = \d+ and n_outputs = \d+, "
             r"got n_inputs = 0"),
        Case("n_inputs = -1", "ni = -1;", ARGC, "got n_inputs = -1"),
        Case("n_inputs + 1", "ni = NIN + 1;", ARGC, f"got n_inputs = {n_in + 1}"),
        Case("n_inputs = INT_MAX", "ni = 2147483647;", ARGC, "got n_inputs = 2147483647"),
        Case("n_outputs = 0", "no = 0;", ARGC, "and n_outputs = 0"),
        Case("n_outputs = -1", "no = -1;", ARGC, "and n_outputs = -1"),
        Case("n_outputs + 1", "no = NOUT + 1;", ARGC, "n_outputs ="),
        Case("inputs NULL", "ip = NULL;", ARGC, "the inputs pointer is NULL"),
        Case("outputs NULL", "op = NULL;", ARGC, "the outputs pointer is NULL"),
        Case("inputs and outputs NULL", "ip = NULL; op = NULL;", ARGC, "pointer is NULL"),
        Case("pristine", "", OK, inputs=arrays),
    ]
    first: dict[str, tuple[int, int]] = {}  # a dynamic size -> where it is bound
    for i, (dt, shape) in enumerate(lib.specs):
        for a, d in enumerate(shape):
            if isinstance(d, str):
                first.setdefault(d, (i, a))
    for i, (dt, shape) in enumerate(lib.specs):
        x = arrays[i]
        nd, code = x.ndim, CODES[dt]
        where = rf"input {i} \(\w+, expected "
        cases += [
            Case(f"in[{i}].data NULL", f"in[{i}].data = NULL;", NULL, where + ".*data is NULL"),
            Case(f"in[{i}].dtype -1", f"in[{i}].dtype = -1;", DTYPE, "dtype code is -1"),
            Case(f"in[{i}].dtype 99", f"in[{i}].dtype = 99;", DTYPE, "dtype code is 99"),
            Case(f"in[{i}].dtype other", f"in[{i}].dtype = {(code + 1) % 4};", DTYPE,
                 f"dtype code is {(code + 1) % 4}, expected {code}"),
            Case(f"in[{i}].ndim -1", f"in[{i}].ndim = -1;", NDIM, "ndim is -1"),
            Case(f"in[{i}].ndim + 1", f"in[{i}].ndim = {nd + 1};", NDIM, f"ndim is {nd + 1}"),
            Case(f"in[{i}].ndim 2^62", f"in[{i}].ndim = {1 << 62}LL;", NDIM,
                 f"ndim is {1 << 62}"),
            Case(f"in[{i}].ndim INT64_MIN", f"in[{i}].ndim = INT64_MIN;", NDIM,
                 f"ndim is {I64_MIN}"),
        ]
        if nd:
            cases.append(Case(f"in[{i}].shape NULL", f"in[{i}].shape = NULL;", NULL,
                              "shape is NULL"))
            cases.append(Case(f"in[{i}].ndim 0", f"in[{i}].ndim = 0;", NDIM, "ndim is 0"))
        # strides: explicit C order, zero (a broadcast of the first element), negative
        # (every axis reversed), and strides no array in memory can have
        st = _c_strides(x.shape, x.itemsize)
        cases.append(Case(f"in[{i}] explicit C strides", _set_strides(i, st), OK,
                          inputs=arrays))
        if nd:
            bcast = [*arrays]
            bcast[i] = np.broadcast_to(x.flat[0], x.shape)
            cases.append(Case(f"in[{i}] zero strides", _set_strides(i, [0] * nd), OK,
                              inputs=bcast))
            rev = [*arrays]
            rev[i] = x[(slice(None, None, -1),) * nd]
            cases.append(Case(f"in[{i}] negative strides",
                              _set_strides(i, [-s for s in st])
                              + f" in[{i}].data = (char *)base[{i}] + {x.nbytes - x.itemsize};",
                              OK, inputs=rev))
            big = [1 << 62 if a == 0 else s for a, s in enumerate(st)]
            if x.shape[0] >= 3:  # reaches 2 * 2^62 bytes: past 2^63
                cases.append(Case(f"in[{i}] stride 2^62", _set_strides(i, big), SHAPE,
                                  "strides reach more than 2\\^63 bytes"))
            cases.append(Case(f"in[{i}] stride INT64_MIN", _set_strides(
                i, [I64_MIN] + st[1:]), SHAPE if x.shape[0] > 1 else OK,
                "strides reach more than" if x.shape[0] > 1 else "",
                inputs=arrays if x.shape[0] == 1 else None))
        for a, d in enumerate(shape):
            cases += _size_cases(lib, arrays, i, a, d, first, bounds)
    return cases


def _set_strides(i: int, strides: list[int]) -> str:
    sets = " ".join(f"strides[{i}][{a}] = {_c_int(s)};" for a, s in enumerate(strides))
    return f"{sets} in[{i}].strides = strides[{i}];"


def _c_int(v: int) -> str:
    return "INT64_MIN" if v == I64_MIN else f"{v}LL"


HOSTILE_SIZES = [0, 1, -1, I64_MIN, I64_MAX, 1 << 31, 1 << 62, 1 << 56]


def _size_cases(lib, arrays, i, a, d, first, bounds) -> list[Case]:
    """Input ``i``'s axis ``a`` (size ``d``: a number or a name) set to hostile values."""
    x = arrays[i]
    base = x.shape[a]
    out = []
    values = sorted({*HOSTILE_SIZES, base + 1} - {base})
    if isinstance(d, str):
        lo, hi = bounds[d]
        values = sorted({*values, lo - 1, hi, hi + 1} - {base})
    for v in values:
        what = f"in[{i}].shape[{a}] = {v}"
        code = f"shape[{i}][{a}] = {_c_int(v)};"
        if isinstance(d, int):
            out.append(Case(what, code, SHAPE, rf"shape\[{a}\] is {v}, expected {d}\b"))
            continue
        lo, hi = bounds[d]
        if first[d] != (i, a):  # the size was bound by an earlier input: a mismatch
            out.append(Case(what, code, SHAPE,
                            rf"shape\[{a}\] is {v}, expected {d} = {lib.base[d]}\b"))
            continue
        if not lo <= v <= hi:
            out.append(Case(what, code, SHAPE, rf"shape\[{a}\] is {v}, but {d} must be "
                            rf"between {lo} and {hi}\b"))
            continue
        others = [(j, b) for j, (_, s) in enumerate(lib.specs) for b, e in enumerate(s)
                  if e == d and (j, b) != (i, a)]
        if others:  # bound here, and another input still has the old size
            j, b = others[0]
            out.append(Case(what, code, SHAPE,
                            rf"input {j} .*shape\[{b}\] is {lib.base[d]}, expected {d} = {v}\b"))
            continue
        # every input a broadcast of its first element (zero strides), so any size is
        # a valid array the caller could pass
        code += " " + " ".join(_set_strides(j, [0] * arrays[j].ndim)
                               for j in range(len(arrays)) if arrays[j].ndim)
        shape = list(x.shape)
        shape[a] = v
        nbytes = prod(shape) * x.itemsize
        if nbytes > MAX_BYTES:
            out.append(Case(what + " (zero strides)", code, SHAPE,
                            rf"sizes too large \(.*{d} = {v}.*\): an array of the program "
                            r"would take more than 2\^56 bytes"))
        elif nbytes > CAP_MB << 20:
            out.append(Case(what + " (zero strides)", code, ALLOC, "out of memory"))
        else:
            ins = [np.broadcast_to(y.flat[0], tuple(shape) if j == i else y.shape)
                   for j, y in enumerate(arrays)]
            out.append(Case(what + " (zero strides)", code, OK, inputs=ins))
    return out


def _issue16_cases(lib: Lib) -> list[Case]:
    """The call of issue 16 (N = M = 2^31, zero strides) and its neighbours."""
    if lib.name != "ew":
        return []
    out = []
    for n, m, status in (((1 << 31), (1 << 31), SHAPE), ((1 << 62), 2, SHAPE),
                         ((1 << 28), (1 << 27), SHAPE), ((1 << 27), (1 << 27), ALLOC),
                         ((1 << 31), 3, ALLOC), (I64_MAX, 1, SHAPE)):
        code = (f"shape[0][0] = {_c_int(n)}; shape[0][1] = {_c_int(m)};"
                + _set_strides(0, [0, 0]))
        msg = ("sizes too large|N must be between 1 and" if status == SHAPE
               else "out of memory")
        out.append(Case(f"issue 16: f32[{n},{m}] zero strides", code, status, msg))
    return out


def _tape_cases(lib: Lib) -> list[Case]:
    """A gradient's tape that cannot grow: the arena fits under the cap, 16 rows of the
    loop's state do not (``MYC_ERR_ALLOC``, and LeakSanitizer sees the arena freed)."""
    if lib.name != "vg_shrink":
        return []
    n = (CAP_MB << 20) // 4 // 16 + 4096  # 16 float32 rows of n: just over the cap
    return [Case(f"tape of f32[{n}] over the cap", f"shape[0][0] = {n}LL;"
                 + _set_strides(0, [0]), ALLOC,
                 r"out of memory growing the tape of the loop at line \d+ to 16 iterations")]


# ---------------------------------------------------------------- the driver
DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "@HEADER@"

#define NIN @NIN@
#define NOUT @NOUT@
static const int64_t base_ndim[NIN] = {@NDIMS@};
static const int64_t base_shape[NIN][8] = {@SHAPES@};
static const int32_t base_dtype[NIN] = {@DTYPES@};
static const size_t base_bytes[NIN] = {@BYTES@};
@DATA@
static void *base[NIN];
static float pool[@POOL@];
static myc_array in[NIN + 1];
static int64_t shape[NIN][8], strides[NIN][8];
static myc_array out[NOUT + 1];

static void reset(void) {
    for (int i = 0; i < NIN; i++) {
        in[i].data = base[i];
        in[i].ndim = base_ndim[i];
        memcpy(shape[i], base_shape[i], sizeof shape[i]);
        in[i].shape = shape[i];
        in[i].strides = NULL;
        in[i].dtype = base_dtype[i];
    }
    memset(out, 0xA5, sizeof out);
}

static int untouched(void) {
    const unsigned char *p = (const unsigned char *)out;
    for (size_t k = 0; k < sizeof out; k++)
        if (p[k] != 0xA5) return 0;
    return 1;
}

static void report(int k, int st) {
    printf("case %d status %d untouched %d msg %s\n", k, st, st ? untouched() : 1,
           @ENTRY@_last_error());
    if (st != 0) return;
    for (int j = 0; j < NOUT; j++) {
        int64_t n = 1;
        printf("out %d dtype %d shape", j, out[j].dtype);
        for (int64_t a = 0; a < out[j].ndim; a++) {
            printf(" %lld", (long long)out[j].shape[a]);
            n *= out[j].shape[a];
        }
        printf(" values");
        for (int64_t e = 0; e < n; e++) {
            double v;
            switch (out[j].dtype) {
            case MYC_F32: v = ((float *)out[j].data)[e]; break;
            case MYC_F64: v = ((double *)out[j].data)[e]; break;
            case MYC_I64: v = (double)((int64_t *)out[j].data)[e]; break;
            default: v = ((unsigned char *)out[j].data)[e]; break;
            }
            printf(" %.17g", v);
        }
        printf("\n");
        @ENTRY@_free(out[j].data);
    }
}

int main(void) {
    for (int k = 0; k < @POOL@; k++) pool[k] = (float)((k * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < NIN; i++) {
        base[i] = malloc(base_bytes[i] ? base_bytes[i] : 1);
        memcpy(base[i], base_data[i], base_bytes[i]);
    }
@CASES@
    for (int i = 0; i < NIN; i++) free(base[i]);
    printf("done\n");
    return 0;
}
"""


def _driver(lib: Lib, arrays, cases: list[Case], h_path: str, n_out: int) -> str:
    data = []
    for i, x in enumerate(arrays):
        raw = np.ascontiguousarray(x).tobytes() or b"\0"
        data.append(f"static const unsigned char d{i}[] = {{"
                    + ",".join(str(c) for c in raw) + "};")
    data.append("static const unsigned char *base_data[NIN] = {"
                + ", ".join(f"d{i}" for i in range(len(arrays))) + "};")
    calls = []
    for k, c in enumerate(cases):
        calls.append(f"    {{ /* {c.what} */\n        const myc_array *ip = in; int ni = NIN; "
                     f"myc_array *op = out; int no = NOUT;\n        reset();\n        {c.code}\n"
                     f"        report({k}, {lib.name}(ip, ni, op, no));\n    }}")
    src = DRIVER
    for key, val in {
        "@HEADER@": os.path.basename(h_path), "@NIN@": str(len(arrays)),
        "@NOUT@": str(n_out), "@ENTRY@": lib.name,
        "@NDIMS@": ", ".join(str(x.ndim) for x in arrays),
        "@SHAPES@": ", ".join("{" + ", ".join(map(str, x.shape or (0,))) + "}"
                              for x in arrays),
        "@DTYPES@": ", ".join(str(CODES[str(x.dtype)]) for x in arrays),
        "@BYTES@": ", ".join(str(x.nbytes) for x in arrays),
        "@DATA@": "\n".join(data), "@CASES@": "\n".join(calls), "@POOL@": str(POOL),
    }.items():
        src = src.replace(key, val)
    return src


def _flat(v) -> list[np.ndarray]:
    if isinstance(v, tuple):
        return [x for item in v for x in _flat(item)]
    return [np.asarray(v)]


def _parse(stdout: str) -> dict[int, tuple[int, int, str, list]]:
    got: dict[int, tuple[int, int, str, list]] = {}
    current = None
    for line in stdout.splitlines():
        m = re.match(r"case (\d+) status (-?\d+) untouched (\d) msg (.*)$", line)
        if m:
            current = int(m.group(1))
            got[current] = (int(m.group(2)), int(m.group(3)), m.group(4), [])
            continue
        m = re.match(r"out (\d+) dtype (\d+) shape([ \d]*) values(.*)$", line)
        if m and current is not None:
            shape = tuple(int(s) for s in m.group(3).split())
            vals = np.array([float(v) for v in m.group(4).split()], dtype=np.float64)
            got[current][3].append(vals.reshape(shape))
    return got


def _build(lib: Lib, tmp_path) -> tuple[str, dict[str, tuple[int, int]]]:
    """Compile ``lib``; its header and the bounds the header states per dynamic size."""
    from myc.aot import signature_specs

    lib.specs = signature_specs(lib.sig)
    _, h = myc.aot(lib.fn, lib.sig, str(tmp_path / f"lib{lib.name}.so"), lib.name)
    header = open(h).read()
    bounds = {s: (int(lo), int(hi)) for s, lo, hi in
              re.findall(r"\* +(\w+): a dynamic size, read from the inputs' shapes; "
                         r"(\d+) <= \w+ <= (\d+)", header)}
    assert set(bounds) == set(lib.base), header
    return h, bounds


def _run(lib: Lib, tmp_path, h: str, arrays, cases: list[Case], n_out: int) -> dict:
    """Every case's status, message and outputs, from one ASan-checked C process."""
    src = tmp_path / "driver.c"
    src.write_text(_driver(lib, arrays, cases, h, n_out))
    exe = tmp_path / "driver"
    subprocess.run([GCC, "-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O1",
                    "-o", str(exe), str(src), f"-I{tmp_path}", f"-L{tmp_path}",
                    f"-l{lib.name}", f"-Wl,-rpath,{tmp_path}"], check=True)
    env = {**os.environ, "ASAN_OPTIONS": ASAN_OPTIONS, "MYC_NUM_THREADS": "2"}
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120,
                         check=False)
    assert res.returncode == 0 and "Sanitizer" not in res.stderr.replace(
        "WARNING: AddressSanitizer failed to allocate", ""), (res.returncode, res.stderr[-3000:])
    assert res.stdout.rstrip().endswith("done"), res.stdout[-2000:]
    got = _parse(res.stdout)
    assert len(got) == len(cases)
    return got


def _check(lib: Lib, cases: list[Case], got: dict, jitted) -> None:
    for k, case in enumerate(cases):
        status, untouched, msg, outs = got[k]
        assert status == case.status, (case.what, status, msg)
        if status != OK:
            assert untouched, f"{case.what}: a failed call wrote to outputs"
            assert msg.startswith(f"myc: {lib.name}: "), (case.what, msg)
            assert re.search(case.message, msg), (case.what, case.message, msg)
            continue
        assert msg == "", (case.what, msg)
        want = _flat(jitted(*[np.ascontiguousarray(x) for x in case.inputs]))
        assert len(outs) == len(want), case.what
        for g, w in zip(outs, want, strict=True):
            assert g.shape == w.shape, (case.what, g.shape, w.shape)
            np.testing.assert_allclose(g, w.astype(np.float64), rtol=1e-5, atol=1e-6,
                                       err_msg=case.what)


@pytest.mark.parametrize("lib", LIBS, ids=[lib.name for lib in LIBS])
def test_hostile_calls_under_asan(tmp_path, lib):
    h, bounds = _build(lib, tmp_path)
    arrays = _inputs(lib)
    jitted = myc.jit(lib.fn)
    n_out = len(_flat(jitted(*arrays)))
    cases = _cases(lib, arrays, bounds) + _issue16_cases(lib) + _tape_cases(lib)
    _check(lib, cases, _run(lib, tmp_path, h, arrays, cases, n_out), jitted)
    print(f"{lib.name}: {len(cases)} calls, "
          f"{sum(c.status != OK for c in cases)} refused, ASan clean")


POOL = 4096  # float32s in the driver's pool; random views start at its middle


def _pool() -> np.ndarray:
    k = np.arange(POOL)
    return (((k * 37) % 101).astype(np.float32) / np.float32(50.0)) - np.float32(1.0)


RANDOM_SIZES = [0, -1, I64_MIN, I64_MAX, 1 << 27, 1 << 28, 1 << 31, 1 << 56, (1 << 56) + 1,
                1 << 62]
RANDOM_STRIDES = [1 << 62, -(1 << 62), I64_MIN, I64_MAX]


def _random_case(rng, k: int) -> Case:
    """``ew`` on a random view of the pool: sizes small or hostile, strides NULL, small
    (any sign, zero) or hostile; the expected status from the ABI's rules."""
    def size():
        return int(rng.integers(1, 7)) if rng.random() < 0.6 else \
            RANDOM_SIZES[rng.integers(len(RANDOM_SIZES))]

    n, m = size(), size()
    strides = None if rng.random() < 0.2 else [
        4 * int(rng.integers(-16, 17)) if rng.random() < 0.85 else
        RANDOM_STRIDES[rng.integers(len(RANDOM_STRIDES))] for _ in range(2)]
    lo_hi = (1, MAX_BYTES)
    code = f"shape[0][0] = {_c_int(n)}; shape[0][1] = {_c_int(m)}; " \
           f"in[0].data = pool + {POOL // 2};"
    what = f"random {k}: f32[{n},{m}] strides {strides}"
    if not lo_hi[0] <= n <= lo_hi[1]:
        return Case(what, code, SHAPE, f"shape\\[0\\] is {n}, but N must be between")
    if not lo_hi[0] <= m <= lo_hi[1]:
        return Case(what, code, SHAPE, f"shape\\[1\\] is {m}, but M must be between")
    if n * m * 4 > MAX_BYTES:
        return Case(what, code + (_set_strides(0, strides) if strides else ""), SHAPE,
                    "sizes too large")
    if strides is not None:
        reach = 4 + sum(abs(s) * (d - 1) for s, d in zip(strides, (n, m), strict=True))
        if reach >= 1 << 63:
            return Case(what, code + _set_strides(0, strides), SHAPE, "strides reach more")
        if reach > POOL // 2 * 4 and n * m <= 1 << 20:
            # a call that is valid but would read past the pool: a caller's bug, not a
            # test of the library; walk the pool instead
            strides = [4, 4 * m]
        code += _set_strides(0, strides)
    if n * m > 1 << 20:  # the arena is over the 64 MiB cap: no gigabytes touched
        return Case(what, code, ALLOC, "out of memory")
    return Case(what, code, OK, inputs=[_view(n, m, strides or [4 * m, 4])])


def _view(n: int, m: int, st: list[int]) -> np.ndarray:
    """What the caller's array holds: element (i, j) at byte ``i*st[0] + j*st[1]`` from
    the middle of the pool (a stride on a length-1 axis is never used)."""
    st = [s if d > 1 else 0 for s, d in zip(st, (n, m), strict=True)]
    idx = POOL // 2 + (np.arange(n)[:, None] * st[0] + np.arange(m)[None, :] * st[1]) // 4
    return _pool()[idx]


def test_random_sizes_and_strides_under_asan(tmp_path):
    """400 calls of the f32[N,M] library on random views of one buffer (the copy of a
    strided input checked element by element) and random hostile sizes and strides."""
    lib = Lib(ew, "f32[N,M]", {"N": 3, "M": 5}, "ew")
    h, _ = _build(lib, tmp_path)
    arrays = _inputs(lib)
    rng = np.random.default_rng(16)
    cases = [_random_case(rng, k) for k in range(400)]
    got = _run(lib, tmp_path, h, arrays, cases, 2)
    _check(lib, cases, got, myc.jit(ew))
    print(f"random: {len(cases)} calls, {sum(c.status == OK for c in cases)} computed, "
          f"{sum(c.status == SHAPE for c in cases)} MYC_ERR_SHAPE, "
          f"{sum(c.status == ALLOC for c in cases)} MYC_ERR_ALLOC, ASan clean")
