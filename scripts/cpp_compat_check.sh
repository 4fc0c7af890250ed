#!/usr/bin/env bash
# Builds the same libtorch-style source, examples/cpp/compat_check.cpp, against libtorch (the
# headers and libraries of the installed torch wheel) and runs it beside the Ember build of it;
# their output must be identical. Usage: cpp_compat_check.sh EMBER_BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
EMBER_BIN=${1:?usage: cpp_compat_check.sh EMBER_BINARY}
PY=${PYTHON:-python3}
OUT=build/compat_check
mkdir -p "$OUT"
TORCH=$($PY -c "import os, torch; print(os.path.dirname(torch.__file__))")
ABI=$($PY -c "import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))")
LAUNCHER=""
command -v ccache >/dev/null && LAUNCHER=ccache
# -O1: libtorch's headers take ~20 s to compile at -O1 on one core, minutes with optimization.
$LAUNCHER ${CXX:-g++} -std=c++20 -O1 -w -D_GLIBCXX_USE_CXX11_ABI="$ABI" examples/cpp/compat_check.cpp \
  -I"$TORCH/include" -I"$TORCH/include/torch/csrc/api/include" -L"$TORCH/lib" -ltorch -ltorch_cpu -lc10 \
  -Wl,-rpath,"$TORCH/lib" -o "$OUT/compat_check_libtorch"
"$OUT/compat_check_libtorch" > "$OUT/libtorch.txt"
"$EMBER_BIN" > "$OUT/ember.txt"
if diff -u "$OUT/libtorch.txt" "$OUT/ember.txt"; then
  echo "compat_check: the same source prints the same $(wc -l < "$OUT/ember.txt") lines against libtorch and Ember"
else
  echo "compat_check: output differs between libtorch and Ember" >&2
  exit 1
fi
