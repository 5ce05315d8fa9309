#!/usr/bin/env bash
# The lent machine's CPU (16 cores) as an idle x86 box of another class, about 4 minutes:
#   - the no-regression comparison made robust to which cores run it: an old tree
#     (BASELINE=dir with myc/ and benchmarks/) and this one, W1-W7 quick, one after the
#     other on the same two cores, in both orders, on four core pairs at once; then
#     `python -m benchmarks --compare` per pair;
#   - benchmarks/x86_probe.py (myc against JAX on memory-bound reductions and exp) with
#     one and two threads, vector width auto / 256 / 512.
#
#   OUT=dir BASELINE=.baseline bash benchmarks/device_cpu_probe.sh
set -u
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${OUT:-$PWD/device-out}"
W="$(mktemp -d /tmp/myc-cpu-probe.XXXXXX)"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
BUDGET="${BUDGET:-300}"
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=""
if [ -n "${WHEELS:-}" ]; then
  "$PY" -c "import llvmlite" 2>/dev/null || \
    "$PY" -m pip install --no-index --find-links "$WHEELS" llvmlite 2>&1 | tail -1
fi
BASE="$(cd "${BASELINE:-.baseline}" && pwd)"
one() {  # one CORES NAME TREE: W1-W7 quick, myc and torch only
  (cd "$2" && MYC_CACHE_DIR="$W/cache-$3" PYTHONPATH="$2" taskset -c "$1" \
     timeout "$((BUDGET / 2 - 10))" "$PY" -m benchmarks --quick --peers none --plain --no-memory \
     --output "$W/$3" >"$W/$3.log" 2>&1; echo "exit $?" >>"$W/$3.log")
}
pair() {  # pair CORES TAG FIRST SECOND
  one "$1" "$3" "$2-a"; one "$1" "$4" "$2-b"
}
pair 4-5 p45 "$BASE" "$ROOT" &
pair 6-7 p67 "$ROOT" "$BASE" &
pair 8-9 p89 "$BASE" "$ROOT" &
pair 10-11 p1011 "$ROOT" "$BASE" &
probe() {  # probe CORES NAME THREADS [VW]
  (cd "$ROOT" && MYC_CACHE_DIR="$W/cache-$2" MYC_VECTOR_WIDTH="${4:-auto}" \
     XLA_FLAGS="--xla_cpu_multi_thread_eigen=$([ "$3" = 1 ] && echo false || echo true) intra_op_parallelism_threads=$3" \
     PYTHONPATH="$ROOT" taskset -c "$1" timeout 100 "$PY" -m benchmarks.x86_probe --threads "$3" \
     >"$W/$2.log" 2>&1)
}
(probe 12 t1-auto 1; probe 12 t1-512 1 512) &
(probe 13 t1-256 1 256; probe 13 t1-auto-again 1) &
(probe 14-15 t2-auto 2; probe 14-15 t2-256 2 256) &
(probe 0-1 t2-512 2 512; probe 0-1 t2-auto-again 2) &
wait
{
  lscpu | grep -m1 "Model name"
  for f in "$W"/t*.log; do echo "--- $(basename "$f")"; cat "$f"; done
  for p in p45:old-new p67:new-old p89:old-new p1011:new-old; do
    tag=${p%%:*}; order=${p##*:}
    if [ "$order" = old-new ]; then old="$W/$tag-a" new="$W/$tag-b"; else old="$W/$tag-b" new="$W/$tag-a"; fi
    echo "=== $tag ($order on the same cores)"
    PYTHONPATH="$ROOT" "$PY" -m benchmarks --compare "$old/results.json" "$new/results.json" 2>&1 | grep -E "myc|workload"
  done
} >"$W/summary.txt" 2>&1
cat "$W/summary.txt"
rm -rf "$W"/cache-*
tar czf "$OUT/cpu_probe.tgz" -C "$W" .
cp "$W/summary.txt" "$OUT/cpu_probe_summary.txt"
