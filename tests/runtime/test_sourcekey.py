"""The disk cache's source key: a hit skips parsing and differentiation, and every
change to what the program is made of -- a called helper's source, a global's value, a
default, a closure cell -- gives another key (a stale hit would be a wrong answer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import myc
from myc.frontend.fingerprint import source_key

MODULE = textwrap.dedent("""
    import os
    import numpy as np

    SCALE = float(os.environ.get("SCALE", "2.0"))
    SHIFT = np.full(4, float(os.environ.get("SHIFT", "0.5")), dtype=np.float32)

    def helper(v):
        return np.tanh(v) * HELPER_FACTOR

    def loss(x, w):
        return np.sum(helper(x * w) * SCALE + SHIFT)

    HELPER_FACTOR = 3.0
""")

DRIVER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import myc
    import mod

    x = np.linspace(-0.3, 1.0, 4).astype(np.float32)
    w = np.float32(0.75) * np.ones(4, np.float32)
    f = myc.jit(myc.value_and_grad(mod.loss, argnums=(0, 1)))
    v, (gx, gw) = f(x, w)

    # the reference: the module as it is now, run by NumPy in float64; gradients by
    # central differences
    def fd(i):
        out = []
        for j in range(4):
            a = [x.astype(np.float64), w.astype(np.float64)]
            b = [x.astype(np.float64), w.astype(np.float64)]
            a[i][j] += 1e-6
            b[i][j] -= 1e-6
            out.append(float((mod.loss(*a) - mod.loss(*b)) / 2e-6))
        return out

    print(json.dumps({"v": float(v), "ref_v": float(mod.loss(x.astype(np.float64),
                                                             w.astype(np.float64))),
                      "gx": gx.tolist(), "ref_gx": fd(0), "gw": gw.tolist(), "ref_gw": fd(1),
                      "parsed": f._source.graph is not None}))
""")


