#!/usr/bin/env bash
# The whole GPU check in one script: clad's torch tests on CUDA, then the device benchmarks, every
# figure written under $OUT (default: gpu-check/ in the current folder). Run from the repository root
# on a machine with CUDA:
#
#     bash benchmarks/gpu_check.sh            # tests, then benchmarks (a few minutes on an H100)
#     STEPS="tests" bash benchmarks/gpu_check.sh
#
# Wheels of clad's pure-Python dependencies that the machine lacks may lie in .whl/ (they are
# installed into /tmp/site, nothing else is touched). Each step has its own time limit, so one that
# hangs cannot eat the others' time; the summary at the end says how each step ended.
set -u
OUT="${OUT:-gpu-check}"
STEPS="${STEPS:-tests benchmarks}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), 'available', torch.cuda.is_available())"
  nproc; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
summary=()
step() {  # step NAME LIMIT_SECONDS COMMAND...
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    summary+=("$name: exit $rc in $((SECONDS - t0)) s")
    echo "== $name: exit $rc in $((SECONDS - t0)) s"; tail -n 25 "$OUT/$name.log"
}
if [[ " $STEPS " == *" tests "* ]]; then
    # every CUDA test first (they are the ones no other machine runs), then the rest of the torch tests
    step cuda_tests "${CUDA_TESTS_LIMIT:-240}" "$PY" -m pytest -q -p no:cacheprovider -o addopts="-ra" \
        tests/test_torch_device.py tests/test_torch_autoencoder.py tests/test_torch_regularization.py \
        tests/test_torch_rehearsal.py tests/test_torch_sequence.py ${EXTRA_TESTS:-} -k "cuda or cudnn or gpu or graph" \
        --junitxml="$OUT/cuda_tests.xml"
fi
if [[ " $STEPS " == *" benchmarks "* ]]; then
    step torch_device "${BENCH_LIMIT:-200}" "$PY" benchmarks/torch_device.py ${TORCH_DEVICE_ARGS:-}
    step fisher_cuda 60 "$PY" benchmarks/fisher_diagonal.py --device cuda
    [ -f benchmarks/torch_replicas.py ] && step torch_replicas "${BENCH_LIMIT:-200}" "$PY" benchmarks/torch_replicas.py --device cuda ${REPLICA_ARGS:-}
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
