"""The import rule of ``docs/architecture.md``, checked on the source.

Every module of ``myc/`` is parsed (every ``import``, including those inside functions
and under ``TYPE_CHECKING``: a deferred import is still a dependency) and the test fails
on an import cycle between modules, or on an import that runs against the stage order --
a stage may use the stages before it, never one after it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# the stage order, first to last; a module may import from its own layer and the layers
# before it.  ``errors``, ``timings`` and ``support`` are services every stage uses.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "timings", "support", "misc", "builtins"),
    ("prims",),
    ("ir",),
    ("frontend",),
    ("ad",),
    ("infer",),
    ("opt",),
    ("lower",),
    ("backends",),
    ("pipeline",),
    ("runtime",),
    ("aot",),
    ("api", "jacobians"),
    ("__init__",),  # the package: its public names
    ("cli", "tools"),  # entry points: the command line, the docs generator
)


def modules(package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package``."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path], package: str
            ) -> set[tuple[str, int]]:
    """``(module, line)`` for each module of ``package`` that ``name`` imports."""
    is_pkg = path.name == "__init__.py"
    here = name if is_pkg else name.rpartition(".")[0]

    def resolve(dotted: str) -> str:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted

    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    found.add((resolve(alias.name), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != package:
                continue
            for alias in node.names:  # ``from pkg import submodule``
                sub = f"{mod}.{alias.name}"
                found.add((sub if sub in known else resolve(mod), node.lineno))
    return {(m, line) for m, line in found if m and m != name}


def graph(package: str) -> dict[str, set[tuple[str, int]]]:
    known = modules(package)
    return {name: imports(name, path, known, package) for name, path in known.items()}


def cycles(edges: dict[str, set[tuple[str, int]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    succ = {m: sorted({t for t, _ in out}) for m, out in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(succ):
        if v not in index:
            visit(v)
    return found


def layer(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    for i, names in enumerate(LAYERS):
        if key in names:
            return i
    raise AssertionError(f"{module}: myc/{key} has no place in LAYERS; add it to the stage "
                         "order here and in docs/architecture.md")


def test_every_module_has_a_stage():
    for name in modules("myc"):
        layer(name)


def test_no_import_cycles_in_myc():
    found = cycles(graph("myc"))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_import_against_the_stage_order():
    bad = [f"{m}:{line} imports {t} ({LAYERS[layer(t)][0]} comes after "
           f"{LAYERS[layer(m)][0]})"
           for m, out in sorted(graph("myc").items()) for t, line in sorted(out)
           if layer(t) > layer(m)]
    assert not bad, "imports against the stage order:\n" + "\n".join(bad)


def test_no_import_cycles_in_benchmarks():
    found = cycles(graph("benchmarks"))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("source, expected", [
    ("from myc.ir.nodes import Graph\n", {"myc.ir.nodes"}),
    ("def f():\n    from myc import lower\n", {"myc.lower"}),
    ("import myc.ir.nodes as n\n", {"myc.ir.nodes"}),
    ("from myc.ir.nodes import Graph as G\nfrom myc.ir import nodes\n", {"myc.ir.nodes"}),
])
def test_the_checker_sees_every_import_form(tmp_path, source, expected):
    known = {"myc": tmp_path / "__init__.py", "myc.ir": tmp_path / "ir.py",
             "myc.ir.nodes": tmp_path / "nodes.py", "myc.lower": tmp_path / "lower.py",
             "myc.x": tmp_path / "x.py"}
    (tmp_path / "x.py").write_text(source)
    assert {m for m, _ in imports("myc.x", tmp_path / "x.py", known, "myc")} == expected


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {("b", 1)}, "b": {("c", 1)}, "c": {("a", 1)}, "d": {("a", 1)}}) \
        == [["a", "b", "c"]]


def test_no_backend_name_compares_outside_the_registry():
    """Stages ask the backend object (``myc/backends/registry.py``), never its name."""
    names = {"interp", "cpu", "opencl", "cuda"}
    bad = []
    for name, path in modules("myc").items():
        if name == "myc.backends.registry":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Compare):
                continue
            for side in [node.left, *node.comparators]:
                consts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) \
                    else [side]
                if any(isinstance(c, ast.Constant) and c.value in names for c in consts):
                    bad.append(f"{name}:{node.lineno}")
    assert not bad, "backend names compared outside the registry: " + ", ".join(bad)
