"""The ``myc`` command: ``myc ir FILE:FUNC``, ``myc run FILE:FUNC``, ``myc bench``."""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import signal
import sys
from typing import Any

from myc.errors import MycError
from myc.pipeline import STAGES


def _load(target: str) -> Any:
    """The function named by ``path/to/file.py:func`` or ``package.module:func``."""
    if ":" not in target:
        raise SystemExit(f"myc: expected FILE:FUNC or MODULE:FUNC, got {target!r}")
    where, name = target.rsplit(":", 1)
    if where.endswith(".py") or os.path.sep in where:
        path = os.path.abspath(where)
        if not os.path.exists(path):
            raise SystemExit(f"myc: no such file: {where}")
        mod_name = "_myc_cli_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        sys.path.insert(0, os.path.dirname(path))
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    else:
        module = importlib.import_module(where)
    try:
        return getattr(module, name)
    except AttributeError:
        raise SystemExit(f"myc: {where} has no function {name!r}") from None


def _parse_args(text: str | None) -> tuple:
    """Example arguments: Python literals, or NumPy expressions written with ``np.``
    (``"1.0, (2, 3)"``, ``"np.ones(1024, np.float32) * 5"``)."""
    if not text:
        return ()
    try:
        value = ast.literal_eval(f"({text},)")
    except (ValueError, SyntaxError):
        import numpy as np

        try:  # the user's own command line: NumPy constructors are allowed
            value = eval(f"({text},)", {"__builtins__": {}, "np": np, "numpy": np})  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - any mistake in the text is reported
            raise SystemExit(f"myc: cannot read --args {text!r}: {type(exc).__name__}: "
                             f"{exc}") from None
    return tuple(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="myc", description="myc: a differentiable array "
                                     "compiler for numeric Python")
    sub = parser.add_subparsers(dest="command", required=True)
    p_ir = sub.add_parser("ir", help="print a function's IR after a stage")
    p_ir.add_argument("target", help="FILE.py:FUNC or module:FUNC")
    p_ir.add_argument("--args", default="", help="example arguments as Python literals")
    p_ir.add_argument("--stage", default="parsed",
                      choices=list(STAGES))
    p_ir.add_argument("--backend", default="cpu",
                      help="for --stage target: cuda (PTX), rocm (AMDGCN) or opencl (OpenCL C)")
    p_run = sub.add_parser("run", help="run a function on literal arguments")
    p_run.add_argument("target")
    p_run.add_argument("--args", default="")
    p_run.add_argument("--backend", default="cpu")
    p_aot = sub.add_parser("aot", help="compile a function ahead of time into a shared "
                           "library plus a C header (see docs/aot.md)")
    p_aot.add_argument("target", help="FILE.py:FUNC or module:FUNC")
    p_aot.add_argument("--sig", required=True,
                       help='argument shapes and dtypes, e.g. "f32[64,4], f32[4]"')
    p_aot.add_argument("-o", "--output", required=True, help="the library, e.g. libf.so")
    p_aot.add_argument("--name", default=None, help="the exported C function's name")
    sub.add_parser("bench", help="run the benchmark harness (see docs/benchmarks.md)",
                   add_help=False)
    if hasattr(signal, "SIGPIPE"):  # `myc ir ... | head` ends quietly
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        try:
            from benchmarks.cli import main as bench_main
        except ImportError as exc:
            print(f"myc bench: the benchmark harness is not installed ({exc})", file=sys.stderr)
            return 2
        return bench_main(argv[1:])
    ns = parser.parse_args(argv)
    import myc

    try:
        fn = _load(ns.target)
        if ns.command == "aot":
            so_path, h_path = myc.aot(fn, ns.sig, ns.output, ns.name)
            print(f"wrote {so_path} and {h_path}")
            return 0
        args = _parse_args(ns.args)
        if ns.command == "ir":
            print(myc.ir(fn, *args, stage=ns.stage, backend=ns.backend))
        else:
            print(myc.jit(fn, backend=ns.backend)(*args))
    except MycError as exc:
        print(f"myc: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
