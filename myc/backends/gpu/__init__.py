"""What every GPU backend shares: the LLVM kernel emitter (passes of phases), the
emulator, the launch layout and the host glue (CuPy arrays on the device)."""
