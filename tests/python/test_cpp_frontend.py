"""The C++ frontend (<torch/torch.h> on Ember) against the Python API and torch: a small CNN
trained a few steps from the same weights and data by tests/cpp/programs/frontend_steps.cpp,
by ember's Python API and by torch, with each optimizer; losses, parameters and BatchNorm
buffers must agree to float64 rounding.

Needs the CMake build (build/libember.a); skipped without it."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import torch

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
SOURCE = os.path.join(ROOT, "tests", "cpp", "programs", "frontend_steps.cpp")


def _cache_value(name):
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"{name}:[A-Z]+=(.*)", line.strip())
            if m:
                return m.group(1)
    return None


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    lib = os.path.join(BUILD, "libember.a")
    if not os.path.exists(lib) or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
        pytest.skip("needs the CMake build of libember (scripts/setup.sh)")
    out = str(tmp_path_factory.mktemp("cppfe") / "frontend_steps")
    cmd = ["g++", "-std=c++20", "-O1", "-fopenmp", f"-I{ROOT}/csrc/compat", f"-I{ROOT}/csrc", SOURCE, lib,
           _cache_value("OPENBLAS_LIBRARY"), _cache_value("DNNL_LIBRARY"), "-o", out]
    if shutil.which("ccache"):
        cmd.insert(0, "ccache")
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def _model(nn):
    m = nn.Sequential()
    m.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)  # a bias before BN has no gradient, only noise
    m.bn = nn.BatchNorm2d(4)
    m.fc = nn.Linear(36, 3)
    return m


def _run_python(lib, params, x, y, name):
    nn, F = lib.nn, lib.nn.functional
    model = _model(nn).double()
    with lib.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(lib.tensor(v))
    ps = list(model.parameters())
    opt = {
        "sgd": lambda: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
        "adam": lambda: lib.optim.Adam(ps, lr=0.01, amsgrad=True, weight_decay=1e-3),
        "adamw": lambda: lib.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
        "rmsprop": lambda: lib.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
        "adagrad": lambda: lib.optim.Adagrad(ps, lr=0.1, lr_decay=0.01),
    }[name]()
    xt, yt = lib.tensor(x), lib.tensor(y)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        h = F.max_pool2d(lib.relu(model.bn(model.conv(xt))), 2)
        loss = F.cross_entropy(model.fc(h.flatten(1)), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    values = [v for p in model.parameters() for v in p.detach().flatten().tolist()]
    values += model.bn.running_mean.tolist() + model.bn.running_var.tolist()
    return losses, values


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw", "rmsprop", "adagrad"])
def test_training_steps_match_python_api_and_torch(program, tmp_path, name):
    rng = np.random.default_rng(5)
    shapes = [(4, 1, 3, 3), (4,), (4,), (3, 36), (3,)]
    params = [rng.uniform(-0.5, 0.5, s) for s in shapes]
    x = rng.standard_normal((8, 1, 6, 6))
    y = rng.integers(0, 3, 8).astype(np.int64)
    np.concatenate([p.ravel() for p in params]).astype(np.float64).tofile(tmp_path / "params.bin")
    x.astype(np.float64).tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    out = subprocess.run([program, str(tmp_path), name], check=True, capture_output=True, text=True).stdout
    lines = [line.split() for line in out.splitlines()]
    cpp_losses = [float(v) for k, v in lines if k == "loss"]
    cpp_values = [float(v) for k, v in lines if k != "loss"]
    # Ember's Python API runs the same kernels in the same order: equal to the last bit or two.
    # torch sums in other orders: float64 rounding differences grow over the steps (~1e-10).
    for lib, rtol in ((ember, 1e-13), (torch, 1e-9)):
        losses, values = _run_python(lib, params, x, y, name)
        np.testing.assert_allclose(cpp_losses, losses, rtol=rtol, atol=0, err_msg=lib.__name__)
        np.testing.assert_allclose(cpp_values, values, rtol=rtol, atol=1e-14, err_msg=lib.__name__)
    assert cpp_losses[-1] < cpp_losses[0]
