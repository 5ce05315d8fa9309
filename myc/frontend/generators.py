"""Generator functions as functions returning the list of what they yield.

``def layers(w): for ...: yield (W, b)`` consumed by ``for W, b in layers(w)`` is, in
a language of values, the function that builds the list ``[(W, b), ...]`` and returns
it: nothing a generator body computes can observe whether the consumer has run yet
(myc has no mutable objects to share with it).  So the frontend rewrites, before
anything else reads the function: ``__myc_yielded = []`` first, each ``yield v``
statement into ``__myc_yielded.append(v)``, each bare ``return`` (and the end) into
``return __myc_yielded``.  The list is a static structure like any other: its length
must be known when the program specializes (a generator looping ``while`` on data is
refused as such a list is).  A generator the consumer would stop early (``next``, a
``break`` out of an infinite ``while True``) has no list form: ``yield`` used as an
expression, ``yield from``, and ``return value`` in a generator stay refused.
"""

from __future__ import annotations

import ast

ACC = "__myc_yielded"


def _own_nodes(fn: ast.FunctionDef):
    """The nodes of ``fn``'s body that belong to it (not to nested functions)."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                             ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _convertible(fn: ast.FunctionDef) -> bool:
    own = list(_own_nodes(fn))
    if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own):
        return False
    statement_yields = {id(n.value) for n in own
                        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Yield)}
    for n in own:
        if isinstance(n, ast.YieldFrom):
            return False
        if isinstance(n, ast.Yield) and id(n) not in statement_yields:
            return False
        if isinstance(n, ast.Return) and n.value is not None:
            return False
    return True


class _Rewrite(ast.NodeTransformer):
    def visit_FunctionDef(self, node):  # nested functions are their own business
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Expr(self, node: ast.Expr):
        if not isinstance(node.value, ast.Yield):
            return node
        value = node.value.value if node.value.value is not None else ast.Constant(None)
        call = ast.Call(func=ast.Attribute(value=ast.Name(id=ACC, ctx=ast.Load()),
                                           attr="append", ctx=ast.Load()),
                        args=[value], keywords=[])
        return ast.copy_location(ast.Expr(value=ast.copy_location(call, node)), node)

    def visit_Return(self, node: ast.Return):
        return ast.copy_location(ast.Return(value=ast.Name(id=ACC, ctx=ast.Load())), node)


def _rewrite(fn: ast.FunctionDef) -> None:
    first = fn.body[0]
    body = [_Rewrite().visit(s) for s in fn.body]
    init = ast.Assign(targets=[ast.Name(id=ACC, ctx=ast.Store())],
                      value=ast.List(elts=[], ctx=ast.Load()))
    end = ast.Return(value=ast.Name(id=ACC, ctx=ast.Load()))
    last = fn.body[-1]
    fn.body = [ast.copy_location(init, first), *body, ast.copy_location(end, last)]
    for node in ast.walk(fn):
        if "lineno" in node._attributes and not hasattr(node, "lineno"):
            ast.copy_location(node, last)


def generators_as_lists(tree: ast.AST) -> None:
    """Rewrite, in place, every generator function in ``tree`` that has a list form."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and _convertible(node):
            _rewrite(node)
