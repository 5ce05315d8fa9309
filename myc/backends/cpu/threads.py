"""myc's CPU threads: one pool of worker threads for every JIT call site, and the
fork-join code AOT libraries carry instead.

A parallel call is ``fn(bufs[c], begin_c, end_c)`` for chunks ``c = 0 .. n-1`` (a kernel
over pieces of its parallel range, or a GEMM over row blocks).  Every JIT site runs it
on the pool, machine code made here once per process: kernels called from Python
(``runtime.CompiledKernel``: ``myc_pool_run``), kernels and GEMM row blocks in native
programs (``kernel_calls.PoolChunks`` emits :func:`pool_call`: ``myc_pool_begin``, its
own claim loop calling the chunk function directly, ``myc_pool_end``).

How the pool works:

- **Threads**: worker pthreads are started on first need, up to ``threads - 1`` of the
  call (``MYC_NUM_THREADS``, default the CPU count; 63 at most), detached, and kept for
  the life of the process: never one per call or per ``jit`` wrapper.  They block every
  signal but faults (SIGINT is the main thread's, where CPython and ``interrupt.py``
  expect it).
  A fork's child starts with none (``os.register_at_fork`` resets the pool's state).
- **Work division**: the caller publishes the call (a generation number, the chunk
  table) and wakes up to ``threads - 1`` workers; they and the caller claim chunks one by
  one from an atomic counter (the *ticket*, tagged with the generation so a worker late
  for one call can never claim a chunk of the next).  A thread that shares its core with
  another process claims fewer chunks, so the call slows in proportion instead of
  waiting on that thread's fixed share.
- **Waiting**: a worker that found no chunk polls for the next call for ``SPIN`` pause
  instructions (a few microseconds), then sleeps on a condition variable; the caller,
  its own chunks done, polls as long for the last chunk, then sleeps on another.  No
  wait spins longer.
- **One call at a time**: a caller that finds the pool taken (another Python thread's
  call, or a chunk that itself calls the pool) runs its chunks on its own thread.  That
  is always correct and never deadlocks.
- **Process state**: each chunk runs with the caller's MXCSR (rounding, flush-to-zero),
  and the worker puts its own back after; a kernel sets and restores FTZ itself
  (``fpmode.py``).  GEMM row blocks set OpenBLAS's per-thread count to 1 around their
  call (``blas_threads.py``), so BLAS never wakes its own spinning pool and the user's
  NumPy keeps its settings.
- **Errors and Ctrl-C**: chunks are machine code that cannot raise.  The pool's state
  lives only between ``begin`` and ``end`` of one native call: when it returns every
  chunk has finished and
  nothing refers to the caller's buffers, so a Python exception or a ``KeyboardInterrupt``
  (delivered once the native call returns, ``interrupt.py``) cannot leave it half-used.

AOT libraries (no Python, possibly unloaded with ``dlclose``, when threads parked in
their code would crash) keep no threads between calls: :func:`fork_join` emits threads
started for the call and joined before it returns, claiming chunks with the same
generated claim loop as the pool (:func:`claim_loop`).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading

from llvmlite import ir

from myc.backends.cpu.emit import I8, I32, I64, PTR, at_entry, counted, declare, field_ptr

PARALLEL_MIN = 1 << 16  # elements: smaller kernels run on the calling thread
ALIGN = 64  # 1-axis chunk boundaries, in elements: whole cache lines per thread
CHUNKS_PER_THREAD = 4  # a big kernel's chunks per thread, claimed as threads free up
MAX_THREADS = 64  # the caller and at most 63 workers
SPIN = 64  # pause instructions a waiting thread polls before it sleeps (~2-5 us)
# the pool's entries (bound with llvm.add_symbol): Python's, and native programs'
RUN_SYMBOL = "myc_pool_run"
BEGIN_SYMBOL = "myc_pool_begin"
END_SYMBOL = "myc_pool_end"
TICKET_SYMBOL = "myc_pool_ticket"
FINISHED_SYMBOL = "myc_pool_finished"

_I1 = ir.IntType(1)
# fn(bufs, begin, end): a chunk
CHUNK_FN = ir.FunctionType(ir.VoidType(), [PTR, I64, I64])
# myc_pool_run(fn, bufs[n], bounds[2n], n, threads)
RUN_FN = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64, I64])


def num_threads() -> int:
    """Threads a parallel call may use: ``MYC_NUM_THREADS`` (read at each call) when a
    positive number, else the CPU count."""
    env = os.environ.get("MYC_NUM_THREADS", "")
    try:
        n = int(env)
    except ValueError:
        n = 0
    return min(n if n > 0 else (os.cpu_count() or 1), MAX_THREADS)


def chunks(plan, nthreads: int, per_thread: int = 1) -> list[tuple[int, int]]:
    """``[begin, end)`` pieces of a kernel plan's parallel range, ``per_thread`` per
    thread at most, each of at least about :data:`PARALLEL_MIN` elements."""
    extent = plan.extent
    size = extent * plan.row
    n = min(nthreads * per_thread, extent, max(nthreads, size // PARALLEL_MIN)) \
        if size > PARALLEL_MIN and nthreads > 1 else 1
    if n <= 1:
        return [(0, extent)]
    align = ALIGN if len(plan.dims) == 1 else 1
    bounds = [min(extent, (extent * i // n) // align * align) for i in range(n)] + [extent]
    return [(b, e) for b, e in itertools.pairwise(bounds) if e > b]


# -- generated code shared by the pool and AOT's fork-join ------------------------------
def _x86(module: ir.Module) -> bool:
    import llvmlite.binding as llvm

    return (module.triple or llvm.get_default_triple()).startswith(("x86_64", "amd64"))


def _pause(b: ir.IRBuilder) -> None:
    if _x86(b.module):
        b.call(declare(b.module, "llvm.x86.sse2.pause", ir.VoidType(), []), [])


class _Indirect:
    """A chunk function's pointer as a call's callee (llvmlite reads the callee's type
    from a typed pointer, which opaque pointers do not carry)."""

    function_type = CHUNK_FN

    def __init__(self, ptr: ir.Value):
        self.ptr = ptr
        self.type = ptr.type

    def get_reference(self) -> str:
        return self.ptr.get_reference()


def claim_loop(b: ir.IRBuilder, chunk, bufs: ir.Value, bounds: ir.Value, n: ir.Value,
               ticket: ir.Value, finished: ir.Value, gen: ir.Value) -> ir.Value:
    """Emit: run chunks of the call ``gen`` while any is left, claiming each from
    ``*ticket`` (``gen << 32 | next chunk``) and counting those done in ``*finished``;
    ``chunk`` is the function itself (a direct call) or a pointer to it.  Its value: did
    this thread finish the call's last chunk?"""
    fn = b.function
    entry = b.block
    claim = fn.append_basic_block("claim")
    try_ = fn.append_basic_block("claim.try")
    run = fn.append_basic_block("claim.run")
    done = fn.append_basic_block("claim.done")
    b.branch(claim)
    b.position_at_end(claim)
    last = b.phi(_I1)
    last.add_incoming(ir.Constant(_I1, 0), entry)
    t = b.load_atomic(ticket, "seq_cst", 8, typ=I64)
    mine = b.icmp_unsigned("==", b.trunc(b.lshr(t, ir.Constant(I64, 32)), I32), gen)
    c = b.and_(t, ir.Constant(I64, 0xFFFFFFFF))
    b.cbranch(b.and_(mine, b.icmp_signed("<", c, n)), try_, done)
    b.position_at_end(try_)
    got = b.extract_value(b.cmpxchg(ticket, t, b.add(t, ir.Constant(I64, 1)), "seq_cst",
                                    "seq_cst"), 1)
    last.add_incoming(last, try_)
    b.cbranch(got, run, claim)
    b.position_at_end(run)
    two = b.mul(c, ir.Constant(I64, 2))
    begin = b.load(b.gep(bounds, [two], source_etype=I64), typ=I64)
    end = b.load(b.gep(bounds, [b.add(two, ir.Constant(I64, 1))], source_etype=I64), typ=I64)
    callee = chunk if isinstance(chunk, ir.Function) else _Indirect(chunk)
    b.call(callee, [b.load(b.gep(bufs, [c], source_etype=PTR), typ=PTR), begin, end])
    old = b.atomic_rmw("add", finished, ir.Constant(I64, 1), "seq_cst")
    now_last = b.icmp_signed("==", b.add(old, ir.Constant(I64, 1)), n)
    last.add_incoming(b.or_(last, now_last), b.block)
    b.branch(claim)
    b.position_at_end(done)
    return last


