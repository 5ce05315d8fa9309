"""The ROCm backend: kernel IR to AMDGPU code objects through LLVM (the AMDGPU instance
of the shared GPU emitter, ``myc.backends.gpu``) and LLD, launched through CuPy's ROCm
build.  Untested on AMD hardware: see docs/gpu.md."""
