"""OpenCL backend: kernel IR to OpenCL C, run through PyOpenCL (PoCL on this machine)."""
