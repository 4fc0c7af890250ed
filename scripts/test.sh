#!/usr/bin/env bash
# Runs every test: C++ (GoogleTest via CTest), Python (pytest), the C++ example against the
# installed library, and the format check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=${PYTHON:-python3}

echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j "$(nproc)" 2>&1 | tail -n 3

echo "== ThreadSanitizer: autograd engine thread tests (scripts/tsan.sh; EMBER_SKIP_TSAN=1 skips)"
if [ "${EMBER_SKIP_TSAN:-0}" != 1 ]; then
  bash scripts/tsan.sh 2>&1 | tail -n 3
fi

echo "== C++ examples against the installed library"
rm -rf build/install build/example
cmake --install build --prefix build/install >/dev/null
cmake -S examples/cpp -B build/example -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build build/example >/dev/null
./build/example/tensor_basics
./build/example/autograd >/dev/null && echo "autograd: ok"
./build/example/regression | tail -n 2
# The libtorch-style trainers read uncompressed IDX files: Debian's Fashion-MNIST, unpacked once.
FMNIST=build/fashion-mnist
if [ ! -f "$FMNIST/t10k-labels-idx1-ubyte" ]; then
  mkdir -p "$FMNIST"
  for f in /usr/share/datasets/fashion-mnist/*.gz; do gunzip -c "$f" > "$FMNIST/$(basename "$f" .gz)"; done
fi
./build/example/fashion_mnist "$FMNIST" --epochs 1 --limit-train 2048 --limit-test 1000 | tail -n 1
./build/example/dcgan "$FMNIST" --batches 4 | tail -n 1

echo "== C++ frontend against libtorch: one source built against both (EMBER_SKIP_LIBTORCH_COMPAT=1 skips)"
if [ "${EMBER_SKIP_LIBTORCH_COMPAT:-0}" != 1 ]; then
  t0=$SECONDS
  bash scripts/cpp_compat_check.sh build/example/compat_check
  echo "   $((SECONDS - t0)) s"
fi

echo "== format check (clang-format)"
bash scripts/format.sh --check

echo "== Python tests (pytest)"
PYTHONPATH=python $PY -m pytest tests/python -q -p no:cacheprovider

echo "== Python kernel tests at each lower kernel level (EMBER_CPU_CAPABILITY, docs/design.md)"
# The full run above used the best level this CPU supports; the kernel test files run again at
# every level below it, so each compile of the multi-ISA kernels is exercised.
KERNEL_TESTS="tests/python/test_arithmetic.py tests/python/test_unary.py tests/python/test_reductions.py
  tests/python/test_reductions2.py tests/python/test_indexing.py tests/python/test_complex.py tests/python/test_random.py
  tests/python/test_optim.py tests/python/test_nn_loss.py tests/python/test_nn_norm.py tests/python/test_nn_rnn.py
  tests/python/test_nn_conv.py tests/python/test_nn_attention.py tests/python/test_autocast.py tests/python/test_bessel.py
  tests/python/test_matmul.py tests/python/test_polynomials.py tests/python/test_pdist.py
  tests/python/test_special_binary.py tests/python/test_nn_upsample.py"
best=$(PYTHONPATH=python $PY -c "import ember; print(ember._C._get_cpu_capability_supported())")
for level in DEFAULT AVX2 AVX512; do
  [ "$level" = "$best" ] && break
  t0=$SECONDS
  EMBER_CPU_CAPABILITY=$level PYTHONPATH=python $PY -m pytest $KERNEL_TESTS -q -p no:cacheprovider | tail -n 1
  echo "   $level: $((SECONDS - t0)) s"
done

echo "== other Pythons: ember._C built for each other installed CPython (3.12, 3.13), a clean exit"
t0=$SECONDS
bash scripts/other_pythons.sh
echo "   $((SECONDS - t0)) s"

echo "== wheel: pip wheel, auditwheel repair, fresh venv, smoke test natively and under qemu"
t0=$SECONDS
bash scripts/wheel_test.sh
echo "   $((SECONDS - t0)) s"

# ---- sanitizers: ASan+UBSan build (build-asan), C++ tests, part of pytest, a 60 s libFuzzer run ----
# (scripts/sanitize.sh; ~8 min on a fresh 2-core machine, less with a warm ccache).
# EMBER_SKIP_SANITIZE=1 skips it for quick local runs.
if [ "${EMBER_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== sanitizers (scripts/sanitize.sh)"
  bash scripts/sanitize.sh "${EMBER_FUZZ_SECONDS:-60}"
fi
