#!/usr/bin/env bash
# The whole GPU check in one script: clad's torch tests on CUDA, then the device benchmarks, every
# figure written under $OUT (default: gpu-check/ in the current folder). Run from the repository root
# on a machine with CUDA:
#
#     bash benchmarks/gpu_check.sh            # tests, then benchmarks (about eight minutes on an H100)
#     STEPS="tests" bash benchmarks/gpu_check.sh
#     STEPS="tests benchmarks fisher" bash benchmarks/gpu_check.sh   # and the Fisher diagonal on CUDA
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
    # every CUDA test (they are the ones no other machine runs): the device matrix, the graphed
    # training step, the replicas on CUDA
    step cuda_tests "${CUDA_TESTS_LIMIT:-150}" "$PY" -m pytest -q -p no:cacheprovider -o addopts="-ra" \
        tests/detectors/test_torch_device.py tests/detectors/test_torch_autoencoder.py tests/detectors/test_torch_regularization.py \
        tests/detectors/test_torch_rehearsal.py tests/detectors/test_torch_sequence.py tests/detectors/test_torch_replicas.py ${EXTRA_TESTS:-} \
        -k "cuda or cudnn or gpu or graph" --junitxml="$OUT/cuda_tests.xml"
fi
if [[ " $STEPS " == *" benchmarks "* ]]; then
    # clad against the bare loop on the CPU (no replicas there: the CPU figures are torch_replicas.py's)
    step torch_device_cpu "${BENCH_CPU_LIMIT:-100}" "$PY" benchmarks/torch_device.py --devices cpu --ks "" \
        --out "$OUT/torch_device_cpu.json"
    # on CUDA: clad, the bare loop, the CUDA-graph floor, replica throughput at K = 1, 8, 32, 128
    step torch_device_cuda "${BENCH_LIMIT:-330}" "$PY" benchmarks/torch_device.py --devices cuda \
        --out "$OUT/torch_device_cuda.json"
    [[ " $STEPS " == *" fisher "* ]] && step fisher_cuda 60 "$PY" benchmarks/fisher_diagonal.py --device cuda
    step torch_replicas_cuda "${REPLICAS_LIMIT:-100}" "$PY" benchmarks/torch_replicas.py --device cuda \
        --parts steps,grid --ks 1,8,32,128 --quick --out "$OUT/torch_replicas_cuda.json"
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
