#!/usr/bin/env bash
# One lent GPU machine, used once (about 9 minutes): the CUDA check (GPU tests, the
# semantics corpus on the GPU, W1-W7 against PyTorch on the GPU, the per-call host
# overhead, fast path on and off), then the CPU benchmark on two of the machine's cores (another x86 machine
# class than the development machines: its CPU model and vector ISA are recorded) --
# plain and with one of the two cores kept busy (--contend) -- while the fuzz campaign
# uses the other cores.  Everything lands in $OUT as a few files (the device tool
# returns at most 8): all.tgz with every log and result, and the key tables.
#
#   OUT=/some/dir bash benchmarks/device_session.sh
#
# Optional: WHEELS=dir of wheels to install offline; FUZZ_SECONDS (default BUDGET - 90);
# BENCH=0 to skip the CPU benchmark; BENCH_SIZE=tiny for a dry run; BUDGET (default 540 s):
# the benchmark steps are skipped or shortened so that the whole ends within it.
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
W="$(mktemp -d /tmp/myc-device.XXXXXX)"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-python3}"
NCPU=$(nproc)
LOG="$W/session.log"
START=$(date +%s)
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - START) )); }  # seconds left to the budget
step() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
pin() { if command -v taskset >/dev/null; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }
lscpu >"$W/lscpu.txt" 2>&1
grep -m1 "Model name" "$W/lscpu.txt" | tee -a "$LOG"

FUZZ_PID=""
if [ "$NCPU" -ge 8 ] && [ -f tests/reliability/campaign.py ]; then
  step "fuzz campaign in the background on cores 4-$((NCPU - 1))"
  mkdir -p "$W/fuzz"
  FUZZ_CORES="4-$((NCPU - 1))"
  for i in $(seq 4 $((NCPU - 1))); do
    # most cores on gradients (cpu against the evaluator and finite differences), a
    # quarter on values against CPython with the GPU backend in the comparison
    kinds=gradients; backends=interp,cpu
    [ $((i % 4)) = 0 ] && kinds=values && backends=interp,cpu,cuda
    (MYC_CACHE_DIR="$W/fuzz/cache$i" taskset -c "$i" timeout "$((${FUZZ_SECONDS:-$(( ${BUDGET:-540} - 90 ))} + 60))" \
      "$PY" -m tests.reliability.campaign --seconds "${FUZZ_SECONDS:-$(( ${BUDGET:-540} - 90 ))}" \
      --backends "$backends" --kinds "$kinds" --out "$W/fuzz/run$i" \
      >"$W/fuzz/run$i.log" 2>&1) &
  done
  FUZZ_PID=1
fi

step "GPU: tests, corpus, W1-W7 against PyTorch (cores 0-3)"
pin 0-3 env OUT="$W/gpu" SIZE=quick CPU_TESTS=0 bash benchmarks/gpu_check.sh >"$W/gpu_check.out" 2>&1
tail -40 "$W/gpu_check.out" | tee -a "$LOG"
# (kept at once: a run stopped later still returns the GPU results)
cp "$W/gpu/gpu_check.md" "$OUT/gpu_gpu_check.md" 2>/dev/null
cp "$W/gpu/gpu_check_full.md" "$OUT/gpu_gpu_check_full.md" 2>/dev/null
tar czf "$OUT/gpu.tgz" -C "$W" gpu gpu_check.out 2>/dev/null
if [ "${BENCH:-1}" = "1" ] && [ "$(left)" -gt 150 ]; then
  step "CPU benchmark on cores 0-1 (JAX and PyTorch on the CPU; $(left) s left)"
  MYC_CACHE_DIR="$W/cache-bench" JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES="" \
    pin 0-1 timeout "$(( $(left) > 260 ? 220 : $(left) - 40 ))" "$PY" -m benchmarks "--${BENCH_SIZE:-quick}" --peers torch.compile,jax --plain \
    --output "$W/bench-quick" >"$W/bench-quick.log" 2>&1
  tail -15 "$W/bench-quick.log" | tee -a "$LOG"
fi
if [ "${BENCH:-1}" = "1" ] && [ "$(left)" -gt 80 ]; then
  step "CPU benchmark under --contend (core 1 kept busy; $(left) s left)"
  MYC_CACHE_DIR="$W/cache-bench" JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES="" \
    pin 0-1 timeout "$(( $(left) - 30 ))" "$PY" -m benchmarks "--${BENCH_SIZE:-quick}" --contend --workloads W3,W4,W6 --peers jax \
    --plain --output "$W/bench-contend" >"$W/bench-contend.log" 2>&1
  tail -8 "$W/bench-contend.log" | tee -a "$LOG"
fi

if [ -n "$FUZZ_PID" ]; then
  step "waiting for the fuzz campaign"
  wait
  for d in "$W"/fuzz/run*/; do echo "--- $d"; cat "$d/summary.txt"; done >"$W/fuzz_summary.txt" 2>/dev/null
  mkdir -p "$W/fuzz_failures"
  for d in "$W"/fuzz/run*/; do
    for f in "$d"failure-*; do [ -f "$f" ] && cp "$f" "$W/fuzz_failures/$(basename "$d")-$(basename "$f")"; done
  done
  tail -60 "$W/fuzz_summary.txt" | tee -a "$LOG"
fi

step "packing"
rm -rf "$W"/cache* "$W"/fuzz/cache*
tar czf "$OUT/all.tgz" -C "$W" . 2>/dev/null
cp "$LOG" "$OUT/session.log"
rm -f "$OUT/gpu.tgz"
for f in gpu/gpu_check.md gpu/gpu_check_full.md gpu/gpu_overhead.log bench-quick/results.md bench-contend/results.md fuzz_summary.txt; do
  [ -f "$W/$f" ] && cp "$W/$f" "$OUT/$(echo "$f" | tr / _)"
done
ls -la "$OUT"
