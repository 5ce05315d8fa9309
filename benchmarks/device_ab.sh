#!/usr/bin/env bash
# The lent machine's 16 cores as an idle x86 box for the no-regression comparison (and,
# optionally, the GPU tests at the same time): about 3 minutes.
#
# Old and new run the *same* harness (this tree's benchmarks/), each with its own myc:
# the old one from BASELINE=dir (an older commit's tree, e.g. `git archive ba56dce myc`),
# so a change in how the harness measures cannot pass for a change in myc.  W1-W7 quick,
# one after the other on the same two cores, in alternating orders on PAIRS core pairs
# at once (cores 4-5, 6-7, ...); then `--compare` per pair and, per workload, the
# geometric mean of the pairs' new/old ratios and how many pairs saw new slower.
#
#   OUT=dir BASELINE=.baseline [PAIRS=6] [GPU=1] [PROBE=1] bash benchmarks/device_ab.sh
#
# INTERLEAVED=1 replaces each old/new pair by ONE harness run with `--baseline`: the
# baseline's myc runs in a worker process and is timed round by round with this tree's
# (docs/benchmarks.md, "Comparing two runs"), so the order effect of separate runs (the
# second of a pair up to ~20% slower on this class of machine) cannot enter the ratio.
# PAIRS such runs go on core pairs 4-5, 6-7, ... at once (SEQ=1: one after another on
# cores 0-1), each with BUDGET - 10 s and `--baseline-only` (PyTorch checks the outputs
# but is not timed: every round goes to the comparison); the summary lists each run's
# myc/myc@base with its paired 95% CI and verdict, then the geometric mean per workload.
#
# SEQ=1 runs the pairs one after another on cores 0-1 (a 2-core machine: PAIRS=2 gives
# old, new, new, old), BUDGET=400 leaves each harness run 190 s.
#
# GPU=1 also runs tests/cuda/test_gpu.py on cores 0-3, then benchmarks.gpu_check on
# GPU_WORKLOADS (default W3,W4,W7) against PyTorch on the GPU; PROBE=1 runs
# benchmarks/x86_probe.py (myc against JAX, one and two threads) on cores 0-1/2-3 instead.
set -u
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${OUT:-$PWD/device-out}"
W="$(mktemp -d /tmp/myc-ab.XXXXXX)"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
BUDGET="${BUDGET:-240}"
PAIRS="${PAIRS:-6}"
SIZE="${SIZE:-quick}"  # (SIZE=tiny PIN=0 PAIRS=1: a dry run anywhere)
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=cpu
pin() { if [ "${PIN:-1}" = "1" ]; then taskset -c "$@"; else "${@:2}"; fi; }
if [ -n "${WHEELS:-}" ]; then
  "$PY" -c "import llvmlite" 2>/dev/null || \
    "$PY" -m pip install --no-index --find-links "$WHEELS" llvmlite 2>&1 | tail -1
fi
OLD="$W/old-tree"  # this harness, the baseline's myc
mkdir -p "$OLD" && ln -s "$ROOT/benchmarks" "$OLD/benchmarks" && \
  ln -s "$(cd "${BASELINE:-.baseline}" && pwd)/myc" "$OLD/myc"
one() {  # one CORES TREE NAME: W1-W7 quick, myc and torch only
  (cd "$2" && MYC_CACHE_DIR="$W/cache-$3" PYTHONPATH="$2" CUDA_VISIBLE_DEVICES="" \
     pin "$1" timeout "$((BUDGET / 2 - 10))" "$PY" -m benchmarks "--$SIZE" --peers none \
     --plain --no-memory --output "$W/$3" >"$W/$3.log" 2>&1; echo "exit $?" >>"$W/$3.log")
}
BASE_ABS="$(cd "${BASELINE:-.baseline}" && pwd)"
ab() {  # ab CORES NAME: W1-W7, myc and myc@base interleaved in one run (and torch)
  (cd "$ROOT" && MYC_CACHE_DIR="$W/cache-$2" PYTHONPATH="$ROOT" CUDA_VISIBLE_DEVICES="" \
     pin "$1" timeout "$((BUDGET - 10))" "$PY" -m benchmarks "--$SIZE" --peers none \
     --plain --no-memory --baseline "$BASE_ABS" --baseline-only --output "$W/$2" \
     >"$W/$2.log" 2>&1
   echo "exit $?" >>"$W/$2.log")
}
for p in $(seq 1 "$PAIRS"); do
  c0=$((2 + 2 * p)); cores="$c0-$((c0 + 1))"
  if [ "${SEQ:-0}" = "1" ]; then cores=0-1; fi
  if [ "${INTERLEAVED:-0}" = "1" ]; then ab "$cores" "p$p-ab" &
  elif [ $((p % 2)) = 1 ]; then (one "$cores" "$OLD" "p$p-old"; one "$cores" "$ROOT" "p$p-new") &
  else (one "$cores" "$ROOT" "p$p-new"; one "$cores" "$OLD" "p$p-old") & fi
  if [ "${SEQ:-0}" = "1" ]; then wait; fi
