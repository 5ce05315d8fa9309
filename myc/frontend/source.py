"""Reading a Python function's source and mapping AST positions to user locations."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass

from myc.errors import Location, MycSyntaxError
from myc.frontend.generators import generators_as_lists


@dataclass
class SourceInfo:
    """The parsed definition of one Python function and how to locate its nodes."""

    tree: ast.FunctionDef | ast.Lambda
    filename: str
    line_offset: int
    col_offset: int
    name: str

    def loc(self, node: ast.AST | None) -> Location | None:
        if node is None or not hasattr(node, "lineno"):
            return None
        line = node.lineno + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset
        end_col = getattr(node, "end_col_offset", None)
        if end_col is not None and getattr(node, "end_lineno", node.lineno) == node.lineno:
            end_col += self.col_offset
        else:
            end_col = None
        text = linecache.getline(self.filename, line)
        return Location(self.filename, line, col, end_col, text.rstrip("\n"), self.name)


def _find_lambda(tree: ast.AST, code: types.CodeType, line_offset: int,
                 col_offset: int) -> ast.Lambda | None:
    """The lambda whose body holds the code object's first instruction position."""
    names = list(code.co_varnames[: code.co_argcount])
    candidates = [n for n in ast.walk(tree)
                  if isinstance(n, ast.Lambda) and [a.arg for a in n.args.args] == names]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    for line, _end, col, _end_col in code.co_positions():
        if line is None or col is None:
            continue
        for n in candidates:
            b = n.body
            start = (b.lineno + line_offset, b.col_offset + col_offset)
            end = (b.end_lineno + line_offset, b.end_col_offset + col_offset)
            if start <= (line, col) < end:
                return n
    return None


def _module_tree(filename: str) -> ast.Module | None:
    import linecache

    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None


def read_function(fn: types.FunctionType) -> SourceInfo:
    """Parse ``fn``'s definition; raise ``MycSyntaxError`` when its source is unavailable."""
    code = fn.__code__
    filename = code.co_filename
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise MycSyntaxError(
            f"cannot read the source of function '{fn.__qualname__}' ({exc}); myc compiles "
            "functions defined in files, not in an interactive prompt or exec string",
            Location(filename, code.co_firstlineno)) from None
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    # columns shift by the indentation that dedent removed
    first_line = next((ln for ln in lines if ln.strip()), "")
    ded_first = next((ln for ln in dedented.splitlines(True) if ln.strip()), "")
    col_offset = len(first_line) - len(ded_first)
    line_offset = first - 1
    if fn.__name__ == "<lambda>":
        tree = None
        try:
            tree = ast.parse(dedented)
        except SyntaxError:
            tree = None
        node = _find_lambda(tree, code, line_offset, col_offset) if tree is not None else None
        if node is None:  # its lines alone do not parse (a lambda inside a multi-line
            # dict or call): find it in the whole file, by the code's positions
            whole = _module_tree(filename)
            node = _find_lambda(whole, code, 0, 0) if whole is not None else None
            if node is not None:
                return SourceInfo(node, filename, 0, 0, "<lambda>")
        if node is None:
            raise MycSyntaxError(
                "cannot isolate the source of this lambda; define it with 'def' instead",
                Location(filename, code.co_firstlineno))
        return SourceInfo(node, filename, line_offset, col_offset, "<lambda>")
    try:
        tree = ast.parse(dedented)
    except SyntaxError as exc:  # pragma: no cover - Python already compiled it
        raise MycSyntaxError(f"cannot parse source: {exc}",
                             Location(filename, first)) from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if isinstance(node, ast.AsyncFunctionDef):
                raise MycSyntaxError("'async def' is not supported",
                                     Location(filename, node.lineno + line_offset))
            generators_as_lists(node)  # def g(): yield x -> the list of what it yields
            return SourceInfo(node, filename, line_offset, col_offset, fn.__name__)
    raise MycSyntaxError(f"no function definition found for '{fn.__qualname__}'",
                         Location(filename, first))
