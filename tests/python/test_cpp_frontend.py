"""The C++ frontend (<torch/torch.h> on Ember) against the Python API and torch:
- a small CNN trained a few steps from the same weights and data by
  tests/cpp/programs/frontend_steps.cpp, by ember's Python API and by torch, with each optimizer;
  losses, parameters and BatchNorm buffers must agree to float64 rounding;
- checkpoints both ways (tests/cpp/programs/frontend_checkpoint.cpp): torch::save files load in
  torch.load (weights_only) and ember.load, torch.save / ember.save state_dicts load in
  torch::load.

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


def _cache_value(name):
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"{name}:[A-Z]+=(.*)", line.strip())
            if m:
                return m.group(1)
    return None


def _compile(tmp_path_factory, name):
    lib = os.path.join(BUILD, "libember.a")
    frontend = os.path.join(BUILD, "libember_frontend.a")
    if not os.path.exists(frontend) or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
        pytest.skip("needs the CMake build of libember and libember_frontend (scripts/setup.sh)")
    out = str(tmp_path_factory.mktemp("cppfe") / name)
    libs = [_cache_value(v) for v in ("OPENBLAS_LIBRARY", "DNNL_LIBRARY", "FFTW3_LIBRARY", "FFTW3F_LIBRARY",
                                      "LIBDEFLATE_LIBRARY")]
    cmd = ["g++", "-std=c++20", "-O1", "-fopenmp", f"-I{ROOT}/csrc/compat", f"-I{ROOT}/csrc",
           os.path.join(ROOT, "tests", "cpp", "programs", name + ".cpp"), frontend, lib] + [x for x in libs if x] + \
          ["-lgloo", "-lpthread", "-o", out]
    if shutil.which("ccache"):
        cmd.insert(0, "ccache")
    subprocess.run(cmd, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return _compile(tmp_path_factory, "frontend_steps")


@pytest.fixture(scope="module")
def checkpoint_program(tmp_path_factory):
    return _compile(tmp_path_factory, "frontend_checkpoint")


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


def _ckpt_model(nn):
    m = nn.Sequential()
    m.conv = nn.Conv2d(1, 2, 3)
    m.bn = nn.BatchNorm2d(2)
    m.fc = nn.Linear(8, 3)
    return m


def test_cpp_checkpoints_load_in_python(checkpoint_program, tmp_path):
    subprocess.run([checkpoint_program, "save", str(tmp_path)], check=True, capture_output=True)
    ref = _ckpt_model(torch.nn)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.arange(p.numel(), dtype=torch.float32).view_as(p) / 10)
    for lib, kwargs in ((torch, {"weights_only": True}), (ember, {})):
        sd = lib.load(str(tmp_path / "model.pt"), **kwargs)
        assert list(sd.keys()) == list(ref.state_dict().keys())
        for k, v in ref.state_dict().items():
            got = sd[k]
            assert got.dtype == getattr(lib, str(v.dtype).split(".")[1]) and tuple(got.shape) == tuple(v.shape), k
            if k == "bn.running_mean":
                assert np.all(got.numpy() == 0.5)
            elif k == "bn.running_var":
                assert np.all(got.numpy() == 2.0)
            elif k == "bn.num_batches_tracked":
                assert int(got) == 7
            else:
                np.testing.assert_array_equal(got.numpy(), v.numpy())
        m = _ckpt_model(lib.nn)
        m.load_state_dict(sd)  # strict: every key and shape matches the Python module
        t = lib.load(str(tmp_path / "tensor.pt"), **kwargs)
        assert t.dtype == lib.float64 and tuple(t.shape) == (2, 3)
        np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
        lst = lib.load(str(tmp_path / "list.pt"), **kwargs)
        assert [x.dtype for x in lst] == [lib.int64, lib.bool] and lst[1].tolist() == [True, False]


@pytest.mark.parametrize("saver", ["torch", "ember"])
def test_python_state_dicts_load_in_cpp(checkpoint_program, tmp_path, saver):
    lib = torch if saver == "torch" else ember
    lib.manual_seed(3)
    m = _ckpt_model(lib.nn)
    with lib.no_grad():
        m.bn.running_mean.uniform_(-1, 1)
        m.bn.running_var.uniform_(1, 2)
        m.bn.num_batches_tracked.fill_(5)
    lib.save(m.state_dict(), str(tmp_path / "sd.pt"))
    out = subprocess.run([checkpoint_program, "load", str(tmp_path / "sd.pt")], check=True, capture_output=True,
                         text=True).stdout
    got = {}
    for line in out.splitlines():
        k, v = line.split()
        got.setdefault(k, []).append(float(v))
    assert set(got) == set(m.state_dict().keys())
    for k, v in m.state_dict().items():
        np.testing.assert_allclose(got[k], v.double().flatten().tolist(), rtol=1e-8, atol=0, err_msg=k)


def test_cpp_load_rejects_bad_checkpoints(checkpoint_program, tmp_path):
    # A state_dict that does not match the model, and a pickle that would run code.
    torch.save({"fc.weight": torch.zeros(3, 8)}, str(tmp_path / "partial.pt"))
    r = subprocess.run([checkpoint_program, "load", str(tmp_path / "partial.pt")], capture_output=True, text=True)
    assert r.returncode != 0 and "Missing key(s) in state_dict" in r.stderr and '"conv.weight"' in r.stderr

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    torch.save({"fc.weight": Evil()}, str(tmp_path / "evil.pt"))
    r = subprocess.run([checkpoint_program, "load", str(tmp_path / "evil.pt")], capture_output=True, text=True)
    assert r.returncode != 0 and "is not allowed" in r.stderr and "pwned" not in r.stdout
    (tmp_path / "junk.pt").write_bytes(b"PK\x03\x04 not a zip archive")
    r = subprocess.run([checkpoint_program, "load", str(tmp_path / "junk.pt")], capture_output=True, text=True)
    assert r.returncode == 1 and "not a zip archive" in r.stderr
