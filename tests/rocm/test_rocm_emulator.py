"""The ROCm kernels' numerics on the host.  The emulator (``myc.backends.gpu.emulate``)
runs the phase functions the shared emitter generates; the AMDGPU module is those very
functions plus the ``amdgpu_kernel`` entries: checked here function by function, then
the emulator is run against the kernel IR's reference on the cases that matter for
AMD's wavefronts (block reductions through shared memory, split reductions, row
reductions with NaN and infinities, int64 wrapping, the transcendentals)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from llvmlite import ir

from myc.backends.gpu.codegen import generate
from myc.backends.gpu.emulate import EmulatedKernel
from myc.backends.rocm.runtime import module_for
from myc.lower.kernel import Kernel
from tests.cpu.test_exprs import check_group, fusion_group
from tests.cuda import checks


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    assert_same_phases(kernel)
    return EmulatedKernel(kernel)(inputs), kernel.reference(inputs)


def _defined(module: ir.Module) -> dict[str, str]:
    return {f.name: str(f) for f in module.functions if f.blocks}


def assert_same_phases(kernel: Kernel) -> None:
    """Every function the emulator runs is defined, identically, in the AMDGPU module,
    whose only other functions are the kernels (one per pass)."""
    amd, plan = module_for(kernel, "gfx90a")
    host = ir.Module(name=kernel.name)
    host_plan = generate(kernel, host)
    assert [p.name for p in plan.passes] == [p.name for p in host_plan.passes]
    assert [(p.grid, p.block, p.phases) for p in plan.passes] == \
        [(p.grid, p.block, p.phases) for p in host_plan.passes]
    a, h = _defined(amd), _defined(host)
    assert set(a) - set(h) == {p.name for p in plan.passes}
    for name, text in h.items():
        assert a[name] == text, name
    for p in plan.passes:
        assert a[p.name].startswith("define amdgpu_kernel void"), p.name


@settings(max_examples=30, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_match_the_reference(case):
    check_group(case, run)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_special_values(dtype):
    checks.check_softmax_rows(run, dtype)


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_long_reductions_split_into_pieces(op, dtype):
    checks.check_long_reduction(run, op, dtype)


def test_column_reductions_and_int_wrapping():
    checks.check_columns_and_int_wrapping(run)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transcendentals_within_the_cpu_backends_bounds(dtype):
    checks.check_transcendentals(run, dtype)
