"""Vector width by measurement (``tuning.py``): AVX-512 kept only where it measured
faster, the choice stored per CPU, forced by MYC_VECTOR_WIDTH; other CPUs untouched."""

from __future__ import annotations

import pytest

from myc.backends.cpu import jit, tuning
from myc.errors import MycValueError

AVX512 = "+sse2,+avx2,+fma,+avx512f,+avx512bw,+avx512vl"
AVX2 = "+sse2,+avx2,+fma,-avx512f"


def timer(wide_s: float, narrow_s: float):
    calls = []

    def measure(cpu, features):
        calls.append(features)
        return narrow_s if features.endswith(tuning.NO_AVX512) else wide_s

    return measure, calls


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MYC_VECTOR_WIDTH", raising=False)


def test_avx512_dropped_where_it_is_slower_and_the_choice_is_remembered(cache):
    measure, calls = timer(wide_s=11.3e-3, narrow_s=6.5e-3)
    assert tuning.choose("skx", AVX512, measure) == tuning.narrowed(AVX512)
    assert calls  # measured once...
    again, calls2 = timer(wide_s=1e-3, narrow_s=9e-3)
    assert tuning.choose("skx", AVX512, again) == tuning.narrowed(AVX512)
    assert not calls2  # ...then read back from the disk cache


def test_avx512_kept_where_it_is_clearly_faster(cache):
    measure, _ = timer(wide_s=4e-3, narrow_s=6.5e-3)
    assert tuning.choose("spr", AVX512, measure) == AVX512
    measure, _ = timer(wide_s=6.2e-3, narrow_s=6.5e-3)  # within the margin: narrower
    assert tuning.choose("icx", AVX512, measure) == tuning.narrowed(AVX512)


def test_forced_widths_and_cpus_without_avx512(cache, monkeypatch):
    measure, calls = timer(1.0, 2.0)
    monkeypatch.setenv("MYC_VECTOR_WIDTH", "256")
    assert tuning.choose("skx", AVX512, measure) == tuning.narrowed(AVX512)
    monkeypatch.setenv("MYC_VECTOR_WIDTH", "512")
    assert tuning.choose("skx", AVX512, measure) == AVX512
    assert tuning.choose("znver3", AVX2, measure) == AVX2
    assert not calls
    monkeypatch.setenv("MYC_VECTOR_WIDTH", "1024")
    with pytest.raises(MycValueError, match="MYC_VECTOR_WIDTH"):
        tuning.choose("skx", AVX512, measure)


def test_probe_runs_on_this_cpu():
    cpu, features = jit.host()
    assert tuning.probe_time(cpu, features) > 0