def claimer(module: ir.Module) -> ir.Function:
    """``i1 myc.claim(fn, bufs, bounds, n, ticket*, finished*, i32 gen)``: the claim loop
    (:func:`claim_loop`) as a function, for threads that run whatever chunk function
    the call names (the pool's workers, AOT's fork-join threads)."""
    name = "myc.claim"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(_I1, [PTR, PTR, PTR, I64, PTR, PTR, I32]), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(claim_loop(b, *fn.args))
    return fn


def pool_call(b: ir.IRBuilder, entry: ir.Block, chunk: ir.Function, bufs: ir.Value,
              bounds: ir.Value, n: int, threads: int) -> None:
    """Emit, for a JIT native program: a parallel call on myc's pool.  The program
    claims chunks itself (calling ``chunk`` directly); the pool's workers join through
    ``myc_pool_begin``, and ``myc_pool_end`` waits for their chunks.  When the pool
    is taken or one thread is asked for, ``begin`` says 0 and the program runs every
    chunk on its own counter."""
    module = b.module
    begin = declare(module, BEGIN_SYMBOL, I32, [PTR, PTR, PTR, I64, I64])
    finish = declare(module, END_SYMBOL, ir.VoidType(), [I32, I64])
    shared = []
    for name in (TICKET_SYMBOL, FINISHED_SYMBOL):
        cell = module.globals.get(name)
        if cell is None:
            cell = ir.GlobalVariable(module, I64, name)
        shared.append(cell)
    with at_entry(b, entry):
        own = b.alloca(I64, size=ir.Constant(I64, 2))  # a counter of its own
    b.store(ir.Constant(I64, 0), own)
    own_done = b.gep(own, [ir.Constant(I64, 1)], source_etype=I64)
    b.store(ir.Constant(I64, 0), own_done)
    nn = ir.Constant(I64, n)
    gen = b.call(begin, [chunk, bufs, bounds, nn, ir.Constant(I64, threads)])
    pooled = b.icmp_unsigned("!=", gen, ir.Constant(I32, 0))
    claim_loop(b, chunk, bufs, bounds, nn, b.select(pooled, shared[0], own),
               b.select(pooled, shared[1], own_done), gen)
    b.call(finish, [gen, nn])


