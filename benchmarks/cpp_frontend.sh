#!/usr/bin/env bash
# The C++ frontend's training speed beside Python and libtorch: ../shared/bench/train_fashion_mnist.py
# (LeNet, SGD, batch 64) with --lib ember and --lib torch, and its C++ port
# benchmarks/cpp_train_lenet.cpp built against Ember's <torch/torch.h> and against libtorch (the
# torch wheel), run one after the other for ROUNDS rounds. Needs an installed Ember
# (cmake --install build --prefix build/install) and the unpacked IDX files in build/fashion-mnist.
#   benchmarks/cpp_frontend.sh [ROUNDS] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
THREADS=${2:-2}
PY=${PYTHON:-python3}
OUT=build/bench_cpp
mkdir -p "$OUT"
TORCH=$($PY -c "import os, torch; print(os.path.dirname(torch.__file__))")
PREFIX=$PWD/build/install
LIBS=""
for v in OPENBLAS_LIBRARY DNNL_LIBRARY FFTW3_LIBRARY FFTW3F_LIBRARY LIBDEFLATE_LIBRARY; do
  LIBS="$LIBS $(grep "^$v:" build/CMakeCache.txt | cut -d= -f2)"
done
[ -x "$OUT/lenet_ember" ] || g++ -std=c++20 -O2 benchmarks/cpp_train_lenet.cpp -I"$PREFIX/include/ember/compat" \
  -I"$PREFIX/include" "$PREFIX/lib/libember_frontend.a" "$PREFIX/lib/libember.a" $LIBS -lgloo -fopenmp -o "$OUT/lenet_ember"
[ -x "$OUT/lenet_libtorch" ] || g++ -std=c++20 -O2 -w benchmarks/cpp_train_lenet.cpp -I"$TORCH/include" \
  -I"$TORCH/include/torch/csrc/api/include" -L"$TORCH/lib" -ltorch -ltorch_cpu -lc10 -Wl,-rpath,"$TORCH/lib" \
  -o "$OUT/lenet_libtorch"
run() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS "$@"; }
for r in $(seq "$ROUNDS"); do
  echo "round $r"
  run "$OUT/lenet_ember" build/fashion-mnist | sed 's/^/  C++ ember:    /'
  run "$OUT/lenet_libtorch" build/fashion-mnist | sed 's/^/  C++ libtorch: /'
  (cd ../shared/bench && PYTHONPATH=$OLDPWD/python run $PY train_fashion_mnist.py --lib ember --threads "$THREADS" 2>/dev/null) \
    | sed 's/^/  Py ember:     /'
  (cd ../shared/bench && run $PY train_fashion_mnist.py --lib torch --threads "$THREADS" 2>/dev/null) \
    | sed 's/^/  Py torch:     /'
done
