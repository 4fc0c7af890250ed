#!/usr/bin/env bash
# Builds a wheel (pip wheel), repairs it with auditwheel (bundles libopenblas, libgomp,
# libgfortran, libfftw3/libfftw3f, libgloo with libibverbs/libhiredis/libnl, libdnnl, libdeflate),
# installs it in a fresh venv and runs scripts/smoke_test.py with it: natively, then under
# qemu-user's emulated CPUs (Haswell: AVX2 without AVX-512; Nehalem: the x86-64-v2 baseline),
# where an instruction the CPU lacks is a SIGILL. Called by scripts/test.sh.
#
# The wheel builds in build-wheel/, at the same depth as build/, so ccache (CCACHE_BASEDIR makes
# paths relative to the build dir) reuses the main build's objects.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
W=build-wheel
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ember-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}

rm -rf "$W/dist" "$W/wheelhouse" "$W/venv"
echo "-- pip wheel"
$PY -m pip wheel . --no-deps --no-build-isolation -q -w "$W/dist" --config-settings=build-dir="$W"
echo "-- auditwheel repair"
$PY -m auditwheel repair -w "$W/wheelhouse" "$W"/dist/ember-*.whl 2>&1 | tail -n 1
wheel=$(ls "$W"/wheelhouse/ember-*.whl)
echo "   $(basename "$wheel")"

echo "-- fresh venv"
$PY -m venv "$W/venv"
"$W/venv/bin/python" -m pip install -q "$wheel"
vpy="$W/venv/bin/python"
# Run from an empty directory with no PYTHONPATH, so the installed wheel is what gets imported.
mkdir -p "$W/run"
smoke() { (cd "$W/run" && env -u PYTHONPATH OMP_NUM_THREADS=2 "$@" ../venv/bin/python ../../scripts/smoke_test.py); }
smoke

if command -v qemu-x86_64 >/dev/null; then
  # OpenBLAS picks its kernels from cpuid (which qemu answers); pin its core type in case the
  # machine's environment names a newer one.
  for cpu in Haswell:AVX2 Nehalem:DEFAULT; do
    echo "-- under qemu-x86_64 -cpu ${cpu%%:*}"
    (cd "$W/run" && env -u PYTHONPATH OMP_NUM_THREADS=2 OPENBLAS_CORETYPE="${cpu%%:*}" \
      qemu-x86_64 -cpu "${cpu%%:*}" ../venv/bin/python ../../scripts/smoke_test.py --expect-capability "${cpu##*:}")
  done
else
  echo "qemu-x86_64 missing: run scripts/setup.sh (apt-get install qemu-user)" >&2
  exit 1
fi
