"""The CUDA backend: kernel IR to PTX through LLVM, launched through CuPy."""