done
if [ "${GPU:-0}" = "1" ]; then
  (MYC_CACHE_DIR="$W/cache-gpu" PYTHONPATH="$ROOT" pin 0-3 timeout "$((BUDGET - 10))" \
     "$PY" -m pytest -q -p no:cacheprovider -o addopts="" -rs tests/cuda/test_gpu.py \
     >"$W/pytest_gpu.log" 2>&1; echo "exit $?" >>"$W/pytest_gpu.log"
   MYC_CACHE_DIR="$W/cache-gpu" PYTHONPATH="$ROOT" pin 0-3 timeout 60 "$PY" -m benchmarks.gpu_check \
     --out "$W/gpu" --size quick --workloads "${GPU_WORKLOADS:-W3,W4,W7}" --budget 1.0 \
     >"$W/gpu_check_run.log" 2>&1; echo "exit $?" >>"$W/gpu_check_run.log") &
elif [ "${PROBE:-0}" = "1" ]; then
  for t in 1 2; do
    (cores=0; [ $t = 2 ] && cores=2-3
     MYC_CACHE_DIR="$W/cache-probe$t" PYTHONPATH="$ROOT" \
     XLA_FLAGS="--xla_cpu_multi_thread_eigen=$([ $t = 1 ] && echo false || echo true) intra_op_parallelism_threads=$t" \
     pin $cores timeout 100 "$PY" -m benchmarks.x86_probe --threads $t >"$W/probe-t$t.log" 2>&1) &
  done
fi
wait
{
  lscpu | grep -m1 "Model name"; echo "myc new: $(git -C "$ROOT" log -1 --format=%h 2>/dev/null) (as copied); old: ${BASELINE:-.baseline}"
  [ -f "$W/gpu/gpu_check.md" ] && tail -6 "$W/gpu/gpu_check.md"
  for f in "$W"/pytest_gpu.log "$W"/probe-t*.log; do [ -f "$f" ] && { echo "--- $(basename "$f")"; tail -12 "$f"; }; done
  if [ "${INTERLEAVED:-0}" = "1" ]; then
    for p in $(seq 1 "$PAIRS"); do
      echo "=== run $p ($([ "${SEQ:-0}" = "1" ] && echo "cores 0-1" || echo "cores $((2 + 2 * p))-$((3 + 2 * p))"), interleaved): $(tail -1 "$W/p$p-ab.log")"
    done
    PYTHONPATH="$ROOT" "$PY" -m benchmarks.baseline "$W"/p*-ab/results.json 2>&1
  else
  for p in $(seq 1 "$PAIRS"); do
    echo "=== pair $p (cores $((2 + 2 * p))-$((3 + 2 * p)); $([ $((p % 2)) = 1 ] && echo old first || echo new first))"
    PYTHONPATH="$ROOT" "$PY" -m benchmarks --compare "$W/p$p-old/results.json" \
      "$W/p$p-new/results.json" 2>&1 | grep -E "myc|workload"
  done
  echo "=== per workload, over the pairs: geometric mean of myc new/old, pairs with new slower"
  "$PY" - "$W" "$PAIRS" <<'EOF'
import json, math, sys
from pathlib import Path
w, pairs = Path(sys.argv[1]), int(sys.argv[2])
def medians(p):
    out = {}
    for name, r in json.loads(p.read_text())["workloads"].items():
        med = r.get("implementations", {}).get("myc", {}).get("stats_ms", {}).get("median")
        if med:
            out[name] = med
    return out
ratios = {}
for p in range(1, pairs + 1):
    try:
        old, new = medians(w / f"p{p}-old/results.json"), medians(w / f"p{p}-new/results.json")
    except (OSError, ValueError):
        continue
    for k in old.keys() & new.keys():
        ratios.setdefault(k, []).append(new[k] / old[k])
for k in sorted(ratios):
    r = ratios[k]
    g = math.exp(sum(map(math.log, r)) / len(r))
    print(f"{k:5s} new/old geometric mean {g:.3f} over {len(r)} pairs; new slower in "
          f"{sum(x > 1 for x in r)}; ratios " + " ".join(f"{x:.2f}" for x in r))
EOF
  fi
} >"$W/summary.txt" 2>&1
cat "$W/summary.txt"
rm -rf "$W"/cache-* "$OLD"
tar czf "$OUT/ab.tgz" -C "$W" .
cp "$W/summary.txt" "$OUT/ab_summary.txt"
