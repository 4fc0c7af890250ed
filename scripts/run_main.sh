#!/usr/bin/env bash
# The main job: trains a CNN on Fashion-MNIST (examples/fashion_mnist.py; `--help` lists options).
# Extra arguments go to the trainer, e.g. `bash scripts/run_main.sh --epochs 2`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHONPATH=python exec ${PYTHON:-python3} examples/fashion_mnist.py "$@"
