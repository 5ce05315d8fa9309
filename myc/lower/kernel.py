"""Kernel IR: one fused loop nest over a static index space, target-neutral.

A :class:`Kernel` computes over a static iteration *domain* ``shape``.  It reads input
:class:`Buffer` s through :class:`Load` nodes, computes scalar expressions, and writes each
output once, either elementwise over the whole domain (:class:`Store`) or reduced over
some domain axes (:class:`Reduce`).  A kernel with several outputs is a fusion group: all
outputs share the domain and one pass over it.

Expressions are trees (DAGs when subexpressions are shared) of frozen nodes:
:class:`Const`, :class:`Load`, :class:`Unary`, :class:`Binary`, :class:`Select`,
:class:`Cast` and :class:`RowReduce` (a reduction along the domain's last axis that the
rest of the kernel reads back: a softmax's row max and row sum, computed row by row in
the pass that uses them). Every node has a ``dtype`` (one of :data:`DTYPES`); ``Const``,
``Load`` and ``Cast`` state theirs, the others take it from their operands, which must
already agree -- the producer does all promotion with explicit ``Cast`` s, so no backend
ever infers one. Node constructors check these typing rules and raise ``AssertionError``
naming the node: a bad kernel is a compiler bug.

Broadcasting: a buffer of shape ``s`` is read through a ``Load`` with ``axes=None`` under
NumPy's rules, right-aligned against the domain, with size-1 or missing dimensions
broadcast.  With ``axes=(a0, a1, ...)``, buffer axis ``i`` runs along domain axis ``ai``
instead (any injective map, so a transposed read fuses too); its size must equal that
domain axis's or be 1.  Buffers are C-contiguous; backends derive strides (0 on
broadcast axes).  Runtime scalars are 0-d buffers, ``Buffer(name, dtype, ())``.

:meth:`Kernel.reference` evaluates a kernel with NumPy; it defines the semantics every
backend is tested against.  The scalar ops, the operand kinds each accepts and their NumPy
references are declared once, in ``myc.prims.scalar`` (NumPy's ufuncs in the node's dtype,
except where noted there: ``sigmoid``; integer ``pow``, ``mod`` and ``floordiv`` by zero,
which give 0 rather than raising).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from myc.lower.dims import Dim, SymFloat
from myc.prims.scalar import SCALAR_OPS, binary_ops, unary_ops

DTYPES = ("float32", "float64", "int64", "bool")
FLOATS = ("float32", "float64")

# op: operand kinds ("f" float, "i" int64, "b" bool) it accepts (myc.prims.scalar).
UNARY_OPS = unary_ops()
BINARY_OPS = binary_ops()
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
REDUCE_OPS = ("sum", "max", "min")


def kind(dtype: str) -> str:
    """``"f"``, ``"i"`` or ``"b"``."""
    return "f" if dtype in FLOATS else "i" if dtype == "int64" else "b"


def identity(op: str, dtype: str) -> float | int | bool:
    """The starting value of a reduction (what an empty reduction gives)."""
    if dtype == "bool":
        return op == "min"
    if op == "sum":
        return 0.0 if dtype in FLOATS else 0
    if dtype in FLOATS:
        return -math.inf if op == "max" else math.inf
    info = np.iinfo(np.int64)
    return int(info.min) if op == "max" else int(info.max)


class Expr:
    """Base of scalar expression nodes: hashable, compared structurally.

    Each node gets a 128-bit structural digest at construction, from its fields and its
    children's digests, so hashing and equality are O(1) even on DAGs whose tree
    expansion is exponential (the optimizer's fused gradients are such DAGs).
    """

    __slots__ = ()
    dtype: str

    def _key(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self) if f.compare)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Expr) and self._digest == other._digest)

    def children(self) -> tuple[Expr, ...]:
        return ()

    def __repr__(self) -> str:
        return self.show(2)

    def show(self, depth: int) -> str:
        """The node with its operands ``depth`` levels down (DAGs print finitely)."""
        parts = []
        for f in fields(self):
            if not f.compare:
                continue
            v = getattr(self, f.name, None)
            if isinstance(v, Expr):
                parts.append(v.show(depth - 1) if depth > 0 else "...")
            else:
                parts.append(repr(v))
        return f"{type(self).__name__}({', '.join(parts)})"

    def _seal(self, dtype: str) -> None:
        assert dtype in DTYPES, f"bad dtype {dtype!r} in {self!r}"
        object.__setattr__(self, "dtype", dtype)
        h = hashlib.blake2b(type(self).__name__.encode(), digest_size=16)
        for item in self._key():
            h.update(item._digest if isinstance(item, Expr) else repr(item).encode())
            h.update(b"|")
        digest = h.digest()
        object.__setattr__(self, "_digest", digest)
        object.__setattr__(self, "_hash", int.from_bytes(digest[:8], "little", signed=True))


def _size(d) -> int | Dim:
    """A static size as an ``int``; a symbolic one (``myc.aot`` with ``N``) as is."""
    return d if isinstance(d, Dim) else int(d)


def _check(cond: bool, node: Expr, why: str) -> None:
    assert cond, f"{why}: {node!r}"


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Const(Expr):
    """A literal of the given dtype (Python float, int or bool)."""

    value: float | int | bool
    dtype: str
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        conv = {"float32": float, "float64": float, "int64": int, "bool": bool}[self.dtype]
        if not isinstance(self.value, (Dim, SymFloat)):  # a size-dependent constant
            object.__setattr__(self, "value", conv(self.value))
        self._seal(self.dtype)

    def _key(self) -> tuple:
        v = self.value
        return (v.hex() if isinstance(v, float) else v, self.dtype)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Load(Expr):
    """Element of input ``buffer`` (an index into ``Kernel.inputs``) at the domain point.

    ``axes``: the domain axis each buffer axis runs along; ``None`` means NumPy's
    right-aligned broadcasting.  ``dtype`` must be the buffer's.
    """

    buffer: int
    dtype: str
    axes: tuple[int, ...] | None = None
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        if self.axes is not None:
            object.__setattr__(self, "axes", tuple(int(a) for a in self.axes))
            _check(len(set(self.axes)) == len(self.axes), self, "repeated axes")
        self._seal(self.dtype)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Unary(Expr):
    op: str
    x: Expr
    dtype: str = field(init=False)
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        _check(self.op in UNARY_OPS, self, "unknown unary op")
        _check(kind(self.x.dtype) in UNARY_OPS[self.op], self, f"{self.op} on {self.x.dtype}")
        self._seal(self.x.dtype)

    def children(self):
        return (self.x,)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Binary(Expr):
    op: str
    x: Expr
    y: Expr
    dtype: str = field(init=False)
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        _check(self.op in BINARY_OPS, self, "unknown binary op")
        _check(self.x.dtype == self.y.dtype, self, "operand dtypes differ")
        _check(kind(self.x.dtype) in BINARY_OPS[self.op], self, f"{self.op} on {self.x.dtype}")
        self._seal("bool" if self.op in COMPARISONS else self.x.dtype)

    def children(self):
        return (self.x, self.y)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Select(Expr):
    """``x`` where ``cond`` else ``y`` (``np.where``)."""

    cond: Expr
    x: Expr
    y: Expr
    dtype: str = field(init=False)
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        _check(self.cond.dtype == "bool", self, "condition is not bool")
        _check(self.x.dtype == self.y.dtype, self, "branch dtypes differ")
        self._seal(self.x.dtype)

    def children(self):
        return (self.cond, self.x, self.y)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Cast(Expr):
    """``x.astype(dtype)``: float to int truncates (NaN and out of range give int64 min,
    as NumPy on x86), anything to bool is ``!= 0``."""

    x: Expr
    dtype: str
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        self._seal(self.dtype)

    def children(self):
        return (self.x,)


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class RowReduce(Expr):
    """``op`` of ``x`` along the domain's last axis, the same value across that axis.

    A softmax reads its row maximum and row sum in the pass that uses them: the backend
    runs one loop over the row per level of nesting before the row's main loop, while
    the row is still in cache, instead of a separate kernel storing the reduction and a
    second pass over the whole array reading it back (a persistent reduction).  Only in
    kernels of two or more axes; the backend keeps the last axis whole within a row.
    """

    op: str
    x: Expr
    dtype: str = field(init=False)
    _hash: int = field(init=False, compare=False, repr=False)
    _digest: bytes = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        _check(self.op in REDUCE_OPS, self, "unknown reduction")
        _check(not (self.op == "sum" and self.x.dtype == "bool"), self, "sum of bool")
        self._seal(self.x.dtype)

    def children(self):
        return (self.x,)


def row_reductions(roots: Sequence[Expr]) -> list[list[RowReduce]]:
    """The row reductions under ``roots`` by level: level 0 reads none, level k reads
    some of level k-1 -- each level is one loop over the row."""
    level: dict[Expr, int] = {}
    out: list[list[RowReduce]] = []
    for node in postorder(roots):
        below = max((level[c] for c in node.children()), default=-1)
        if isinstance(node, RowReduce):
            below += 1
            while len(out) <= below:
                out.append([])
            out[below].append(node)
        level[node] = below
    return out


@dataclass(frozen=True)
class Buffer:
    """A C-contiguous array: an input of a kernel, or (derived) one of its outputs."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    def __post_init__(self):
        assert self.dtype in DTYPES, self
        object.__setattr__(self, "shape", tuple(_size(d) for d in self.shape))


@dataclass(frozen=True)
class Store:
    """Output ``out_index`` = ``expr`` over the whole domain (shape = domain shape)."""

    out_index: int
    expr: Expr


@dataclass(frozen=True)
class Reduce:
    """Output ``out_index`` = ``op``-reduction of ``expr`` over domain ``axes``.

    The output shape is the domain's with those axes removed (or kept as 1 with
    ``keepdims``).  Float ``sum`` may be reassociated by a backend (results differ from
    NumPy's pairwise sum by rounding); ``max``/``min`` propagate NaN like ``np.max``.
    """

    out_index: int
    op: str
    expr: Expr
    axes: tuple[int, ...]
    keepdims: bool = False

    def __post_init__(self):
        object.__setattr__(self, "axes", tuple(sorted(int(a) for a in self.axes)))
        assert self.op in REDUCE_OPS, self
        assert len(set(self.axes)) == len(self.axes), self
        assert not (self.op == "sum" and self.expr.dtype == "bool"), \
            f"sum of bool: cast to int64 first: {self}"


Output = Store | Reduce


def postorder(roots: Sequence[Expr], done: Sequence[Expr] = (),
              opaque: type | None = None) -> list[Expr]:
    """Distinct (structurally) subexpressions of ``roots``, operands before users;
    without those in ``done`` and below them, and without the operands of ``opaque``
    nodes (a backend that reads a row reduction from a buffer needs not its operand)."""
    seen: set[Expr] = set(done)
    order: list[Expr] = []
    for root in roots:
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in seen:
                continue
            if expanded:
                seen.add(node)
                order.append(node)
            else:
                stack.append((node, True))
                if opaque is None or not isinstance(node, opaque):
                    stack.extend((c, False) for c in reversed(node.children())
                                 if c not in seen)
    return order


def c_strides(shape: Sequence[int]) -> list[int]:
    """Element strides of a C-contiguous array of ``shape``."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


@dataclass(frozen=True)
class Kernel:
    """A fusion group over the static domain ``shape``.

    ``inputs[i]`` is what ``Load(i, ...)`` reads; ``outputs`` are the Store/Reduce
    writes, whose ``out_index`` es number the result buffers 0..n-1.  A backend's compiled
    kernel takes the input arrays in order and returns the output arrays in
    ``out_index`` order.
    """

    name: str
    shape: tuple[int, ...]
    inputs: tuple[Buffer, ...]
    outputs: tuple[Output, ...]

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(_size(d) for d in self.shape))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        self.verify()

    # ------------------------------------------------------------------ checks
    def verify(self) -> None:
        nd = len(self.shape)
        assert self.name.isidentifier(), f"kernel name {self.name!r}"
        assert all(d >= 0 for d in self.shape), self.shape
        assert sorted(o.out_index for o in self.outputs) == list(range(len(self.outputs))), \
            f"out_index values must be 0..{len(self.outputs) - 1}"
        for node in postorder([o.expr for o in self.outputs]):
            if isinstance(node, Load):
                assert 0 <= node.buffer < len(self.inputs), f"no input {node.buffer}: {node}"
                buf = self.inputs[node.buffer]
                assert node.dtype == buf.dtype, f"{node} reads {buf}"
                axes = self.load_axes(node)
                assert len(axes) == len(buf.shape) and all(0 <= a < nd for a in axes), \
                    f"{node}: {buf} does not fit domain {self.shape}"
                for a, size in zip(axes, buf.shape, strict=True):
                    assert size in (1, self.shape[a]), \
                        f"{node}: {buf} does not broadcast to domain {self.shape}"
            if isinstance(node, RowReduce):
                assert nd >= 2, f"{node}: a row reduction needs two or more axes"
        for out in self.outputs:
            if isinstance(out, Reduce):
                assert all(0 <= a < nd for a in out.axes), f"{out} over domain {self.shape}"

    def load_axes(self, load: Load) -> tuple[int, ...]:
        """The domain axis each axis of ``load`` 's buffer runs along."""
        if load.axes is not None:
            return load.axes
        ndim = len(self.inputs[load.buffer].shape)
        return tuple(range(len(self.shape) - ndim, len(self.shape)))

    # ------------------------------------------------------------------ outputs
    def output_buffers(self) -> tuple[Buffer, ...]:
        """Result buffers in ``out_index`` order."""
        bufs: list[Buffer | None] = [None] * len(self.outputs)
        for out in self.outputs:
            bufs[out.out_index] = Buffer(f"out{out.out_index}", out.expr.dtype,
                                         output_shape(self.shape, out))
        return tuple(bufs)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ text
    def format(self) -> str:
        """Stable text: one line per distinct subexpression, outputs last."""
        names: dict[Expr, str] = {}
        lines = [f"kernel {self.name} shape={self.shape}"]
        for i, b in enumerate(self.inputs):
            lines.append(f"  in{i} {b.name}: {b.dtype}{list(b.shape)}")

        def ref(e: Expr) -> str:
            return names[e]

        for node in postorder([o.expr for o in sorted(self.outputs, key=_out_key)]):
            name = names[node] = f"%{len(names)}"
            if isinstance(node, Const):
                rhs = f"const {node.value!r}"
            elif isinstance(node, Load):
                axes = "" if node.axes is None else f" axes={node.axes}"
                rhs = f"load in{node.buffer}{axes}"
            elif isinstance(node, Unary | Binary):
                rhs = f"{node.op} " + " ".join(ref(c) for c in node.children())
            elif isinstance(node, Select):
                rhs = "select " + " ".join(ref(c) for c in node.children())
            elif isinstance(node, RowReduce):
                rhs = f"row.{node.op} {ref(node.x)}"
            else:
                rhs = f"cast {ref(node.x)}"
            lines.append(f"  {name} = {rhs} : {node.dtype}")
        for out, buf in zip(sorted(self.outputs, key=_out_key), self.output_buffers(), strict=True):
            if isinstance(out, Store):
                rhs = f"store {names[out.expr]}"
            else:
                keep = " keepdims" if out.keepdims else ""
                rhs = f"reduce.{out.op} {names[out.expr]} axes={out.axes}{keep}"
            lines.append(f"  out{out.out_index} = {rhs} : {buf.dtype}{list(buf.shape)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    # ------------------------------------------------------------------ semantics
    def reference(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Evaluate with NumPy: the semantics backends are tested against."""
        assert len(inputs) == len(self.inputs), "wrong number of inputs"
        arrays = [np.asarray(a) for a in inputs]
        for a, b in zip(arrays, self.inputs, strict=True):
            assert a.dtype == np.dtype(b.dtype) and a.shape == b.shape, (a.dtype, a.shape, b)
        nd = len(self.shape)
        vals: dict[Expr, np.ndarray] = {}
        with np.errstate(all="ignore"):
            for node in postorder([o.expr for o in self.outputs]):
                if isinstance(node, Load):
                    vals[node] = _domain_view(arrays[node.buffer], self.load_axes(node), nd)
                elif isinstance(node, Const):
                    vals[node] = np.full((1,) * nd, node.value, dtype=node.dtype)
                elif isinstance(node, RowReduce):
                    full = np.broadcast_to(vals[node.x], self.shape)
                    vals[node] = _reduce(Reduce(0, node.op, node.x, (nd - 1,), True), full,
                                         np.dtype(node.dtype))
                else:
                    args = [vals[c] for c in node.children()]
                    vals[node] = np.asarray(_eval(node, args)).astype(node.dtype, copy=False)
            results: list[np.ndarray | None] = [None] * len(self.outputs)
            for out in self.outputs:
                dt = np.dtype(out.expr.dtype)
                full = np.broadcast_to(vals[out.expr], self.shape)
                if isinstance(out, Store):
                    res = np.array(full, dtype=dt)
                else:
                    res = _reduce(out, full, dt)
                results[out.out_index] = res
        return results  # type: ignore[return-value]


def _out_key(out: Output) -> int:
    return out.out_index


def output_shape(domain: tuple[int, ...], out: Output) -> tuple[int, ...]:
    if isinstance(out, Store):
        return domain
    if out.keepdims:
        return tuple(1 if a in out.axes else d for a, d in enumerate(domain))
    return tuple(d for a, d in enumerate(domain) if a not in out.axes)


def _domain_view(arr: np.ndarray, axes: tuple[int, ...], nd: int) -> np.ndarray:
    """``arr`` with its axes moved to ``axes`` in a rank-``nd`` broadcastable view."""
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    moved = arr.transpose(order) if order else arr
    shape = [1] * nd
    for i in order:
        shape[axes[i]] = arr.shape[i]
    return moved.reshape(shape)


def _reduce(out: Reduce, full: np.ndarray, dt: np.dtype) -> np.ndarray:
    axes = out.axes
    if full.size == 0 or any(full.shape[a] == 0 for a in axes):
        shape = output_shape(full.shape, out)
        return np.full(shape, identity(out.op, out.expr.dtype), dtype=dt)
    if out.op == "sum":
        res = np.sum(full, axis=axes, keepdims=out.keepdims, dtype=dt)
    elif out.op == "max":
        res = np.max(full, axis=axes, keepdims=out.keepdims)
    else:
        res = np.min(full, axis=axes, keepdims=out.keepdims)
    return np.array(res, dtype=dt)


def _eval(node: Expr, args: list[np.ndarray]) -> np.ndarray:
    if isinstance(node, (Unary, Binary)):
        return SCALAR_OPS[node.op].reference(*args)
    if isinstance(node, Select):
        return np.where(*args)
    assert isinstance(node, Cast), node
    return args[0].astype(node.dtype)
