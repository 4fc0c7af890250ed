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

echo "== C++ example against the installed library"
rm -rf build/install build/example
cmake --install build --prefix build/install >/dev/null
cmake -S examples/cpp -B build/example -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build build/example >/dev/null
./build/example/tensor_basics

echo "== format check (clang-format)"
bash scripts/format.sh --check

echo "== Python tests (pytest)"
PYTHONPATH=python $PY -m pytest tests/python -q -p no:cacheprovider
