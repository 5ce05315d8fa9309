"""Dynamic sizes for ahead-of-time libraries: ``myc.aot(fn, "f32[N,4], f32[4]", ...)``.

myc specializes on static shapes; a library for every ``N`` is found by specializing
at several sample sizes and generalizing.  The programs built at the sample points
(:func:`myc.lower.dims.sample_points`) must have the same structure -- the same
operations, kernels and expressions -- and every number that differs between them
(sizes, strides, GEMM dimensions, the count a mean divides by, a float computed from a
size) must be a polynomial of degree at most 2 in the sizes (a float: ``c * m`` or
``c / m`` for a monomial ``m``), fitted on all points but one and checked on that last
one.  The fitted program holds :class:`~myc.lower.dims.Dim` s where it held ints, and the
code generator computes them at run time from the sizes bound by the inputs' shapes.

Small sizes can change a program's structure (a size-1 axis broadcasts or is squeezed
away; ``x[:3]`` has fewer than 3 elements when ``N < 3``), so each size is then checked
downwards from :data:`SWEEP_TOP`: the program built at each smaller value must be the
fitted one evaluated there.  The first value where it is not sets the size's lower
bound, which the library checks at run time (``MYC_ERR_SHAPE``).  A program whose
structure depends on the size everywhere -- a Python loop over ``range(N)``, a reshape
to ``N // 2`` -- is rejected with a :class:`myc.MycError` that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass

import numpy as np

from myc.errors import MycError
from myc.lower.dims import Dim, FitError, SymFloat, fit, sample_points

EVAL_MAX_ITERATIONS = 10_000  # evaluate() only: validating small sizes on random data
SWEEP_TOP = 8  # every size from its lower bound up to here is checked explicitly
MAX_SYMBOLS = 3


class Mismatch(Exception):
    pass


def generalize(build: Callable[[list[np.ndarray]], object], specs, symbols: list[str],
               fname: str):
    """The program ``build`` makes, generalized over ``symbols``; its ``symbols``
    attribute maps each size to its lower bound."""
    if len(symbols) > MAX_SYMBOLS:
        raise MycError(f"myc.aot: {len(symbols)} dynamic sizes ({', '.join(symbols)}); at "
                       f"most {MAX_SYMBOLS} are supported")
    points = sample_points(symbols)
    progs = [_build_at(build, specs, p, fname) for p in points]
    try:
        generic = _merge(progs, points, {}, "program")
    except (Mismatch, FitError) as exc:
        raise MycError(f"myc.aot: {fname}: the compiled program's structure depends on "
                       f"the value of {' / '.join(symbols)} ({exc}); a dynamic size must "
                       "only scale the arrays (no Python loop over range(N), no size "
                       "computed with // or %), or give the size as a number") from None
    floors = {}
    for s in symbols:
        floor = None
        for value in range(SWEEP_TOP, 0, -1):
            point = dict(points[0])
            point[s] = value
            try:
                concrete = build(_examples(specs, point))
            except MycError:
                floor = value + 1
                break
            if not _valid_at(generic, concrete, specs, point):
                floor = value + 1
                break
        if floor is None:
            floor = 1
        if floor > SWEEP_TOP:
            raise MycError(f"myc.aot: {fname}: with {s} = {SWEEP_TOP} the program is not the "
                           f"one compiled for larger {s}; give {s} as a number")
        floors[s] = floor
    generic.symbols = floors
    # each size is at most MAX_BYTES (HostPlan.max_size); the library also checks
    # every size product at run time (myc/backends/cpu/aot_limits.py)
    return generic


def _valid_at(generic, concrete, specs, point: dict[str, int]) -> bool:
    """Does ``generic`` compute what ``concrete`` (compiled at ``point``) computes?

    The same structure evaluated there says yes.  A different structure (at a size
    equal to a static one, fusion or a transpose may be planned differently) is judged
    by running both with the NumPy reference semantics on random inputs."""
    try:
        _match(generic, concrete, point, {})
        return True
    except Mismatch:
        pass
    rng = np.random.default_rng(0)
    inputs = []
    for x in _examples(specs, point):
        if x.dtype == np.bool_:
            inputs.append(rng.random(x.shape) < 0.5)
        elif x.dtype.kind == "i":
            inputs.append(rng.integers(-5, 6, x.shape).astype(x.dtype))
        else:
            inputs.append(rng.uniform(-2.0, 2.0, x.shape).astype(x.dtype))
    try:
        want = evaluate(concrete, inputs)
        got = evaluate(instantiate(generic, point), inputs)
    except (ValueError, TypeError, IndexError, AssertionError):
        return False
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        tol = 1e-4 if w.dtype == np.float32 else 1e-9
        if not np.allclose(g, w, rtol=tol, atol=tol, equal_nan=True):
            return False
    return True


def instantiate(generic, env: dict[str, int], memo: dict | None = None):
    """``generic`` with every size expression evaluated at ``env``."""
    memo = {} if memo is None else memo
    if id(generic) in memo:
        return memo[id(generic)]
    if isinstance(generic, (Dim, SymFloat)):
        return generic.evaluate(env)
    if isinstance(generic, np.ndarray) and generic.dtype == object:
        return np.asarray(instantiate(generic.item(), env, memo))
    if isinstance(generic, (list, tuple)):
        out = [instantiate(x, env, memo) for x in generic]
        res = out if isinstance(generic, list) else tuple(out)
    elif isinstance(generic, dict):
        res = {k: instantiate(v, env, memo) for k, v in generic.items()}
    elif is_dataclass(generic) and not isinstance(generic, type):
        res = _rebuild(generic, {f.name: instantiate(getattr(generic, f.name), env, memo)
                                 for f in fields(generic) if f.init})
    else:
        return generic
    memo[id(generic)] = res
    return res


def evaluate(prog, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run a ``HostPlan`` with NumPy (kernels by their reference semantics)."""
    env = {id(v): np.ascontiguousarray(x) for v, x in zip(prog.inputs, inputs, strict=True)}
    _run(prog.ops, env)
    return [_get(env, v) for v in prog.outputs]


