"""Specialization by abstract interpretation: the graph IR run on abstract arrays.

The tracer is the reference evaluator with one change: numeric data it is not given
-- the arrays and floats of the arguments -- is *abstract* (dtype and static shape),
and a primitive applied to abstract values is not computed but recorded, with its
result's abstract value from the shape/dtype rules, into one flat, typed, monomorphic
graph.  Everything else is evaluated: ints and bools of the signature, tuples,
closures, calls, switches on known conditions, environments and ``ZERO`` of AD -- so
closures, tuple plumbing and AD bookkeeping vanish and a ``grad`` becomes a plain
dataflow graph of array operations.  Shape and dtype errors surface here, before
anything runs, at the user's line.

A condition that depends on abstract data (a data-dependent ``while`` or ``if``) cannot
be specialized away: the tracer raises ``GraphBreak`` and the caller runs that
signature on the reference evaluator instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import LIBRARY_DIRS, Location, MycError, MycSyntaxError, MycTypeError, MycValueError
from myc.infer import stacked
from myc.infer.calls import Recursion
from myc.infer.control import (
    ControlFlow,
    Fork,
    Jump,
    LoopNeeded,
    MaybeUndef,
    Scope,
    SymBool,
    Tree,
    abstract_leaf,
    escapes,
    loop_headers,
    store_weight,
    unroll_pays,
)
from myc.infer.dynslice import DynamicSlices, DynSlice, holds_dynamic_slice
from myc.infer.masked import WHY as MASK_WHY
from myc.infer.masked import Masked, MaskedLen, MaskedSelections, holds_masked
from myc.infer.rules import infer
from myc.infer.signature import EFFECT_WHY, GraphBreak, signature_key  # noqa: F401 - re-exported
from myc.infer.store_forward import read_through
from myc.ir.evaluator import Interpreter, translate_exception
from myc.ir.nodes import Apply, Closure, Constant, Graph, Node
from myc.prims import ZERO, P, Primitive
from myc.prims.abstract import AArray, AScalar, abstract_of, zeros_proxy
from myc.prims.adprims import not_float_attribute
from myc.prims.arrays import concat_index
from myc.prims.containers import STRUCTURAL as CONTAINER_PRIMS
from myc.prims.containers import DictValue, ListValue, is_container, is_object, like
from myc.prims.effects import RngArg, is_generator
from myc.prims.ops import aliased, called_change, holds_list, unchanged_message, unchanged_refused

MAX_NODES = 60_000
_FOLD_LIMIT = 4096
_BROADCASTING = frozenset(["expand_reduced", "broadcast_to", "full", "zeros_like",
                           "ones_like"])
# myc's, NumPy's and SciPy's source: a line there is not the user's
_MYC_DIR = LIBRARY_DIRS


def has_sym(v: Any) -> bool:
    if isinstance(v, (Node, DynSlice, Masked, MaskedLen)):
        return True
    if isinstance(v, tuple):
        return any(has_sym(x) for x in v)
    if isinstance(v, dict):
        return any(has_sym(x) for x in v.values())
    return False


_BREAK = {
    "truth": "a condition depends on array or float data",
    "not_": "a condition depends on array or float data",
    "range_len": "a loop's trip count depends on array or float data",
    "make_slice": "a slice bound depends on array or float data",
    "arange": "an array's size depends on array or float data",
    "linspace": "an array's size depends on array or float data",
    "zeros": "an array's shape depends on array or float data",
    "ones": "an array's shape depends on array or float data",
}

# primitives whose NumPy implementation only moves values around: safe on symbolic leaves
_PLUMBING = frozenset(["env_get", "mask_zero", "is_zero", "check_defined", "zeros_grad_like",
                       "default_if_undef", "is_undef", "is_tuple",
                       "all_zero", "switch", "make_tuple", "is_none", "is_int",
                       "computed_index",
                       *CONTAINER_PRIMS])


class Tracer(Recursion, ControlFlow, DynamicSlices, MaskedSelections, Interpreter):
    """Runs a graph with abstract leaves, recording array work into ``self.trace``."""

    def __init__(self, root: Graph, concrete: bool = False, typed_calls: bool = False):
        super().__init__(root)
        self._init_calls()
        self.typed_calls = typed_calls
        self.loops: list = []
        # lists indexed by a run-time int, stacked (``rows_of``): item ids -> array
        self.stacked_items: dict[tuple, tuple] = {}
        self.outer_traces: list[Graph] = []  # the programs a loop body is traced within
        # loop mode needs symbolic decisions; guarded mode takes them on concrete values
        self.headers = set() if concrete else loop_headers(self.plans)
        self.trace = Graph(f"{root.name}:typed", None, root.loc)
        # guarded mode: symbolic values also carry this call's concrete values, and a
        # data-dependent decision is taken on them and recorded as a guard to re-check
        self.concrete = concrete
        self.vals: dict[int, Any] = {}
        self.guards: list[tuple[str, Node, Any]] = []
        # gathers computed only for their bounds check (a gradient that needs the
        # index but not the picked values): outputs of the program, then discarded
        self.checks: list[tuple[Graph, Node]] = []
        self.last_effect: dict[int, Node] = {}  # per program traced: its latest effect

    def value_of(self, v: Any) -> Any:
        if isinstance(v, Node):
            return self.vals[v.id]
        if isinstance(v, tuple):
            return like(v, [self.value_of(x) for x in v])
        if isinstance(v, dict):
            return {k: self.value_of(x) for k, x in v.items()}
        return v

    def decide(self, prim: Primitive, args: list[Any], loc: Location | None) -> Any:
        """Guarded mode: take a data-dependent decision on this call's values."""
        result = Interpreter.call_prim(prim, [self.value_of(a) for a in args], loc)
        for leaf in _sym_leaves(tuple(args)):
            if prim.name in ("truth", "not_"):
                self.guards.append(("truth", leaf, bool(self.vals[leaf.id])))
            else:
                self.guards.append(("eq", leaf, self.vals[leaf.id]))
        return result

    # -- calls ---------------------------------------------------------------------------
    def call(self, fn: Any, args: list[Any], loc: Location | None,
             scope: Scope | None = None) -> Any:
        """The evaluator's call loop (``_call``); a call written by the user is the line
        that what the callee emits without a line of its own (derivative rules, the
        primitives inside ``J``) is reported at."""
        if loc is None or loc.filename.startswith(_MYC_DIR):
            return self._call(fn, args, loc, scope)
        saved, self.user_loc = self.user_loc, loc
        try:
            return self._call(fn, args, loc, scope)
        finally:
            self.user_loc = saved

    def _call(self, fn: Any, args: list[Any], loc: Location | None,
              scope: Scope | None = None) -> Any:
        """The evaluator's call loop, plus held-back tail calls, forks and loop entries."""
        opened: list[Graph] = []  # graphs this call runs: a call to one is recursion
        try:
            return self._call_loop(fn, args, loc, scope, opened)
        finally:
            for g in opened:
                self.open[g] -= 1

    def _call_loop(self, fn: Any, args: list[Any], loc: Location | None,
                   scope: Scope | None, opened: list[Graph]) -> Any:
        fetch = self.fetch
        first = True
        while True:
            if isinstance(fn, Primitive):
                return self.call_prim(fn, args, loc)
            if isinstance(fn, Fork):
                r = self.call_fork(fn, args, loc, scope)
                if not isinstance(r, Jump):
                    return r
                fn, args, first = r.fn, r.args, False  # the sides' common continuation
                continue
            if not isinstance(fn, Closure):
                raise MycTypeError(f"'{type(fn).__name__}' object is not callable", loc)
            g = fn.graph
            if not first and scope is not None and escapes(g, scope):
                return Jump(fn, args)
            if g in self.headers:
                ctx = next((c for c in self.loops if c.graph is g and c.frame is fn.frame),
                           None)
                if ctx is not None and ctx.mode == "unroll" and not self.concrete:
                    if ctx.second is None and self.count > ctx.start:  # one iteration in
                        ctx.second = (fn, args, self.count, self.marks())
                    if not unroll_pays(ctx, self.count):
                        raise LoopNeeded(ctx, True, fn, args)
            if g in self.headers and ctx is None:
                r = self.enter_loop(fn, args, loc, scope)
                if r[0] == "done":
                    return r[1]
                if r[1] is None:
                    return r[2]
                fn, args, first = r[1], r[2], False  # the loop's exit: a tail call
                continue
            if self.typed_calls:
                if self.wants_invoke(fn):
                    return self.invoke_call(fn, args, loc)
                self.open[g] = self.open.get(g, 0) + 1
                opened.append(g)
            first = False
            frame, tail, out_plan = self.activate(fn, args, loc)
            if not tail:
                return fetch(out_plan, frame)
            ops, loc = out_plan
            if loc is not None and not loc.filename.startswith(_MYC_DIR):
                self.user_loc = loc  # a tail call the user wrote (restored by ``call``)
            fn = fetch(ops[0], frame)
            args = [fetch(o, frame) for o in ops[1:]]

    def returned(self, value: Any, loc: Location | None) -> Any:
        if isinstance(value, (Jump, Tree)):
            raise GraphBreak("data-dependent control flow inside an expression", loc)
        return value

    # -- emitting ----------------------------------------------------------------------
    def emit(self, prim: Primitive, args: list[Any], loc: Location | None,
             abstract: Any = None) -> Node:
        if loc is None or loc.filename.startswith(_MYC_DIR):
            loc = self.user_loc or loc  # work inside myc's own rules: the user's line
        if abstract is None:
            try:
                abstract = infer(prim, [a.abstract if isinstance(a, Node) else
                                        _abstract_tree(a, loc) for a in args])
            except GraphBreak:
                raise
            except MycError as exc:
                raise exc.with_loc(loc) from None
            except NotImplementedError as exc:
                raise GraphBreak(str(exc), loc) from None
            except Exception as exc:  # noqa: BLE001 - NumPy's own error, located
                raise translate_exception(exc, prim.name, loc) from None
        effect = not prim.pure
        if effect and self.concrete:  # decisions taken on this call's values: not a draw's
            raise GraphBreak(EFFECT_WHY, loc)
        if effect and getattr(self, "building", None):  # a typed function's own program
            raise GraphBreak("a random draw or print in a recursive function whose depth "
                             "depends on data", loc)
        if effect:  # after the program's previous effect, whichever function made it
            last = self.last_effect.get(id(self.trace))
            if last is not None:
                args = [(args[0], last), *args[1:]]
        if self.path is not None and _may_fail(prim, args):
            # a side of an if-converted branch runs whether or not it is taken: what can
            # fail at run time runs only where its path holds
            args = [self.path, prim, abstract, *args]
            prim = P.guarded
        inputs = [self.as_node(a, loc) for a in args]
        node = self.trace.apply(prim, *inputs, loc=loc)
        node.abstract = abstract
        if self.concrete:
            value = Interpreter.call_prim(prim, [self.value_of(a) for a in args], loc)
            if isinstance(abstract, AScalar):
                value = _coerce(value, abstract)
            self.vals[node.id] = value
        if effect:
            self.last_effect[id(self.trace)] = node
        self.count += 1 if prim is not P.where else store_weight(args, abstract)
        if self.count > MAX_NODES:
            raise GraphBreak(f"the specialized program exceeds {MAX_NODES} operations "
                             "(a long loop unrolled?)", loc, unbounded=True)
        return node

    def marks(self) -> tuple:
        """What tracing records beside the nodes it emits (checks, guards, effects, typed
        functions): unchanged, the nodes emitted since are dead if nothing reads them."""
        return (len(self.checks), len(self.guards), self.last_effect.get(id(self.trace)),
                len(getattr(self, "made", ())))

    count = 0
    strict_loops = False  # a loop chosen to stay a loop that cannot: break, not unroll
    stack_lists = True  # lists a loop appends to carried as arrays (``myc.infer.stacked``)

    user_loc: Location | None = None

    def as_node(self, v: Any, loc: Location | None) -> Node:
        if isinstance(v, Node):
            return v
        if isinstance(v, (Masked, MaskedLen, DynSlice)):  # tracer-only values escaping
            raise _escaping(v, loc)
        if isinstance(v, tuple) and has_sym(v):
            n = self.trace.apply(P.make_tuple, *[self.as_node(x, loc) for x in v], loc=loc)
            n.abstract = None
            return n
        return Constant(v, loc)

    # -- primitives ----------------------------------------------------------------------
    def call_prim(self, prim: Primitive, args: list[Any], loc: Location | None) -> Any:
        if len(args) != len(prim.params) or prim.variadic:
            full = prim.fill_args(args)
            if full is not None:
                args = full
        if loc is not None and not loc.filename.startswith(_MYC_DIR):
            self.user_loc = loc
        elif loc is not None and self.user_loc is not None:
            loc = self.user_loc  # inside myc's own functions: errors at the user's line
        if args and type(args[0]) is stacked.StackList and prim.name in ("getitem", "len"):
            return stacked.read(self, prim.name, args, loc)  # a list a loop appends to
        if any(isinstance(a, MaybeUndef) for a in args):
            m = args[0]
            if prim.name != "check_defined" or not isinstance(m, MaybeUndef):
                raise GraphBreak("a variable that a data-dependent loop may leave unset", loc)
            if m.flag is True:
                return m.value
            return self.emit(P.assert_defined, [m.flag, m.value, args[1]], loc,
                             abstract=abstract_leaf(m.value))
        if any(isinstance(a, SymBool) for a in args):
            if prim.name in ("truth", "switch"):
                pass  # a condition already made symbolic
            elif prim.name == "not_":
                return SymBool(self.emit(P.eq, [args[0].node, False], loc))
            else:  # a condition used as a value: its boolean node
                args = [a.node if isinstance(a, SymBool) else a for a in args]
        if prim.name == "truth" and isinstance(args[0], SymBool):
            return args[0]
        if prim.name == "switch" and isinstance(args[0], Node):
            # a loop counter made symbolic: the frontend's range tests skip ``truth``
            if self.concrete:
                return self.decide(prim, args, loc)
            args = [self.symbolic_truth(P.truth, args[0], loc), *args[1:]]
        if prim.name == "switch" and isinstance(args[0], SymBool):
            return self.merge_value(args[0].node, args[1], args[2], loc)
        if not prim.pure:  # a draw or a print: runs when the program does, never now
            return self.emit(prim, args, loc)
        if not any(has_sym(a) for a in args):
            if prim.name in _BROADCASTING and args:
                r = Interpreter.call_prim(prim, args, loc)
                if isinstance(r, np.ndarray) and r.size > _FOLD_LIMIT:
                    # a scalar broadcast to a big array stays a node: fusion reads it with
                    # stride 0 instead of the program carrying a big constant
                    return self.emit(prim, args, loc, abstract=AArray(r.dtype, r.shape))
                return r
            return Interpreter.call_prim(prim, args, loc)
        name = prim.name
        if name == "fstring":  # of values computed from data: no strings at run time
            raise MycSyntaxError("an f-string or str() of a value computed from the "
                               "arguments is not supported in compiled code", loc,
                               hint="format ints and strings known when the program is "
                                    "compiled (f'W{i}'); print values: print('loss', loss)")
        if name == "as_operand":  # a sequence made an array; an array (or a masked
            x = args[0]           # selection) passed on: no node
            if type(x) is DictValue:
                from myc.prims.ops import DICT_OPERAND

                raise MycTypeError(DICT_OPERAND.format(keys=list(x.keys_)), loc)
            if type(x) is tuple or type(x) is ListValue:
                return self.call_prim(P.array, [x, None], loc)
            return x
        if self.selections and name not in _PLUMBING and any(holds_masked(a) for a in args):
            return self.masked_call(prim, args, loc)
        if name in ("truth", "not_") and not self.concrete and isinstance(args[0], Node):
            return self.symbolic_truth(prim, args[0], loc)
        if name == "make_slice" and self.forms is not None:
            ds = self.dynamic_slice_of(args)  # a static length: one program for every start
            if ds is not None:
                return ds
        if name == "range_len" and not self.concrete:
            n = self.run_time_range_len(args, loc)
            if n is not None:
                return n
        if name in _BREAK:
            if self.concrete:
                return self.decide(prim, args, loc)
            raise GraphBreak(_BREAK[name], loc)
        if name in _PLUMBING or (name in ("add", "mul") and
                                 any(isinstance(a, tuple) for a in args)):
            return Interpreter.call_prim(prim, args, loc)  # values moved, not computed
        handler = getattr(self, f"p_{name}", None)
        if handler is not None:
            return handler(args, loc)
        node = self.emit(prim, args, loc)
        if self.forms is not None:
            self.note_int_arith(name, args, node)
        return node

    def p_array(self, args, loc):
        """``np.array`` of items that are the rows of one array, in order (a list a loop
        node appended to: ``myc.infer.stacked``): that array, whole."""
        items = args[0]
        if args[1] is None and isinstance(items, tuple) and len(items) > 1 and \
                all(isinstance(v, Node) for v in items):
            a = items[0].abstract
            if all(v.abstract == a for v in items) and (
                    isinstance(a, AArray) or (isinstance(a, AScalar) and not a.weak)):
                parts = stacked.whole_rows(items, stacked.row_of)
                if len(parts) < len(items):
                    shape = (1, *(a.shape or ()))
                    parts = [stacked.emit_rows(self, p, loc) if isinstance(p, stacked.RowsOf)
                             else self.emit(P.reshape, [p, shape], loc) for p in parts]
                    return parts[0] if len(parts) == 1 else \
                        self.emit(P.concatenate, [tuple(parts), 0], loc)
        return self.emit(P.array, args, loc)

    def p_concatenate(self, args, loc):
        """Rows of one array, reshaped to a leading axis of 1 and joined in order
        (``np.stack`` of a list a loop node appended to): that array, whole."""
        parts, axis = args
        if axis == 0 and isinstance(parts, tuple) and len(parts) > 1:
            merged = stacked.whole_rows(parts, stacked.unit_row_of)
            if len(merged) < len(parts):
                merged = [stacked.emit_rows(self, p, loc) if isinstance(p, stacked.RowsOf)
                          else p for p in merged]
                if len(merged) == 1:
                    return merged[0]
                return self.emit(P.concatenate, [tuple(merged), 0], loc)
        return self.emit(P.concatenate, args, loc)

    def p_after(self, args, loc):
        """A function's result after its effects: the token is kept as an output."""
        token, value = args
        if isinstance(token, Node) and self.last_effect:  # (no effect yet: nothing to keep)
            self.checks.append((self.trace, token))
        return value

    def p_checked(self, args, loc):
        """Indexing results nothing uses, kept as outputs for their bounds checks."""
        checks, value = args
        for n in _leaves(checks):
            if isinstance(n, Node):
                self.checks.append((self.trace, n))
        return value

    def p_getitem(self, args, loc):
        x, index = args
        if holds_dynamic_slice(index):
            r = self.dynamic_getitem(x, index, loc)
            if r is None:
                raise GraphBreak("a slice bound depends on array or float data", loc)
            return r
        if isinstance(x, tuple):
            if has_sym(index):
                if self.concrete:
                    return self.decide(P.getitem, args, loc)
                rows = self.rows_of(x, index, loc)
                if rows is not None:
                    return self.emit(P.getitem, [rows, index], loc)
                raise GraphBreak("a tuple is indexed by array or float data", loc)
            return Interpreter.call_prim(P.getitem, args, loc)
        sel = self.masked_getitem(x, index)
        if sel is not None:
            return sel
        # an element read past stores made elsewhere (``myc.infer.store_forward``)
        return self.emit(P.getitem, [read_through(x, index), index], loc)

    def rows_of(self, x: tuple, index: Any, loc) -> Node | None:
        """A list or tuple of arrays of one type, indexed by a run-time int (``for x in
        steps`` in a loop node): its items stacked into one array (``x[i]`` is then its
        row ``i``, with NumPy's negative indices and bounds, as the list's), made once
        before the loops whose bodies do not make the items."""
        if not (isinstance(index, Node) and isinstance(index.abstract, AScalar) and
                index.abstract.dtype.kind in "iu") or len(x) == 0 or \
                any(not isinstance(v, (Node, np.ndarray, np.generic)) for v in x):
            return None
        a = [abstract_leaf(v) for v in x]
        if any(not isinstance(b, (AArray, AScalar)) or getattr(b, "weak", False) or
               b != a[0] for b in a):
            return None
        traces = self.open_traces()
        key = (tuple(id(v) for v in x), tuple(id(g) for g in traces))
        hit = self.stacked_items.get(key)
        if hit is not None and all(u is v for u, v in zip(hit[1], x, strict=True)):
            return hit[0]  # (the items kept: an id is not reused while they live)
        # the innermost trace that made an item: the stack is emitted there
        depth = 0
        for v in x:
            if isinstance(v, Node):
                k = next((i for i, g in enumerate(traces) if v.graph is g), None)
                if k is None:
                    return None
                depth = max(depth, k)
        shape = (1,) + tuple(a[0].shape or ())
        saved = self.trace
        self.trace = traces[depth]
        try:
            parts = tuple(self.emit(P.reshape, [v, shape], loc) for v in x)
            rows = self.emit(P.concatenate, [parts, 0], loc)
        finally:
            self.trace = saved
        self.stacked_items[key] = (rows, x)
        return rows

    def open_traces(self) -> list[Graph]:
        """The programs being traced, outermost first (loop bodies inside them)."""
        return [*self.outer_traces, self.trace]

    def p_basic_index(self, args, loc):
        """``P.basic_index`` on an index holding run-time ints or dynamic slices: the
        answer depends only on the parts' kinds, known now."""
        key = args[0]
        parts = key if isinstance(key, tuple) else (key,)

        def basic(p) -> bool:
            if isinstance(p, Node):
                a = p.abstract
                return isinstance(a, AScalar) and a.dtype.kind in "iu"
            return isinstance(p, DynSlice) or P.basic_index.impl(p)
        return all(basic(p) for p in parts)

    def _shaped(self, prim, args, loc, shape_at: int):
        """A primitive whose result's shape is its argument ``shape_at``: data there is
        decided on this call's value (guarded), as for ``np.zeros(n)``."""
        if has_sym(args[shape_at]):
            if self.concrete:
                return self.decide(prim, args, loc)
            raise GraphBreak("an array's shape depends on array or float data", loc)
        return self.emit(prim, args, loc)

    def p_reshape(self, args, loc):
        return self._shaped(P.reshape, args, loc, 1)

    def p_broadcast_to(self, args, loc):
        return self._shaped(P.broadcast_to, args, loc, 1)

    def p_full(self, args, loc):
        return self._shaped(P.full, args, loc, 0)

    def p_receiver(self, args, loc):
        x, method = args
        a = x.abstract if isinstance(x, Node) else abstract_of(x)
        if isinstance(a, AScalar) and a.weak:
            raise MycTypeError(f"'{ {'f': 'float', 'i': 'int', 'b': 'bool'}[a.dtype.kind]}' "
                               f"object has no attribute '{method}'", loc)
        return x

    def p_np_first(self, args, loc):
        a, b = args
        aa = a.abstract if isinstance(a, Node) else abstract_of(a)
        ab = b.abstract if isinstance(b, Node) else abstract_of(b)
        if not (isinstance(aa, AScalar) and aa.weak and isinstance(ab, AScalar) and ab.weak):
            return a  # a NumPy operand already: the operator's semantics are NumPy's
        return self.emit(P.np_first, args, loc)

    def p_aug_assign(self, args, loc):
        x, r = args
        ax = x.abstract if isinstance(x, Node) else abstract_of(x)
        ar = r.abstract if isinstance(r, Node) else abstract_of(r)
        if not isinstance(ax, AArray) or (isinstance(ar, AArray) and ar.dtype == ax.dtype
                                          and ar.shape == ax.shape):
            return r  # a rebinding: nothing to cast or broadcast
        return self.emit(P.aug_assign, args, loc)

    def p_contains(self, args, loc):
        container, item = args
        if isinstance(container, DictValue) and not has_sym(item):
            return item in container.keys_
        raise GraphBreak("'in' on a value that depends on array or float data", loc)

    def p_len(self, args, loc):
        x = args[0]
        if isinstance(x, tuple):
            return len(x)
        return Interpreter.call_prim(P.len, [zeros_proxy(x.abstract)], loc)

    def _from_abstract(self, prim, args, loc):
        return Interpreter.call_prim(prim, [zeros_proxy(args[0].abstract)], loc)

    def p_shape(self, args, loc):
        return self._from_abstract(P.shape, args, loc)

    def p_ndim(self, args, loc):
        return self._from_abstract(P.ndim, args, loc)

    def p_size(self, args, loc):
        return self._from_abstract(P.size, args, loc)

    def p_dtype(self, args, loc):
        return self._from_abstract(P.dtype, args, loc)

    def p_list_guard(self, args, loc):
        value, message = args
        if holds_list(value):
            text, _, hint = message.partition("|hint|")
            raise MycSyntaxError(text, loc=loc, hint=hint or None)
        return value

    def p_alias_guard(self, args, loc):
        value, updated, message = args
        if aliased(value, updated, _traced_ndim):
            raise MycValueError(message, loc)
        return value

    def p_unchanged_by(self, args, loc):
        value, fn, where, message = args
        change = called_change(fn, where)
        if not unchanged_refused(change, value, _traced_ndim):
            return value
        text, _, hint = unchanged_message(change, message).partition("|hint|")
        raise MycValueError(text, loc, hint=hint)

    def p_is_float(self, args, loc):
        return self._from_abstract(P.is_float, args, loc)

    def p_seed_like(self, args, loc):
        return self._from_abstract(P.seed_like, args, loc)

    def p_check_scalar_output(self, args, loc):
        y = args[0]
        if isinstance(y, Node):
            Interpreter.call_prim(P.check_scalar_output, [zeros_proxy(y.abstract)], loc)
            return y
        return Interpreter.call_prim(P.check_scalar_output, args, loc)

    def p_check_aux_output(self, args, loc):
        return Interpreter.call_prim(P.check_aux_output, args, loc)  # a tuple: static

    def p_gadd(self, args, loc):
        x, y = args
        if x is ZERO:
            return y
        if y is ZERO:
            return x
        if isinstance(x, tuple):
            return like(x if is_container(x) else y,
                        [self.p_gadd([a, b], loc) for a, b in zip(x, y, strict=True)])
        if isinstance(x, dict):
            out = dict(x)
            for k, v in y.items():
                out[k] = self.p_gadd([out[k], v], loc) if k in out else v
            return out
        if isinstance(x, Masked) or isinstance(y, Masked):
            return self.masked_call(P.add, [x, y], loc)
        return self.emit(P.add, [x, y], loc)

    def p_env_add(self, args, loc):
        env, key, value = args
        if value is ZERO:
            return env
        out = {} if env is ZERO else dict(env)
        out[key] = self.p_gadd([out[key], value], loc) if key in out else value
        return out

    def p_unpack(self, args, loc):
        value, n = args
        if isinstance(value, tuple):
            return Interpreter.call_prim(P.unpack, args, loc)
        a = value.abstract
        if not isinstance(a, AArray) or not a.shape or a.shape[0] != n:
            Interpreter.call_prim(P.unpack, [zeros_proxy(a), n], loc)  # raises the error
        return tuple(self.emit(P.getitem, [value, i], loc) for i in range(n))

    def p_unpack_grad(self, args, loc):
        value, d = args
        if isinstance(value, tuple) or d is ZERO:
            return d
        a = value.abstract
        rows = [Constant(np.zeros(a.shape[1:], a.dtype)).value if r is ZERO else r
                for r in d]
        return self.emit(P.array, [tuple(rows), None], loc)

    def p_concat_grad(self, args, loc):
        """The cotangent of each concatenated piece: a basic slice of ``d`` each."""
        xs, axis, d = args
        if isinstance(xs, Apply) and isinstance(xs.inputs[0], Constant) and \
                xs.inputs[0].value is P.make_tuple:  # the pieces as one node (a loop's)
            xs = tuple(i.value if isinstance(i, Constant) else i for i in xs.inputs[1:])
        if d is ZERO:
            return tuple(ZERO for _ in xs)
        shapes = [x.abstract.shape if isinstance(x, Node) else np.shape(x) for x in xs]
        out, pos = [], 0
        nd = len(d.abstract.shape) if isinstance(d, Node) else np.ndim(d)
        for shape in shapes:
            if axis is None:
                n = int(np.prod(shape))
                piece = self.emit(P.getitem, [d, (slice(pos, pos + n),)], loc)
                out.append(self.emit(P.reshape, [piece, tuple(shape)], loc))
            else:
                n = shape[int(axis) % nd]
                out.append(self.emit(P.getitem, [d, concat_index(nd, axis, pos, pos + n)],
                                     loc))
            pos += n
        return tuple(out)

    def p_array_grad(self, args, loc):
        obj, d = args
        if isinstance(obj, tuple):
            return tuple(self.p_array_grad([o, self.emit(P.getitem, [d, i], loc)], loc)
                         for i, o in enumerate(obj))
        return d

    def p_getitem_grad(self, args, loc):
        x, index, d = args
        if holds_dynamic_slice(index):
            r = self.dynamic_getitem_grad(x, index, d, loc)
            if r is None:
                raise GraphBreak("a slice bound depends on array or float data", loc)
            return r
        if isinstance(x, tuple):
            return Interpreter.call_prim(P.getitem_grad, args, loc)
        if not isinstance(x, Node) and abstract_of(x) is not None and \
                np.result_type(x).kind != "f":
            return ZERO
        if isinstance(x, Node) and x.abstract.dtype.kind != "f":
            return ZERO
        if has_sym(index):
            # the scatter (and the rewrites that replace it) trusts the forward gather
            # to have checked the index; that gather is dead when only the gradient is
            # asked for, so it is kept as an output for its bounds check
            self.checks.append((self.trace, self.emit(P.getitem, [x, index], loc)))
        return self.emit(P.getitem_grad, args, loc)

    def p_cast_grad(self, args, loc):
        d, x = args
        if d is ZERO or isinstance(x, (tuple, dict)):
            return d
        xa = x.abstract if isinstance(x, Node) else abstract_of(x)
        if xa is None or (isinstance(xa, AScalar) and xa.weak and xa.dtype.kind == "f"):
            return d
        if xa.dtype.kind != "f":
            return ZERO
        da = d.abstract if isinstance(d, Node) else abstract_of(d)
        if da is not None and da.dtype == xa.dtype:
            return d
        return self.emit(P.cast_grad, args, loc)

    def p_grad_cast(self, args, loc):
        d, x = args
        if isinstance(x, tuple) and is_object(x):
            ds = (ZERO,) * len(x) if d is ZERO else d
            return like(x, [None if not_float_attribute(b) else self.p_grad_cast([a, b], loc)
                            for a, b in zip(ds, x, strict=True)])
        if isinstance(x, tuple):
            ds = (ZERO,) * len(x) if d is ZERO else d
            return like(x, [self.p_grad_cast([a, b], loc) for a, b in zip(ds, x, strict=True)])
        if not isinstance(x, Node):
            return Interpreter.call_prim(P.grad_cast, [d, x], loc)  # refuses int/bool
        xa = x.abstract
        if xa.dtype.kind != "f":  # an int/bool argument in argnums: refused, zero or not
            Interpreter.call_prim(P.grad_cast, [ZERO, zeros_proxy(xa)], loc)
        if d is ZERO:
            return Interpreter.call_prim(P.grad_cast, [ZERO, zeros_proxy(xa)], loc) \
                if isinstance(xa, AScalar) else np.zeros(xa.shape, xa.dtype)
        if xa.dtype.kind != "f":
            Interpreter.call_prim(P.grad_cast, [ZERO, zeros_proxy(xa)], loc)
        return self.emit(P.grad_cast, [d, x], loc, abstract=xa)

    def p_materialize(self, args, loc):
        t, x = args
        if isinstance(t, tuple) and isinstance(x, tuple):
            return like(x, [self.p_materialize([a, b], loc) for a, b in zip(t, x, strict=True)])
        if t is not ZERO:
            return t
        if isinstance(x, Node):
            xa = x.abstract
            return Interpreter.call_prim(P.materialize, [ZERO, np.zeros(xa.shape, xa.dtype)
                                                         if isinstance(xa, AArray)
                                                         else zeros_proxy(xa)], loc)
        return Interpreter.call_prim(P.materialize, [ZERO, _concrete_like(x)], loc)

    def p_tangent_out(self, args, loc):
        t, y = args
        if isinstance(y, tuple):
            ts = (ZERO,) * len(y) if t is ZERO else t
            return like(y, [self.p_tangent_out([a, b], loc) for a, b in zip(ts, y, strict=True)])
        ya = y.abstract if isinstance(y, Node) else abstract_of(y)
        if t is ZERO or ya is None:
            return Interpreter.call_prim(P.tangent_out, [t, zeros_proxy(ya) if ya else y],
                                         loc) if t is ZERO and ya is not None and \
                isinstance(ya, AScalar) else (np.zeros(ya.shape, ya.dtype if ya.dtype.kind
                                                       == "f" else np.float64)
                                              if t is ZERO and ya is not None else t)
        ta = t.abstract if isinstance(t, Node) else abstract_of(t)
        if isinstance(ya, AArray):
            dt = ya.dtype if ya.dtype.kind == "f" else np.result_type(ta.dtype, np.float64)
            out = AArray(np.dtype(dt), ya.shape)
        else:
            out = AScalar(np.dtype(np.float64), True) if ya.weak else \
                AScalar(ya.dtype if ya.dtype.kind == "f" else np.dtype(np.float64), False)
        if ta == out:
            return t
        return self.emit(P.tangent_out, [t, y], loc, abstract=out)


