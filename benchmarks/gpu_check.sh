#!/usr/bin/env bash
# The GPU check for backend="cuda", in one go (GPU_BUDGET seconds, default 480, at most):
# versions, the GPU tests, W1-W7 checked against the cpu backend and timed against
# PyTorch on the same GPU, W1/W2/W7 at the full sizes (achieved GB/s against the GPU's
# peak and a measured device copy: gpu_check_full.md), the host time per call
# (benchmarks/gpu_overhead.py, CUDA graphs on, then off), then the rest of tests/cuda
# (emulator, ptxas) as time allows.  Everything lands
# in $OUT (default ./gpu-check-out); a failing step is logged and the next one runs.  Without a GPU it is a dry run: the GPU tests skip and
# the workload table records why.
#
#   OUT=/some/dir bash benchmarks/gpu_check.sh
#
# Optional: WHEELS=dir of wheels to install offline when llvmlite/hypothesis are missing;
# SIZE=quick|tiny|full (default quick); COMPILE=0 to skip torch.compile; CPU_TESTS=0 to skip
# the last step (the tests CI runs anyway); CORPUS_TIMEOUT (default 150 s).
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
SIZE="${SIZE:-quick}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export MYC_CACHE_DIR="$(mktemp -d /tmp/myc-gpu-cache.XXXXXX)"
LOG="$OUT/gpu_check.log"
step() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
T0=$(date +%s)
left() { echo $(( ${GPU_BUDGET:-480} - ($(date +%s) - T0) )); }  # seconds left

step "device"
(nvidia-smi || echo "no nvidia-smi") >"$OUT/nvidia-smi.txt" 2>&1
head -20 "$OUT/nvidia-smi.txt" | tee -a "$LOG"

step "versions"
for m in numpy llvmlite cupy torch jax pytest hypothesis; do
  "$PY" -c "import $m; print('$m', $m.__version__)" 2>&1 | tail -1 | tee -a "$LOG"
done
if [ -n "${WHEELS:-}" ]; then
  for m in llvmlite hypothesis; do
    "$PY" -c "import $m" 2>/dev/null || \
      "$PY" -m pip install --no-index --find-links "$WHEELS" "$m" 2>&1 | tail -2 | tee -a "$LOG"
  done
fi
"$PY" -c "import cupy; print('gpu available:', cupy.cuda.is_available())" 2>&1 | tail -1 \
  | tee -a "$LOG"
command -v ptxas >/dev/null || export PATH="$PATH:$(ls -d /usr/local/cuda*/bin 2>/dev/null | head -1)"

step "tests/cuda/test_gpu.py: kernels and programs on the GPU"
timeout 110 "$PY" -m pytest -q --maxfail=10 -p no:cacheprovider -o addopts="" -rs \
  tests/cuda/test_gpu.py >"$OUT/pytest_gpu.log" 2>&1
echo "exit $?" >>"$OUT/pytest_gpu.log"; tail -25 "$OUT/pytest_gpu.log" | tee -a "$LOG"

step "tests/cuda/test_corpus_gpu.py: the semantics corpus on the GPU against CPython"
XDIST=""; "$PY" -c "import xdist" 2>/dev/null && XDIST="-n 8"
timeout "${CORPUS_TIMEOUT:-150}" "$PY" -m pytest -q --maxfail=20 -p no:cacheprovider -o addopts="" -rs \
  $XDIST tests/cuda/test_corpus_gpu.py >"$OUT/pytest_corpus.log" 2>&1
echo "exit $?" >>"$OUT/pytest_corpus.log"; tail -25 "$OUT/pytest_corpus.log" | tee -a "$LOG"

step "W1-W7: correctness against the cpu backend, then timing against PyTorch ($(left) s left)"
COMPILE_FLAG="--compile"; [ "${COMPILE:-1}" = "0" ] && COMPILE_FLAG=""
timeout 170 "$PY" -m benchmarks.gpu_check --out "$OUT" --size "$SIZE" --budget 1.0 \
  $COMPILE_FLAG --compile-limit 30 >"$OUT/gpu_check_run.log" 2>&1
echo "exit $?" >>"$OUT/gpu_check_run.log"; tail -25 "$OUT/gpu_check_run.log" | tee -a "$LOG"

if [ "$(left)" -gt 60 ]; then
  step "W1, W2, W7 at the full sizes: achieved GB/s against the peak ($(left) s left)"
  timeout "$(( $(left) > 100 ? 90 : $(left) - 10 ))" "$PY" -m benchmarks.gpu_check \
    --out "$OUT/full" --size full --workloads W1,W2,W7 --budget 0.5 \
    >"$OUT/gpu_check_full_run.log" 2>&1
  echo "exit $?" >>"$OUT/gpu_check_full_run.log"
  cp "$OUT/full/gpu_check.md" "$OUT/gpu_check_full.md" 2>/dev/null
  tail -12 "$OUT/gpu_check_full_run.log" | tee -a "$LOG"
else
  step "full sizes skipped ($(left) s left of GPU_BUDGET)"
fi

step "host overhead per call (benchmarks/gpu_overhead.py): CUDA graphs on, then off"
timeout 60 "$PY" -m benchmarks.gpu_overhead --size "$SIZE" --calls 200 --profile W3,W4 \
  --json "$OUT/gpu_overhead.json" >"$OUT/gpu_overhead.log" 2>&1
echo "exit $?" >>"$OUT/gpu_overhead.log"; head -16 "$OUT/gpu_overhead.log" | tee -a "$LOG"
if [ "$(left)" -gt 40 ]; then
  MYC_NO_GRAPHS=1 timeout "$(( $(left) > 70 ? 60 : $(left) - 10 ))" "$PY" -m benchmarks.gpu_overhead \
    --size "$SIZE" --calls 200 >"$OUT/gpu_overhead_nographs.log" 2>&1
  echo "exit $?" >>"$OUT/gpu_overhead_nographs.log"; head -10 "$OUT/gpu_overhead_nographs.log" | tee -a "$LOG"
fi

if [ "${CPU_TESTS:-1}" = "0" ]; then step "done (CPU_TESTS=0: the emulator/ptxas tests skipped)"; exit 0; fi
step "tests/cuda: emulator, PTX (ptxas where installed), fake-CuPy glue (what CI runs)"
timeout 80 "$PY" -m pytest -q -p no:cacheprovider -o addopts="" -rs \
  tests/cuda/test_runtime_fake.py tests/cuda/test_programs_emulated.py \
  tests/cuda/test_emulator.py tests/cuda/test_ptx.py >"$OUT/pytest_cuda.log" 2>&1
echo "exit $?" >>"$OUT/pytest_cuda.log"; tail -8 "$OUT/pytest_cuda.log" | tee -a "$LOG"

step "done: files in $OUT"
ls -la "$OUT" | tee -a "$LOG"