def fork_join(b: ir.IRBuilder, chunk: ir.Value, bufs: ir.Value, bounds: ir.Value,
              n: ir.Value, threads: ir.Value) -> None:
    """Emit, for an AOT library: run ``chunk(bufs[c], bounds[2c], bounds[2c+1])`` for
    ``c < n`` on ``threads`` threads (the caller's and ``threads - 1`` started here, all
    claiming chunks with :func:`claimer`), joined before going on.  A thread that cannot
    be started leaves its chunks to the others."""
    module = b.module
    claim = claimer(module)
    worker = _fork_worker(module, claim)
    create = declare(module, "pthread_create", I32, [PTR, PTR, PTR, PTR])
    join = declare(module, "pthread_join", I32, [I64, PTR])
    job = b.alloca(_FORK_JOB)
    job.type = PTR
    cells = b.alloca(I64, size=ir.Constant(I64, 2))  # ticket, finished
    b.store(ir.Constant(I64, 0), cells)
    b.store(ir.Constant(I64, 0), b.gep(cells, [ir.Constant(I64, 1)], source_etype=I64))
    for k, v in enumerate([chunk, bufs, bounds, n, cells]):
        b.store(v, field_ptr(b, job, _FORK_JOB, k))
    tids = b.alloca(I64, size=threads)
    started = b.alloca(I8, size=threads)

    def each(name, body):  # for t in range(1, threads)
        counted(b, threads, body, name, start=1)

    def spawn(t):
        rc = b.call(create, [b.gep(tids, [t], source_etype=I64), ir.Constant(PTR, None),
                             worker, job])
        ok = b.icmp_signed("==", rc, ir.Constant(I32, 0))
        b.store(b.zext(ok, I8), b.gep(started, [t], source_etype=I8))

    def wait(t):
        flag = b.load(b.gep(started, [t], source_etype=I8), typ=I8)
        with b.if_then(b.icmp_unsigned("!=", flag, ir.Constant(I8, 0))):
            b.call(join, [b.load(b.gep(tids, [t], source_etype=I64), typ=I64),
                          ir.Constant(PTR, None)])

    each("spawn", spawn)
    b.call(claim, [chunk, bufs, bounds, n, cells,
                   b.gep(cells, [ir.Constant(I64, 1)], source_etype=I64), ir.Constant(I32, 0)])
    each("join", wait)