_PY_ARITH = frozenset(["truediv", "floordiv", "mod", "pow"])


def _may_fail(prim: Primitive, args: list[Any]) -> bool:
    """Can ``prim(*args)`` raise at run time (not at specialization)?"""
    name = prim.name
    if prim.may_fail or not prim.pure:  # (an effect runs only where its path holds)
        return True
    if name in ("getitem", "getitem_grad", "index_set"):
        return has_sym(args[1])
    if name in _PY_ARITH:  # Python scalars raise on zero where NumPy returns inf
        return all((isinstance(a, Node) and isinstance(a.abstract, AScalar) and a.abstract.weak)
                   or type(a) in (int, float, bool) for a in args)
    return False


def _abstract_tree(v: Any, loc: Location | None = None) -> Any:
    """Abstract values for symbolic leaves inside a concrete structure (index tuples...)."""
    if isinstance(v, Node):
        return v.abstract
    if isinstance(v, tuple):
        return tuple(_abstract_tree(x, loc) for x in v)
    if isinstance(v, (Masked, MaskedLen, DynSlice)):  # where no rule of the tracer takes it
        raise _escaping(v, loc)
    return v


def _escaping(v: Any, loc: Location | None) -> GraphBreak:
    """A value only the tracer holds (a run-time slice, a data-mask selection) reaching
    an operation that would need it as a constant: checked where a non-node operand
    becomes one (``as_node``, ``_abstract_tree``), not on every operation emitted."""
    if isinstance(v, DynSlice):
        return GraphBreak("a slice with a run-time bound used other than to index", loc)
    return GraphBreak(MASK_WHY, loc)