def _get(env: dict, v) -> np.ndarray:
    if id(v) in env:
        return env[id(v)]
    return np.broadcast_to(np.asarray(v.const).astype(v.dtype), v.shape)


def _run(ops: list, env: dict) -> None:
    """``ops`` run with NumPy on the arrays in ``env`` (keyed by ``id`` of each Value)."""
    from myc.lower.hostplan import Alias, Check, Gemm, KernelOp, LoopOp, Permute, Select, TapeGet

    def get(v):
        return _get(env, v)

    for op in ops:
        if isinstance(op, KernelOp):
            outs = op.kernel.reference([get(v) for v in op.inputs])
            for v, o, div in zip(op.outputs, outs, op.divide_by, strict=True):
                env[id(v)] = o if div is None else (o / div).astype(o.dtype)
        elif isinstance(op, Gemm):
            a = get(op.a).reshape(op.m, op.k)
            b = get(op.b).reshape(op.k, op.n)
            p = (a @ b).reshape(op.out.shape)
            env[id(op.out)] = p if op.acc is None else np.add(
                get(op.acc), p if op.alpha == 1.0 else np.multiply(p, op.alpha))
        elif isinstance(op, Permute):
            env[id(op.out)] = np.ascontiguousarray(np.transpose(get(op.src), op.perm))
        elif isinstance(op, Alias):
            env[id(op.out)] = get(op.src).reshape(op.out.shape)
        elif isinstance(op, Select):
            env[id(op.out)] = np.array(get(op.a) if bool(get(op.cond)) else get(op.b),
                                       dtype=op.out.dtype)
        elif isinstance(op, TapeGet):
            env[id(op.out)] = env[id(op.tape)][op.index][int(get(op.step))]
        elif isinstance(op, LoopOp):
            _run_loop(op, env)
        elif isinstance(op, Check):
            if not bool(get(op.flag)):
                raise ValueError(op.message)
        else:  # pragma: no cover
            raise AssertionError(op)


def _run_loop(op, env: dict) -> None:
    """A ``LoopOp`` as the library runs it (zeros where not enabled; a taped loop's rows
    and count), for checking a generalized program against one built at a small size."""
    if op.enabled is not None and not bool(_get(env, op.enabled)):
        for r in op.results:
            if r is not None:
                env[id(r)] = np.zeros(r.shape, r.dtype)
        if op.count is not None:
            env[id(op.count)] = np.array(0, np.int64)
        return
    for s, v in zip(op.state, op.init, strict=True):
        env[id(s)] = np.array(_get(env, v), dtype=s.dtype)
    rows: list[list[np.ndarray]] = [[] for _ in op.state]
    count = 0
    for _ in range(EVAL_MAX_ITERATIONS):
        if op.tape is not None:  # the states the tape stores
            count += 1
            for j in op.tape.read:
                rows[j].append(np.array(env[id(op.state[j])]))
        _run(op.body, env)
        if not bool(_get(env, op.go_on)):
            break
        nxt = [np.array(_get(env, v), dtype=s.dtype) for v, s in
               zip(op.next_state, op.state, strict=True)]
        for s, v in zip(op.state, nxt, strict=True):
            env[id(s)] = v
    else:
        # only this compile-time check stops: on random inputs a loop may never end
        # (Newton on a negative number); the size is then not validated, never run
        raise ValueError(f"loop ran {EVAL_MAX_ITERATIONS} iterations on random inputs")
    for r, x in zip(op.results, op.exits, strict=True):
        if r is not None:
            env[id(r)] = np.array(_get(env, x), dtype=r.dtype)
    if op.tape is not None:
        env[id(op.tape)] = rows
        env[id(op.count)] = np.array(count, np.int64)


def _examples(specs, point: dict[str, int]) -> list[np.ndarray]:
    return [np.zeros(tuple(point[d] if isinstance(d, str) else d for d in shape), dt)
            for dt, shape in specs]


def _build_at(build, specs, point: dict[str, int], fname: str):
    try:
        return build(_examples(specs, point))
    except MycError as exc:
        at = ", ".join(f"{k} = {v}" for k, v in point.items())
        raise MycError(f"{exc} (while compiling {fname} for every size: at {at})") from None