_FORK_JOB = ir.LiteralStructType([PTR, PTR, PTR, I64, PTR])  # fn, bufs, bounds, n, cells


def _fork_worker(module: ir.Module, claim: ir.Function) -> ir.Function:
    """``void *myc.fork.worker(job *)``: a fork-join thread's start routine."""
    name = "myc.fork.worker"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR]), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    job = fn.args[0]
    chunk, bufs, bounds, n, cells = (
        b.load(field_ptr(b, job, _FORK_JOB, k), typ=t)
        for k, t in enumerate([PTR, PTR, PTR, I64, PTR]))
    b.call(claim, [chunk, bufs, bounds, n, cells,
                   b.gep(cells, [ir.Constant(I64, 1)], source_etype=I64), ir.Constant(I32, 0)])
    b.ret(ir.Constant(PTR, None))
    return fn


# -- the JIT's pool -----------------------------------------------------------------------
# its state: pthread mutex and condition variables (all-zero is glibc's static
# initializer; 64 bytes is room for them on any glibc target), then the call in progress;
# the ticket and the count of chunks done are globals of their own (a cache line each),
# which native programs read by name
_SYNC = ir.ArrayType(I8, 64)
_FAULTS = (4, 6, 7, 8, 11)  # SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV (Linux numbers)
_STATE = ir.LiteralStructType([
    _SYNC, _SYNC, _SYNC,  # 0 mutex, 1 work (workers sleep on it), 2 done (the caller)
    I32, I32, I32, I32,  # 3 busy, 4 gen, 5 slots (workers still wanted), 6 started
    PTR, PTR, PTR, I64, I32,  # 7 fn, 8 bufs, 9 bounds, 10 n, 11 the caller's MXCSR
])
(_MUTEX, _WORK, _DONE, _BUSY, _GEN, _SLOTS, _STARTED, _FN, _BUFS, _BOUNDS, _N,
 _MXCSR) = range(12)


