"""Code objects checked without an AMD GPU: linked by LLD with ``--no-undefined`` (a
math call left unresolved fails the link) and read back with pyelftools -- an AMDGPU
ELF for the HSA ABI of code-object version 5, a kernel symbol and its ``.kd``
descriptor for every pass, and the target (``amdgcn-amd-amdhsa--gfx90a``) in the note's
metadata, with the wavefront size the architecture runs."""

from __future__ import annotations

import io

import pytest

from myc.backends.rocm.amdgpu import ARCHS, CODE_OBJECT_VERSION
from myc.backends.rocm.runtime import kernel_hsaco
from myc.lower.kernel import Kernel

WAVE = {"gfx90a": 64, "gfx942": 64, "gfx1100": 32}


def lld_or_skip() -> None:
    from myc.backends.rocm.amdgpu import lld
    from myc.errors import MycRuntimeError

    try:
        lld()
    except MycRuntimeError:
        pytest.skip("no LLD to link code objects (pip install ziglang)")


def elftools_or_skip():
    return pytest.importorskip("elftools.elf.elffile", reason="pip install pyelftools")


def check_code_object(image: bytes, names: list[str], arch: str) -> None:
    """``image`` is a loadable code object for ``arch`` holding kernels ``names``."""
    ELFFile = elftools_or_skip().ELFFile
    elf = ELFFile(io.BytesIO(image))
    assert elf["e_machine"] == "EM_AMDGPU"
    assert elf["e_type"] == "ET_DYN"  # linked (-shared): what hipModuleLoadData takes
    # (pyelftools names OS ABI 64 after ARM; for AMDGPU it is ELFOSABI_AMDGPU_HSA)
    assert image[7] == 64 and image[8] == CODE_OBJECT_VERSION - 2  # HSA, v5 is ABI 3
    syms = {s.name: s for s in elf.get_section_by_name(".dynsym").iter_symbols()}
    for n in names:
        assert syms[n]["st_info"]["type"] == "STT_FUNC", n
        assert syms[f"{n}.kd"]["st_info"]["type"] == "STT_OBJECT", n  # kernel descriptor
    assert not [s for s in syms.values() if s.name and s["st_shndx"] == "SHN_UNDEF"]
    notes = b"".join(note["n_descdata"] for note in elf.get_section_by_name(".note").iter_notes()
                     if note["n_name"] == "AMDGPU")
    assert f"amdgcn-amd-amdhsa--{arch}".encode() in notes
    assert b".wavefront_size" in notes
    # the wave size the metadata promises (msgpack: the key, then a positive fixint)
    at = notes.index(b".wavefront_size") + len(b".wavefront_size")
    assert notes[at] == WAVE[arch], (arch, notes[at])
    # every kernel declares the block size it is launched with (256: msgpack uint16)
    assert notes.count(b".max_flat_workgroup_size\xcd\x01\x00") == len(names)


def link_and_check(kernel: Kernel, archs=ARCHS) -> bytes:
    """``kernel`` 's code object for ``archs``, each checked; the first returned."""
    lld_or_skip()
    elftools_or_skip()
    first = None
    for arch in archs:
        image, plan = kernel_hsaco(kernel, arch)
        check_code_object(image, [p.name for p in plan.passes], arch)
        first = first or image
    return first
