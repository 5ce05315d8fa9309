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
    monkeypatch.setenv("MYC_VECTOR_WIDTH", "native")
    assert tuning.choose("skx", AVX512, measure) == AVX512
    monkeypatch.setenv("MYC_VECTOR_WIDTH", "512")
    assert tuning.choose("skx", AVX512, measure) == tuning.widened(AVX512)
    assert tuning.choose("znver3", AVX2, measure) == AVX2
    assert not calls
    monkeypatch.setenv("MYC_VECTOR_WIDTH", "1024")
    with pytest.raises(MycValueError, match="MYC_VECTOR_WIDTH"):
        tuning.choose("skx", AVX512, measure)


def test_probe_runs_on_this_cpu():
    cpu, features = jit.host()
    assert tuning.probe_time(cpu, features) > 0


def test_512_bit_vectors_only_where_chosen(cache, monkeypatch):
    """LLVM's tuning for Intel's AVX-512 servers prefers 256-bit vectors, so ``native`` gives
    AVX-512 instructions on ``ymm`` registers and only ``512`` gives ``zmm`` code;
    compiled (not run) for such a CPU on any x86 machine."""
    import llvmlite.binding as llvm

    from myc.backends.cpu import llvm_module
    from myc.backends.cpu.codegen import codegen

    llvm_module._init()
    module, _ = codegen(tuning._probe_kernel())
    regs = {}
    for width in ("256", "native", "512"):
        monkeypatch.setenv("MYC_VECTOR_WIDTH", width)
        features = tuning.choose("sapphirerapids", AVX512)
        assert tuning.has_avx512(features) == (width != "256")
        tm = llvm.Target.from_triple("x86_64-unknown-linux-gnu").create_target_machine(
            cpu="sapphirerapids", features=features, opt=3)
        asm = tm.emit_assembly(llvm_module.optimize(llvm_module.parse(module, tm), tm))
        regs[width] = (asm.count("%zmm"), asm.count("%ymm"))
    assert regs["256"][0] == 0 and regs["native"][0] == 0 and regs["512"][0] > 100, regs


def test_auto_measures_the_three_choices(cache):
    times = {"256": 6.5e-3, "native": 5.0e-3, "512": 4.0e-3}

    def measure(cpu, features):
        width = ("256" if not tuning.has_avx512(features) else
                 "512" if features.endswith(tuning.ZMM) else "native")
        return times[width]

    assert tuning.choose("spr", AVX512, measure) == tuning.widened(AVX512)
    times.update({"512": 4.8e-3})  # not 10% faster than "native": the CPU's own tuning
    assert tuning.choose("emr", AVX512, measure) == AVX512