class _Gen:
    """The pool module's builder helpers (state fields, libc's pthread calls)."""

    def __init__(self, module: ir.Module):
        self.m = module
        self.state = ir.GlobalVariable(module, _STATE, "myc.pool.state")
        self.state.initializer = ir.Constant(_STATE, None)
        self.state.align = 64
        self.state.linkage = "internal"
        self.ticket, self.finished = (self._cell(n) for n in (TICKET_SYMBOL, FINISHED_SYMBOL))
        self.x86 = _x86(module)
        d = lambda name, ret, args: declare(module, name, ret, args)  # noqa: E731
        self.lock = d("pthread_mutex_lock", I32, [PTR])
        self.unlock = d("pthread_mutex_unlock", I32, [PTR])
        self.wait = d("pthread_cond_wait", I32, [PTR, PTR])
        self.broadcast = d("pthread_cond_broadcast", I32, [PTR])
        self.create = d("pthread_create", I32, [PTR, PTR, PTR, PTR])
        self.detach = d("pthread_detach", I32, [I64])
        self.sigmask = d("pthread_sigmask", I32, [I32, PTR, PTR])
        self.sigfill = d("sigfillset", I32, [PTR])
        self.sigdel = d("sigdelset", I32, [PTR, I32])

    def _cell(self, name: str) -> ir.GlobalVariable:
        cell = ir.GlobalVariable(self.m, I64, name)
        cell.initializer = ir.Constant(I64, 0)
        cell.align = 64
        return cell

    def f(self, b: ir.IRBuilder, k: int) -> ir.Value:
        return field_ptr(b, self.state, _STATE, k)

    def get(self, b: ir.IRBuilder, k: int | ir.Value, ty: ir.Type) -> ir.Value:
        ptr = self.f(b, k) if isinstance(k, int) else k
        return b.load_atomic(ptr, "seq_cst", ty.width // 8 if isinstance(ty, ir.IntType)
                             else 8, typ=ty)

    def put(self, b: ir.IRBuilder, k: int | ir.Value, v: ir.Value) -> None:
        ty = v.type
        # (IRBuilder.store_atomic wants a typed pointer)
        b._insert(ir.instructions.StoreAtomicInstr(
            b.block, v, self.f(b, k) if isinstance(k, int) else k, "seq_cst",
            ty.width // 8 if isinstance(ty, ir.IntType) else 8))

    def mxcsr(self, b: ir.IRBuilder, slot: ir.Value, load: bool) -> None:
        if self.x86:
            name = "llvm.x86.sse.ldmxcsr" if load else "llvm.x86.sse.stmxcsr"
            b.call(declare(self.m, name, ir.VoidType(), [PTR]), [slot])


def _pool_module() -> ir.Module:
    """The pool: ``myc_pool_begin`` and ``myc_pool_end`` (native programs claim chunks
    between the two), ``myc_pool_run`` (Python's: the three in one), the worker, and
    ``myc_pool_reset`` (a fork's child: no workers, nothing held)."""
    import llvmlite.binding as llvm

    module = ir.Module("myc.pool")
    module.triple = llvm.get_default_triple()
    g = _Gen(module)
    claim = claimer(module)
    worker = _worker(g, claim)
    one = ir.Constant(I64, 1)

    reset = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "myc_pool_reset")
    b = ir.IRBuilder(reset.append_basic_block("entry"))
    # zeroed by one memset: a store of the aggregate is split into one store per byte
    # at O0 (4 ms of the pool's compile)
    size = b.ptrtoint(b.gep(ir.Constant(PTR, None), [ir.Constant(I64, 1)],
                            source_etype=_STATE), I64)
    memset = declare(module, "llvm.memset.p0.i64", ir.VoidType(),
                      [PTR, I8, I64, ir.IntType(1)])
    b.call(memset, [g.state, ir.Constant(I8, 0), size, ir.Constant(ir.IntType(1), 0)])
    b.store(ir.Constant(I64, 0), g.ticket)
    b.store(ir.Constant(I64, 0), g.finished)
    b.ret_void()

    started = ir.Function(module, ir.FunctionType(I32, []), "myc_pool_started")
    b = ir.IRBuilder(started.append_basic_block("entry"))
    b.ret(g.get(b, _STARTED, I32))

    # begin(fn, bufs, bounds, n, threads) -> gen: the call published to the workers
    # (0: not, the caller runs every chunk -- one thread asked for, or the pool taken)
    begin = ir.Function(module, ir.FunctionType(I32, [PTR, PTR, PTR, I64, I64]),
                        BEGIN_SYMBOL)
    chunk, bufs, bounds, n, threads = begin.args
    b = ir.IRBuilder(begin.append_basic_block("entry"))
    alone = begin.append_basic_block("alone")
    try_ = begin.append_basic_block("try")
    pooled = begin.append_basic_block("pooled")
    b.cbranch(b.or_(b.icmp_signed("<=", n, one), b.icmp_signed("<=", threads, one)),
              alone, try_)
    b.position_at_end(alone)
    b.ret(ir.Constant(I32, 0))
    b.position_at_end(try_)
    got = b.extract_value(b.cmpxchg(g.f(b, _BUSY), ir.Constant(I32, 0), ir.Constant(I32, 1),
                                    "seq_cst", "seq_cst"), 1)
    b.cbranch(got, pooled, alone)
    b.position_at_end(pooled)
    want = b.sub(threads, one)
    want = b.select(b.icmp_signed("<", b.sub(n, one), want), b.sub(n, one), want)
    cap = ir.Constant(I64, MAX_THREADS - 1)
    want = b.trunc(b.select(b.icmp_signed(">", want, cap), cap, want), I32)
    tid = b.alloca(I64)
    saved = b.alloca(I32)
    g.mxcsr(b, saved, load=False)
    b.call(g.lock, [g.f(b, _MUTEX)])
    start = begin.append_basic_block("start")
    spawn = begin.append_basic_block("spawn")
    made = begin.append_basic_block("spawned")
    publish = begin.append_basic_block("publish")
    b.branch(start)
    b.position_at_end(start)  # workers up to ``want``, once each for the process
    have = b.load(g.f(b, _STARTED), typ=I32)
    b.cbranch(b.icmp_signed("<", have, want), spawn, publish)
    b.position_at_end(spawn)
    rc = b.call(g.create, [tid, ir.Constant(PTR, None), worker, ir.Constant(PTR, None)])
    b.cbranch(b.icmp_signed("==", rc, ir.Constant(I32, 0)), made, publish)  # or none to be had
    b.position_at_end(made)
    b.call(g.detach, [b.load(tid, typ=I64)])
    g.put(b, _STARTED, b.add(have, ir.Constant(I32, 1)))
    b.branch(start)
    b.position_at_end(publish)
    have = b.load(g.f(b, _STARTED), typ=I32)
    slots = b.select(b.icmp_signed("<", have, want), have, want)
    gen = b.add(g.get(b, _GEN, I32), ir.Constant(I32, 1))
    gen = b.select(b.icmp_unsigned("==", gen, ir.Constant(I32, 0)), ir.Constant(I32, 1), gen)
    for k, v in [(_FN, chunk), (_BUFS, bufs), (_BOUNDS, bounds), (_N, n)]:
        g.put(b, k, v)
    b.store(b.load(saved, typ=I32), g.f(b, _MXCSR))
    g.put(b, g.finished, ir.Constant(I64, 0))
    g.put(b, g.ticket, b.shl(b.zext(gen, I64), ir.Constant(I64, 32)))
    g.put(b, _SLOTS, slots)
    g.put(b, _GEN, gen)
    b.call(g.broadcast, [g.f(b, _WORK)])
    b.call(g.unlock, [g.f(b, _MUTEX)])
    b.ret(gen)

    # end(gen, n): every chunk of the call ``gen`` done, the pool free again
    end = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32, I64]), END_SYMBOL)
    gen, n = end.args
    b = ir.IRBuilder(end.append_basic_block("entry"))
    with b.if_then(b.icmp_unsigned("!=", gen, ir.Constant(I32, 0))):
        _await(g, b, lambda: b.icmp_signed("==", g.get(b, g.finished, I64), n), _DONE)
        g.put(b, _BUSY, ir.Constant(I32, 0))
    b.ret_void()

    # run(fn, bufs, bounds, n, threads): begin, claim, end
    run = ir.Function(module, RUN_FN, RUN_SYMBOL)
    chunk, bufs, bounds, n, threads = run.args
    b = ir.IRBuilder(run.append_basic_block("entry"))
    own = b.alloca(I64, size=ir.Constant(I64, 2))
    own_done = b.gep(own, [one], source_etype=I64)
    b.store(ir.Constant(I64, 0), own)
    b.store(ir.Constant(I64, 0), own_done)
    gen = b.call(begin, [chunk, bufs, bounds, n, threads])
    shared = b.icmp_unsigned("!=", gen, ir.Constant(I32, 0))
    b.call(claim, [chunk, bufs, bounds, n, b.select(shared, g.ticket, own),
                   b.select(shared, g.finished, own_done), gen])
    b.call(end, [gen, n])
    b.ret_void()
    return module


