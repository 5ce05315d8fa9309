"""Scope analysis: which names a function assigns (its locals, in Python's rule)."""

from __future__ import annotations

import ast

from myc.frontend.effects import is_effect_call
from myc.prims.effects import TOKEN

_MUTATING_METHODS = frozenset({"append", "extend", "insert"})


def _target_names(target: ast.AST, out: set[str]) -> None:
    if isinstance(target, ast.Name):
        out.add(target.id)
    elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        out.add(target.value.id)  # d[k] = v rebinds d (myc's dicts and lists are values)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _target_names(elt, out)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, out)


def attribute_roots(stmts: list[ast.stmt]) -> set[str]:
    """The variables whose objects ``stmts`` change by assigning attributes
    (``self.total = ...``, ``self.t += 1``, ``self.mean[c, :] = ...``): myc rebinds
    them to the changed object, so a loop carries them (not descending into nested
    functions, whose writes to an enclosing variable are refused)."""
    out: set[str] = set()

    def root(t: ast.AST) -> None:
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute):
            t = t.value
        if not isinstance(t, ast.Attribute):
            return
        while isinstance(t, ast.Attribute):
            t = t.value
        if isinstance(t, ast.Name):
            out.add(t.id)

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Lambda)):
            return
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for sub in ast.walk(t):
                    if isinstance(sub, (ast.Attribute, ast.Subscript)) and \
                            isinstance(sub.ctx, ast.Store):
                        root(sub)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return out


# NumPy calls that write into their first argument: ``np.fill_diagonal(a, v)``,
# ``np.add.at(a, idx, v)`` (a ufunc's ``at``); myc rebinds that argument
_WRITES_FIRST = frozenset({"fill_diagonal", "at", "copyto"})
WRITES_SELF = frozenset({"fill", "sort"})  # (array methods writing into their array)


def inplace_target(call: ast.AST) -> str | None:
    """The local ``call`` writes into (``np.fill_diagonal(R, v)`` -> ``"R"``,
    ``R.fill(0)`` -> ``"R"``), or None."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        if call.func.attr in _WRITES_FIRST and call.args and \
                isinstance(call.args[0], ast.Name):
            return call.args[0].id
        if call.func.attr in WRITES_SELF and isinstance(call.func.value, ast.Name):
            return call.func.value.id
    return None


def _method_statement(call: ast.Call) -> bool:
    """``x.m(...)`` as a statement that is not a list mutation (``out.append(v)``)."""
    f = call.func
    return isinstance(f, ast.Attribute) and not (
        f.attr in _MUTATING_METHODS and mutated_root(f.value) is not None)


def mutated_root(recv: ast.AST) -> str | None:
    """The variable a list method's receiver is rebound through: ``out`` for
    ``out.append``, ``d`` for ``d[k].append`` and ``P[s][a].append`` (None otherwise)."""
    for _ in range(3):
        if isinstance(recv, ast.Name):
            return recv.id
        if not isinstance(recv, ast.Subscript):
            return None
        recv = recv.value
    return None


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    """Names bound by ``stmts`` (not descending into nested functions or lambdas),
    including lists and dicts mutated in place, which myc rebinds."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _target_names(t, out)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            _target_names(node.target, out)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _target_names(node.target, out)
        elif isinstance(node, ast.NamedExpr):
            _target_names(node.target, out)
        elif (isinstance(node, ast.Call) and is_effect_call(node)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and (isinstance(node.value.func, ast.Name) or _method_statement(node.value))):
            # prints or draws, or a call made for its effects (``show(x)``, ``ax.plot(x)``:
            # which must run, or fail, where Python would): the effect token
            # (myc/frontend/effects.py)
            out.add(TOKEN)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and \
                node.value.func.attr in _MUTATING_METHODS and \
                (root := mutated_root(node.value.func.value)) is not None:
            out.add(root)  # out.append(x), d[k].append(x), P[s][a].append(t) rebind it
        if isinstance(node, ast.Expr) and (name := inplace_target(node.value)) is not None:
            out.add(name)  # np.fill_diagonal(R, v) rebinds R
        for child in ast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return out