def run(tmp_path: Path, cache: Path, **env: str) -> dict:
    (tmp_path / "drive.py").write_text(DRIVER)
    e = dict(os.environ, MYC_CACHE_DIR=str(cache), PYTHONPATH=str(tmp_path), **env)
    e.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run it: bytecode of mod.py cached
    out = subprocess.run([sys.executable, str(tmp_path / "drive.py")], env=e, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(r["v"], r["ref_v"], rtol=1e-5)
    np.testing.assert_allclose(r["gx"], r["ref_gx"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r["gw"], r["ref_gw"], rtol=1e-4, atol=1e-5)
    return r


def edit(module: Path, text: str) -> None:
    """Rewrite the module, its modification time moved on: Python's bytecode cache
    checks the time in whole seconds and the size, and a same-size edit within the
    second would run the old bytecode."""
    st = module.stat()
    module.write_text(text)
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def programs(cache: Path) -> set[str]:
    return {p.name for p in (cache / "program").glob("*.pkl")}


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    return path


def test_a_hit_does_not_parse(tmp_path, module):
    cache = tmp_path / "cache"
    first = run(tmp_path, cache)
    assert first["parsed"]
    before = programs(cache)
    second = run(tmp_path, cache)
    assert not second["parsed"]  # found by source key: no parse, no AD
    assert second["v"] == first["v"]
    assert programs(cache) == before


def test_editing_a_called_helper_invalidates(tmp_path, module):
    cache = tmp_path / "cache"
    first = run(tmp_path, cache)
    # the helper's body changes; loss (the function compiled) is untouched
    edit(module, MODULE.replace("return np.tanh(v) * HELPER_FACTOR",
                                "return np.tanh(v) * HELPER_FACTOR * 2.0"))
    second = run(tmp_path, cache)  # (run() checks it against NumPy)
    assert second["parsed"]
    assert second["v"] != pytest.approx(first["v"])


def test_a_helpers_global_invalidates(tmp_path, module):
    cache = tmp_path / "cache"
    first = run(tmp_path, cache)
    edit(module, MODULE.replace("HELPER_FACTOR = 3.0", "HELPER_FACTOR = 4.0"))
    second = run(tmp_path, cache)
    assert second["parsed"]
    assert second["v"] != pytest.approx(first["v"])


@pytest.mark.parametrize("var", ["SCALE", "SHIFT"])
def test_changing_a_global_value_invalidates(tmp_path, module, var):
    """The source text is the same; only a global scalar's or array's value differs."""
    cache = tmp_path / "cache"
    first = run(tmp_path, cache, **{var: "2.0"})
    second = run(tmp_path, cache, **{var: "5.0"})
    assert second["parsed"]
    assert second["v"] != pytest.approx(first["v"])
    third = run(tmp_path, cache, **{var: "2.0"})  # the first one's entry still serves
    assert not third["parsed"] and third["v"] == first["v"]


def test_a_stale_in_process_parse_is_not_stored_under_the_new_key(tmp_path, module):
    """A process that parsed ``loss`` with SCALE=2, then set SCALE=5, compiles (as
    documented) with the value read at parse time; that program must not be what a
    fresh process with SCALE=5 finds."""
    cache = tmp_path / "cache"
    script = textwrap.dedent("""
        import numpy as np
        import myc
        import mod

        x = np.linspace(-1.0, 1.0, 4).astype(np.float32)
        w = np.ones(4, np.float32)
        myc.jit(myc.value_and_grad(mod.loss, argnums=(0, 1)))(x, w)
        mod.SCALE = 5.0
        # a new wrapper, a new signature: the frontend's graph still says SCALE=2
        myc.jit(myc.value_and_grad(mod.loss, argnums=(0, 1)))(x * 0.75, w * np.float32(0.75))
    """)
    (tmp_path / "stale.py").write_text(script)
    e = dict(os.environ, MYC_CACHE_DIR=str(cache), PYTHONPATH=str(tmp_path), SCALE="2.0")
    out = subprocess.run([sys.executable, str(tmp_path / "stale.py")], env=e, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    run(tmp_path, cache, SCALE="5.0")  # checked against NumPy with SCALE=5


# ----------------------------------------------------------------- the key in process
G_ARRAY = np.arange(3.0)
G_SCALE = 2.0


def _uses_globals(x):
    return np.sum(x * G_ARRAY) * G_SCALE


def _with_default(x, k=2.0):
    return x * k


class _Opaque:
    pass


_OPAQUE = _Opaque()


def _uses_opaque(x):
    return x * _OPAQUE


def test_key_follows_global_values(monkeypatch):
    k0 = source_key(_uses_globals)
    assert k0 is not None and k0 == source_key(_uses_globals)
    monkeypatch.setattr(sys.modules[__name__], "G_SCALE", 3.0)
    k1 = source_key(_uses_globals)
    assert k1 is not None and k1 != k0
    arr = G_ARRAY.copy()
    arr[1] = 7.0  # same shape and dtype, other contents
    monkeypatch.setattr(sys.modules[__name__], "G_ARRAY", arr)
    k2 = source_key(_uses_globals)
    assert k2 is not None and k2 not in (k0, k1)


def test_key_follows_defaults_closures_and_transforms():
    k = source_key(_with_default)
    assert k is not None
    _with_default.__defaults__ = (3.0,)
    try:
        assert source_key(_with_default) not in (None, k)
    finally:
        _with_default.__defaults__ = (2.0,)

    def make(c):
        def f(x):
            return x * c
        return f

    assert source_key(make(1.0)) != source_key(make(2.0))
    assert source_key(make(1.0)) == source_key(make(1.0))
    g = source_key(myc.grad(_uses_globals))
    vg = source_key(myc.value_and_grad(_uses_globals))
    assert None not in (g, vg) and g != vg
    assert source_key(myc.jit(_uses_globals)) != source_key(_uses_globals)


def test_key_gives_up_on_what_it_cannot_describe():
    assert source_key(_uses_opaque) is None
    assert source_key(lambda x: x * _OPAQUE) is None
    ns: dict = {}
    exec("def h(x):\n    return x\n", ns)  # no source file
    assert source_key(ns["h"]) is None


def test_a_function_parsed_unobserved_has_no_key(monkeypatch):
    """Parsed with the cache off (so nobody recorded what it read), then a global
    changed: the frontend's graph is stale for the description, so there is no key."""
    def local(x):
        return x * G_SCALE

    monkeypatch.setenv("MYC_CACHE_DIR", "off")
    myc.jit(local)(1.0)
    assert source_key(local) is None