def _await(g: _Gen, b: ir.IRBuilder, ready, cond: int | None) -> None:
    """Poll ``ready()`` for ``SPIN`` pauses, then (``cond``) sleep on that condition
    variable until it holds; with ``cond`` None, return after the polls either way
    (leaves ``b`` after the wait; holds no lock)."""
    fn = b.function
    pre = b.block
    poll = fn.append_basic_block("poll")
    more = fn.append_basic_block("poll.more")
    sleep = fn.append_basic_block("sleep")
    after = fn.append_basic_block("ready")
    b.branch(poll)
    b.position_at_end(poll)
    i = b.phi(I32)
    i.add_incoming(ir.Constant(I32, 0), pre)
    b.cbranch(ready(), after, more)
    b.position_at_end(more)
    _pause(b)
    nxt = b.add(i, ir.Constant(I32, 1))
    i.add_incoming(nxt, more)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(I32, SPIN)), poll, sleep)
    b.position_at_end(sleep)
    if cond is not None:
        b.call(g.lock, [g.f(b, _MUTEX)])
        check = fn.append_basic_block("sleep.check")
        wait = fn.append_basic_block("sleep.wait")
        woke = fn.append_basic_block("sleep.done")
        b.branch(check)
        b.position_at_end(check)
        b.cbranch(ready(), woke, wait)
        b.position_at_end(wait)
        b.call(g.wait, [g.f(b, cond), g.f(b, _MUTEX)])
        b.branch(check)
        b.position_at_end(woke)
        b.call(g.unlock, [g.f(b, _MUTEX)])
    b.branch(after)
    b.position_at_end(after)