def _concrete_like(x: Any) -> Any:
    return x


def _coerce(value: Any, a: AScalar) -> Any:
    if a.weak:
        return {"f": float, "i": int, "b": bool}[a.dtype.kind](value)
    return a.dtype.type(value)


def _walk_leaves(v: Any, symbolic: bool):
    """The leaves of a structure of tuples and dicts: its nodes (``symbolic``), or the
    constants held in it."""
    if isinstance(v, tuple):
        for x in v:
            yield from _walk_leaves(x, symbolic)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _walk_leaves(x, symbolic)
    elif isinstance(v, Node) == symbolic:
        yield v


def _traced_ndim(x: Any) -> int:
    """A traced leaf's rank for the alias rules (``ops.aliased``): -1 when not an array."""
    if isinstance(x, Node):
        return x.abstract.ndim if isinstance(x.abstract, AArray) else -1
    return x.ndim if isinstance(x, np.ndarray) else -1


def _const_leaves(v: Any):
    return _walk_leaves(v, False)


def _sym_leaves(v: Any):
    return _walk_leaves(v, True)


def symbolize(value: Any, trace: Graph, path: str, vals: dict | None = None,
              runtime_int: bool = False,
              runtime_leaves: tuple[frozenset[int], list[int]] | None = None) -> Any:
    """The argument as the tracer sees it: data leaves become trace parameters (and an
    int, with ``runtime_int``, or at a leaf index in ``runtime_leaves`` -- the indices
    and a running count of the call's leaves: ``myc.infer.runtime_ints``)."""
    if isinstance(value, tuple):
        return like(value, [symbolize(v, trace, f"{path}[{i}]", vals, False, runtime_leaves)
                            for i, v in enumerate(value)])
    if runtime_leaves is not None:
        wanted, count = runtime_leaves
        runtime_int = count[0] in wanted
        count[0] += 1
    if is_generator(value):  # bound to the call's generator when it runs
        k = trace.flags["rngs"] = trace.flags.get("rngs", 0) + 1
        return RngArg(k - 1, type(value).__name__)
    a = abstract_of(value)
    if isinstance(a, AArray) or (isinstance(a, AScalar) and a.dtype.kind == "f") or (
            runtime_int and isinstance(a, AScalar) and a.dtype.kind == "i"):
        p = trace.add_parameter(path)
        p.abstract = a
        if vals is not None:
            vals[p.id] = value
        return p
    return value


