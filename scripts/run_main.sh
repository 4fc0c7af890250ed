#!/usr/bin/env bash
# The main job. Until the Fashion-MNIST trainer exists it runs the tensor-core demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHONPATH=python ${PYTHON:-python3} examples/demo.py