def _worker(g: _Gen, claim: ir.Function) -> ir.Function:
    """``void *myc.pool.worker(void *)``: wait for a call, join it while it wants
    workers, claim its chunks under the caller's MXCSR; forever."""
    fn = ir.Function(g.m, ir.FunctionType(PTR, [PTR]), "myc.pool.worker")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    sigs = b.alloca(ir.ArrayType(I8, 256))
    b.call(g.sigfill, [sigs])
    for sig in _FAULTS:  # a fault in a chunk still reaches its handler (faulthandler)
        b.call(g.sigdel, [sigs, ir.Constant(I32, sig)])
    b.call(g.sigmask, [ir.Constant(I32, 0), sigs, ir.Constant(PTR, None)])  # SIG_BLOCK
    own = b.alloca(I32)
    g.mxcsr(b, own, load=False)
    seen = b.alloca(I32)
    b.store(ir.Constant(I32, 0), seen)
    wait = fn.append_basic_block("wait")
    sleep = fn.append_basic_block("sleep")
    join = fn.append_basic_block("join")
    take = fn.append_basic_block("take")
    b.call(g.lock, [g.f(b, _MUTEX)])
    b.branch(wait)

    b.position_at_end(wait)  # the lock held
    gen = g.get(b, _GEN, I32)
    b.cbranch(b.icmp_unsigned("==", gen, b.load(seen, typ=I32)), sleep, join)
    b.position_at_end(sleep)
    b.call(g.wait, [g.f(b, _WORK), g.f(b, _MUTEX)])
    b.branch(wait)

    b.position_at_end(join)
    b.store(gen, seen)
    slots = b.load(g.f(b, _SLOTS), typ=I32)
    b.cbranch(b.icmp_signed(">", slots, ir.Constant(I32, 0)), take, wait)

    b.position_at_end(take)
    b.store(b.sub(slots, ir.Constant(I32, 1)), g.f(b, _SLOTS))
    args = [g.get(b, _FN, PTR), g.get(b, _BUFS, PTR), g.get(b, _BOUNDS, PTR),
            g.get(b, _N, I64)]
    callers = b.alloca(I32)
    b.store(b.load(g.f(b, _MXCSR), typ=I32), callers)
    b.call(g.unlock, [g.f(b, _MUTEX)])
    g.mxcsr(b, callers, load=True)
    last = b.call(claim, [*args, g.ticket, g.finished, gen])
    g.mxcsr(b, own, load=True)
    with b.if_then(last):  # the call's last chunk: wake its caller
        b.call(g.lock, [g.f(b, _MUTEX)])
        b.call(g.broadcast, [g.f(b, _DONE)])
        b.call(g.unlock, [g.f(b, _MUTEX)])
    _await(g, b, lambda: b.icmp_unsigned("!=", g.get(b, _GEN, I32), gen), None)
    b.call(g.lock, [g.f(b, _MUTEX)])
    b.branch(wait)
    return fn


