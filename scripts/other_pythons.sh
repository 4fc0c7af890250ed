#!/usr/bin/env bash
# Builds ember._C for each other CPython (3.12, 3.13) found on this machine and runs
# tests/python/exit_check.py with it: the main suite runs on one Python only, and some defects show
# on other versions alone (Note [Process-lifetime Python objects], python/src/common.h).
# Reuses the main build's compiled core through ccache; only the binding files compile anew.
# Usage: scripts/other_pythons.sh [python ...]   (default: python3.12 and python3.13 where found)
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ember-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
PY=${PYTHON:-python3}
main_ver=$($PY -c "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')")
nanobind_dir=$($PY -c "import nanobind; print(nanobind.cmake_dir())")

find_python() {  # $1 = 3.12: on PATH (one that runs: pyenv's shims may not), else pyenv's newest
  local p d
  p=$(command -v "python$1" || true)
  if [ -n "$p" ] && "$p" -c pass 2>/dev/null; then echo "$p"; return; fi
  for d in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".* 2>/dev/null | sort -V -r); do
    [ -x "$d/bin/python3" ] && echo "$d/bin/python3" && return
  done
  return 0
}

if [ $# -gt 0 ]; then pythons=("$@"); else
  pythons=()
  for v in 3.12 3.13; do
    [ "$v" = "$main_ver" ] && continue
    p=$(find_python "$v")
    [ -n "$p" ] && pythons+=("$p")
  done
fi
if [ ${#pythons[@]} -eq 0 ]; then
  echo "   no other CPython (3.12, 3.13) installed: skipped"
  exit 0
fi
for py in "${pythons[@]}"; do
  ver=$("$py" -c "import sys; print(f'{sys.version_info[0]}{sys.version_info[1]}')")
  if ! "$py" -c "import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"; then
    echo "   $py: no Python.h (the -dev package): skipped"
    continue
  fi
  # numpy: ember's one Python dependency (ember.save, DataLoader's collate use it)
  "$py" -c "import numpy" 2>/dev/null || "$py" -m pip install -q numpy >/dev/null
  dir=build-py$ver
  mkdir -p "$dir/pkg"
  # The package's Python sources, with this Python's extension beside them.
  rm -rf "$dir/pkg/ember" && cp -r python/ember "$dir/pkg/ember" && rm -f "$dir"/pkg/ember/*.so
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_TESTS=OFF \
    -DPython_EXECUTABLE="$py" -Dnanobind_ROOT="$nanobind_dir" -DEMBER_PYTHON_OUTPUT_DIR="$PWD/$dir/pkg/ember" >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target _C _cpu_probe >/dev/null
  out=$(PYTHONPATH="$dir/pkg" "$py" tests/python/exit_check.py 2>&1) && rc=0 || rc=$?
  if [ $rc -ne 0 ] || [[ "$out" != *"exit check ok"* ]]; then
    echo "$out" | tail -n 20
    echo "   $py: exit_check.py exited with $rc"
    exit 1
  fi
  echo "   $("$py" --version): ember._C built, exit_check.py exited 0"
done