def trace(graph: Graph, args: list[Any], guarded: bool = False,
          typed_calls: bool = False, strict_loops: bool = False,
          runtime_ints: frozenset[int] = frozenset(),
          pins: list[int] | None = None) -> tuple[Graph, Any]:
    """The flat typed graph of ``graph`` specialized on ``args``, and its output template.

    With ``guarded``, decisions that depend on data are taken on ``args``' values and
    recorded in ``typed.flags["guards"]`` as ``(kind, expected)`` for the extra outputs
    that follow the result leaves: the program is valid for a call only if they hold.
    Before the guards come ``typed.flags["checks"]`` outputs computed only for the
    errors they raise (gathers whose values are dead), discarded after the run.
    With ``typed_calls``, recursive calls under data-dependent branches become typed
    functions (``myc.infer.calls``) instead of being unrolled.  The int leaves at
    indices ``runtime_ints`` (tuples flattened) are parameters too, not constants;
    ``pins``: their values in this call, for a variant whose dynamic slices out of
    range are pinned to this call's starts (``myc.infer.dynslice``).
    """
    tracer = Tracer(graph, concrete=guarded, typed_calls=typed_calls)
    tracer.strict_loops = strict_loops
    vals = tracer.vals if guarded else None
    leaf_count = [0]  # ``runtime_ints`` are leaf indices, tuples flattened
    sym_args = [symbolize(a, tracer.trace, p.name, vals, False, (runtime_ints, leaf_count))
                for a, p in zip(args, graph.parameters, strict=True)]
    if runtime_ints and not guarded:
        tracer.start_dynamic_slices([
            p for p in tracer.trace.parameters
            if isinstance(p.abstract, AScalar) and p.abstract.dtype.kind == "i"], pins)
    out = tracer.run(*sym_args)
    if tracer.forms is not None:
        tracer.trace.flags["int_ok"] = frozenset(tracer.int_ok)
        tracer.trace.flags["pinned"] = tracer.pinned_count
    return finish_trace(tracer, out)


def finish_trace(tracer: Tracer, out: Any) -> tuple[Graph, Any]:
    """Close the tracer's program: ``out``'s symbolic leaves (then guards) are outputs."""
    if isinstance(out, (Jump, Tree, Fork)):
        raise GraphBreak("data-dependent control flow at the program's end")
    if any(isinstance(n, (Masked, MaskedLen)) for n in _leaves(out)):
        out = tracer.result_lengths(out)  # (a selection itself: a GraphBreak)
    tracer.trace.flags["template"] = out
    outs = [n for n in _leaves(out) if isinstance(n, Node)]
    checks = [n for g, n in tracer.checks if g is tracer.trace]
    outs += checks
    tracer.trace.flags["checks"] = len(checks)
    guards = [(kind, expected) for kind, _, expected in tracer.guards]
    outs += [node for _, node, _ in tracer.guards]
    tracer.trace.flags["guards"] = guards
    tracer.trace.output = tracer.trace.apply(P.make_tuple, *outs) if outs else Constant(())
    return tracer.trace, out


def _leaves(v: Any):
    if isinstance(v, tuple):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


def is_apply(n: Node) -> bool:
    return isinstance(n, Apply)
