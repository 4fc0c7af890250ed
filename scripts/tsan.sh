#!/usr/bin/env bash
# ThreadSanitizer run of the autograd engine's thread tests (issue 10): builds libember and the
# C++ tests with -fsanitize=thread into build-tsan, then runs the thread-safety tests.
# OMP_NUM_THREADS=1: GCC's libgomp (and OpenBLAS built on it) is not TSan-instrumented, so its
# worker threads' synchronization is invisible to TSan and every parallel region would be
# reported as a race. With one OpenMP thread each test thread runs its kernels itself, and what
# TSan checks is ember's own cross-thread state (engine, accumulation, version counters,
# allocator, generator, the FFT plan cache), and ember.distributed's store server and process-group
# threads (Gloo is not instrumented, but its pthread synchronization is seen). -O1 keeps the build short.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ember-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DEMBER_SANITIZE_THREAD=ON -DEMBER_BUILD_PYTHON=OFF -DEMBER_ISA_DISPATCH=OFF >/dev/null
if ! cmake --build build-tsan -j "$(nproc)" --target ember_tests >build-tsan/build.log 2>&1; then
  tail -n 50 build-tsan/build.log
  exit 1
fi
export OMP_NUM_THREADS=1
export EMBER_MKL=0  # MKL is not instrumented either (Note [MKL GEMM])
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
./build-tsan/ember_tests --gtest_filter="${TSAN_FILTER:-AutogradThreads.*:Views.*:Storage.*:Allocator.*:Fft.*:DistStore.*:DistGloo.TwoThreads*}"
