#!/usr/bin/env bash
# clang-format over the C++ sources; --check fails on any difference instead of rewriting.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files 'csrc/*.h' 'csrc/*.cpp' 'python/src/*.h' 'python/src/*.cpp' 'tests/cpp/*.cpp' 'tests/fuzz/*.cpp' 'examples/cpp/*.cpp')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror $files
  echo "clang-format: $(echo $files | wc -w) files clean"
else
  clang-format -i $files
fi
