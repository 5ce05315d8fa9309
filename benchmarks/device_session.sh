#!/usr/bin/env bash
# One lent GPU machine, used once (about 7 minutes): every step runs at the same time on
# its own cores, so the session costs the longest step, not their sum.
#   cores 0-3    the CUDA check (benchmarks/gpu_check.sh: GPU tests, the semantics corpus
#                on the GPU, W1-W7 against PyTorch, host overhead per call)
#   cores 4-5/6-7  the no-regression comparison (with BASELINE=dir: a tree of an older
#                commit's myc/ and benchmarks/): the old and the current harness, W1-W7
#                quick, run side by side, then `python -m benchmarks --compare`
#   cores 8-9    the CPU benchmark with JAX and torch.compile (this machine is another
#                x86 class than the development machines: CPU model and ISA recorded)
#   cores 10-11  the same under --contend (core 11 kept busy), JAX as the peer
#   cores 12-13  the CPU math tests (this CPU's AVX-512 code paths against the references)
#   cores 14-15  benchmarks/x86_probe.py: myc against JAX, one thread then two
# A machine with fewer than 16 cores runs what fits.  Everything lands in $OUT: all.tgz
# with every log and result, and the key tables (the device tool returns at most 8 files).
#
#   OUT=/some/dir BASELINE=.baseline bash benchmarks/device_session.sh
#
# Optional: WHEELS=dir of wheels to install offline; BUDGET (default 420 s): every step
# is cut off by then; BENCH_SIZE=tiny for a dry run; GPU=0 to skip the GPU step.
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
W="$(mktemp -d /tmp/myc-device.XXXXXX)"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
ROOT="$PWD"
PY="${PYTHON:-python3}"
NCPU="${NCPU:-$(nproc)}"  # (NCPU=16 PIN=0 BENCH_SIZE=tiny GPU=0: a dry run anywhere)
LOG="$W/session.log"
BUDGET="${BUDGET:-420}"
SIZE="--${BENCH_SIZE:-quick}"
step() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
pin() { if [ "${PIN:-1}" = "1" ] && command -v taskset >/dev/null; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }
lscpu >"$W/lscpu.txt" 2>&1
grep -m1 "Model name" "$W/lscpu.txt" | tee -a "$LOG"
if [ -n "${WHEELS:-}" ]; then
  for m in llvmlite hypothesis; do
    "$PY" -c "import $m" 2>/dev/null || \
      "$PY" -m pip install --no-index --find-links "$WHEELS" "$m" 2>&1 | tail -1 | tee -a "$LOG"
  done
fi
# a CPU benchmark: pinned cores, its own cache, JAX and torch on the CPU, cut off in time
bench() {  # bench CORES NAME DIR(tree) ARGS...
  local cores=$1 name=$2 tree=$3; shift 3
  (cd "$tree" && MYC_CACHE_DIR="$W/cache-$name" JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES="" \
     PYTHONPATH="$tree" pin "$cores" timeout "$((BUDGET - 20))" "$PY" -m benchmarks "$SIZE" \
     --plain --output "$W/$name" "$@" >"$W/$name.log" 2>&1; echo "exit $?" >>"$W/$name.log")
}

PYTHONPATH="$ROOT" "$PY" -c "from myc.backends.cpu.jit import host; print('myc host (cpu, features; the vector width chosen):', host())" 2>&1 | tail -1 | tee -a "$LOG"
step "all steps start ($NCPU cores, budget $BUDGET s)"
if [ "${GPU:-1}" = "1" ]; then
  (PYTHONPATH="$ROOT" pin 0-3 timeout "$((BUDGET - 10))" env OUT="$W/gpu" SIZE=quick CPU_TESTS=0 \
     bash benchmarks/gpu_check.sh >"$W/gpu_check.out" 2>&1) &
fi
if [ "$NCPU" -ge 8 ] && [ -n "${BASELINE:-}" ] && [ -d "${BASELINE}/myc" ]; then
  BASE="$(cd "$BASELINE" && pwd)"
  bench 4-5 compare-old "$BASE" --peers none &
  bench 6-7 compare-new "$ROOT" --peers none &
fi
if [ "$NCPU" -ge 12 ]; then
  bench 8-9 bench-quick "$ROOT" --peers torch.compile,jax &
  bench 10-11 bench-contend "$ROOT" --contend --peers jax &
fi
if [ "$NCPU" -ge 16 ]; then
  # this CPU's own code paths (AVX-512 math) checked against the references, then the
  # memory-bound probes against JAX with one and two threads
  (cd "$ROOT" && MYC_CACHE_DIR="$W/cache-cputests" PYTHONPATH="$ROOT" pin 12-13 timeout "$((BUDGET - 20))" \
     "$PY" -m pytest -q -p no:cacheprovider -o addopts="" tests/cpu/test_mathlib.py \
     tests/cpu/test_subnormals.py tests/cpu/test_special.py tests/cpu/test_tuning.py \
     >"$W/cpu_tests.log" 2>&1; echo "exit $?" >>"$W/cpu_tests.log") &
  (cd "$ROOT" && for t in 1 2; do cores=14; [ $t = 2 ] && cores=14-15
     MYC_CACHE_DIR="$W/cache-probe$t" PYTHONPATH="$ROOT" JAX_PLATFORMS=cpu \
     XLA_FLAGS="--xla_cpu_multi_thread_eigen=$([ $t = 1 ] && echo false || echo true) intra_op_parallelism_threads=$t" \
     pin $cores timeout 100 "$PY" -m benchmarks.x86_probe --threads $t >"$W/probe-t$t.log" 2>&1; done) &
fi
wait
step "all steps ended"
tail -30 "$W/gpu_check.out" 2>/dev/null | tee -a "$LOG"
for n in compare-old compare-new bench-quick bench-contend; do
  [ -f "$W/$n.log" ] && { echo "--- $n"; grep -E "ok:|exit|FAIL|Error" "$W/$n.log" | tail -12; } | tee -a "$LOG"
done
for f in cpu_tests.log probe-t1.log probe-t2.log; do
  [ -f "$W/$f" ] && { echo "--- $f"; tail -8 "$W/$f"; } | tee -a "$LOG"
done
if [ -f "$W/compare-old/results.json" ] && [ -f "$W/compare-new/results.json" ]; then
  step "no-regression comparison (old harness on cores 4-5, new on 6-7, side by side)"
  PYTHONPATH="$ROOT" "$PY" -m benchmarks --compare "$W/compare-old/results.json" \
    "$W/compare-new/results.json" >"$W/compare.txt" 2>&1
  cat "$W/compare.txt" | tee -a "$LOG"
fi

step "packing"
rm -rf "$W"/cache*
tar czf "$OUT/all.tgz" -C "$W" . 2>/dev/null
cp "$LOG" "$OUT/session.log"
for f in gpu/gpu_check.md gpu/gpu_check_full.md gpu/gpu_overhead.log bench-quick/results.md bench-contend/results.md compare.txt; do
  [ -f "$W/$f" ] && cp "$W/$f" "$OUT/$(echo "$f" | tr / _)"
done
ls -la "$OUT"