def _rebuild(first, values: dict):
    """A dataclass like ``first`` from its init fields (the others are derived)."""
    return type(first)(**values)


def _merge(objs: list, points, memo: dict, where: str):
    """One object standing for ``objs`` (the same structure built at ``points``)."""
    first = objs[0]
    key = tuple(id(o) for o in objs)
    if key in memo:
        return memo[key]
    if any(type(o) is not type(first) for o in objs):
        raise Mismatch(f"{where}: {type(first).__name__} vs {type(objs[-1]).__name__}")
    if first is None or isinstance(first, (bool, str)):
        if where.endswith(".name"):  # names of values and kernels: any is as good
            return first
        if any(o != first for o in objs):
            raise Mismatch(f"{where}: {first!r} vs {objs[-1]!r}")
        return first
    if isinstance(first, (int, float, np.integer, np.floating)):
        vals = [o.item() if isinstance(o, np.generic) else o for o in objs]
        try:
            return fit(vals, points)
        except FitError as exc:
            raise FitError(f"{where} is {vals[0]!r} at the first sample, {vals[-1]!r} at "
                           f"the last: {exc}") from None
    if isinstance(first, np.ndarray):
        if all(o.shape == first.shape and np.array_equal(o, first) for o in objs):
            return first
        if not all(o.size and (o == o.flat[0]).all() for o in objs):
            raise Mismatch(f"{where}: a constant array computed from the sizes")
        # one value everywhere, computed from the sizes (the 1/N a mean's gradient
        # scales by) in an array shaped by them: kept as that value, as a 0-d object
        # array; the Value holding it says the shape
        try:
            got = fit([o.flat[0].item() for o in objs], points,
                      single=first.dtype == np.float32)
        except FitError as exc:
            raise FitError(f"{where}: {exc}") from None
        out = np.empty((), dtype=object)
        out[()] = got
        return out
    if isinstance(first, (list, tuple)):
        if any(len(o) != len(first) for o in objs):
            raise Mismatch(f"{where}: {len(first)} items vs {len(objs[-1])}")
        out = [_merge([o[i] for o in objs], points, memo, f"{where}[{i}]")
               for i in range(len(first))]
        res = out if isinstance(first, list) else tuple(out)
        memo[key] = res
        return res
    if isinstance(first, dict):
        if any(o.keys() != first.keys() for o in objs):
            raise Mismatch(f"{where}: different keys")
        res = memo[key] = {k: _merge([o[k] for o in objs], points, memo, f"{where}[{k!r}]")
                           for k in first}
        return res
    if is_dataclass(first):
        values = {f.name: _merge([getattr(o, f.name) for o in objs], points, memo,
                                 f"{where}.{f.name}")
                  for f in fields(first) if f.init}
        res = memo[key] = _rebuild(first, values)
        return res
    raise Mismatch(f"{where}: cannot compare {type(first).__name__}")


def _match(generic, concrete, env: dict[str, int], memo: dict, where: str = "program"):
    """Raise :class:`Mismatch` unless ``concrete`` is ``generic`` evaluated at ``env``."""
    key = (id(generic), id(concrete))
    if key in memo:
        return
    memo[key] = True
    if isinstance(concrete, np.generic):
        concrete = concrete.item()
    if isinstance(generic, Dim):
        if generic.evaluate(env) != concrete:
            raise Mismatch(where)
        return
    if isinstance(generic, SymFloat):
        want = generic.evaluate(env)
        if not isinstance(concrete, float) or abs(want - concrete) > 1e-12 * abs(want):
            raise Mismatch(where)
        return
    if generic is None or isinstance(generic, (bool, str, int, float)):
        if type(generic) is not type(concrete) or (
                generic != concrete and not where.endswith(".name")):
            raise Mismatch(where)
        return
    if type(generic) is not type(concrete):
        raise Mismatch(where)
    if isinstance(generic, np.ndarray):
        if generic.dtype == object:
            c = np.asarray(concrete)
            if not c.size or not (c == c.flat[0]).all():
                raise Mismatch(where)
            _match(generic.item(), c.flat[0].item(), env, memo, where)
            return
        if generic.shape != concrete.shape or not np.array_equal(generic, concrete):
            raise Mismatch(where)
        return
    if isinstance(generic, (list, tuple)):
        if len(generic) != len(concrete):
            raise Mismatch(where)
        for i, (g, c) in enumerate(zip(generic, concrete, strict=True)):
            _match(g, c, env, memo, f"{where}[{i}]")
        return
    if isinstance(generic, dict):
        if generic.keys() != concrete.keys():
            raise Mismatch(where)
        for k in generic:
            _match(generic[k], concrete[k], env, memo, f"{where}[{k!r}]")
        return
    if is_dataclass(generic):
        for f in fields(generic):
            if f.init:
                _match(getattr(generic, f.name), getattr(concrete, f.name), env, memo,
                       f"{where}.{f.name}")
        return
    raise Mismatch(where)