class _Pool:
    """The pool's machine code in this process (built, or loaded from the disk cache, at
    first use), its entries bound for native programs' code."""

    def __init__(self) -> None:
        import llvmlite.binding as llvm

        from myc.backends.cpu import machine_code

        # bare (not optimized): its code waits on atomics and calls chunks, which LLVM's
        # passes do not speed up, and a process's first compiled call with a new cache
        # paid 70 ms of O3 for it (18 ms bare)
        # (its IR is built only when it is compiled: ``fixed``)
        self.jit = machine_code.load_or_compile(lambda: str(_pool_module()), bare=True,
                                                fixed="myc.pool")
        self.address = self.jit.address(RUN_SYMBOL)
        self.run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_int64, ctypes.c_int64)(self.address)
        self.reset = ctypes.CFUNCTYPE(None)(self.jit.address("myc_pool_reset"))
        self.started = ctypes.CFUNCTYPE(ctypes.c_int32)(self.jit.address("myc_pool_started"))
        for sym in (RUN_SYMBOL, BEGIN_SYMBOL, END_SYMBOL):
            llvm.add_symbol(sym, self.jit.address(sym))
        for sym in (TICKET_SYMBOL, FINISHED_SYMBOL):
            llvm.add_symbol(sym, self.jit.engine.get_global_value_address(sym))


_POOL: list[_Pool] = []
_POOL_LOCK = threading.Lock()


def pool() -> _Pool:
    """The process's pool (its code compiled, or loaded from the disk cache, and
    ``myc_pool_run`` bound for native programs on first use)."""
    if not _POOL:
        with _POOL_LOCK:
            if not _POOL:
                _POOL.append(_Pool())
    return _POOL[0]


# the thread building the pool ahead of its first use (``build_ahead``), while it runs
_AHEAD: list[threading.Thread] = []


def build_ahead() -> None:
    """Start building the pool on a background thread, if this process has none yet.

    Called as a function's first compile starts: the pool's LLVM compile (about 20 ms,
    with the GIL released) then runs while the compiler's Python stages run, instead of
    adding to the first call's wall time.  Its first real use (``pool()``) waits for it
    on ``_POOL_LOCK``; if it failed, that use builds the pool itself and reports why."""
    if _POOL or _AHEAD or num_threads() < 2:
        return
    worker = threading.Thread(target=_build_quietly, name="myc-pool-build", daemon=True)
    _AHEAD.append(worker)
    worker.start()


def _build_quietly() -> None:
    try:
        pool()
    except BaseException:  # noqa: BLE001 - pool() at first use builds it again and raises
        pass


def _before_fork() -> None:
    # a child forked while the pool is built would inherit its locks held (llvmlite's,
    # ``_POOL_LOCK``) by a thread it does not have: wait for the build
    for worker in _AHEAD:
        worker.join()


def _after_fork() -> None:
    if _POOL:  # the child has none of the parent's workers, and no call in progress
        _POOL[0].reset()


os.register_at_fork(before=_before_fork, after_in_child=_after_fork)


def run(chunk: int, bufs: ctypes.Array, bounds: ctypes.Array, n: int, threads: int) -> None:
    """``chunk(bufs[c], bounds[2c], bounds[2c+1])`` for ``c < n`` on up to ``threads``
    threads (the caller's among them), from Python; the GIL is released meanwhile."""
    pool().run(chunk, ctypes.addressof(bufs), ctypes.addressof(bounds), n, threads)


def workers_started() -> int:
    """Worker threads the pool has started in this process (for tests and diagnostics)."""
    return _POOL[0].started() if _POOL else 0
