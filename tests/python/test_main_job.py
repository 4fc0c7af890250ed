"""The main job (examples/fashion_mnist.py) end to end on a tiny data set the test writes."""
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "fashion_mnist.py")


def _write_idx(path, arr):
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + arr.astype(np.uint8).tobytes())


def _run(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, env=env, timeout=600,
                          cwd=str(tmp_path))


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    d = tmp_path_factory.mktemp("fmnist")
    rng = np.random.default_rng(0)
    for split, n in (("train", 320), ("t10k", 100)):
        labels = rng.integers(0, 10, n)
        imgs = rng.integers(0, 60, (n, 28, 28))
        for i, c in enumerate(labels):  # a class-dependent bright band, so there is something to learn
            imgs[i, 2 * c:2 * c + 3, :] = 250
        _write_idx(str(d / f"{split}-images-idx3-ubyte.gz"), imgs)
        _write_idx(str(d / f"{split}-labels-idx1-ubyte.gz"), labels)
    return d


def test_help_documents_every_option(tmp_path):
    r = _run(["--help"], tmp_path)
    assert r.returncode == 0
    for opt in ("--data", "--epochs", "--batch-size", "--optimizer", "--lr", "--workers", "--resume", "--out"):
        assert opt in r.stdout


def test_trains_checkpoints_and_resumes(tiny_data, tmp_path):
    out = tmp_path / "run"
    common = ["--data", str(tiny_data), "--batch-size", "32", "--workers", "1", "--out", str(out), "--no-progress"]
    r = _run(common + ["--epochs", "1"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "epoch  1/1" in r.stdout and "test acc" in r.stdout and "model saved to" in r.stdout
    assert (out / "checkpoint.pt").exists() and (out / "model.pt").exists() and (out / "curves.png").exists()
    ckpt = ember.load(str(out / "checkpoint.pt"))
    assert ckpt["epoch"] == 1 and len(ckpt["history"]) == 1
    # resuming a finished run restores model, optimizer and schedule, and trains nothing more
    r2 = _run(common + ["--epochs", "1", "--resume"], tmp_path)
    assert r2.returncode == 0, r2.stderr
    assert "resumed from" in r2.stdout and "after epoch 1" in r2.stdout and "epoch  1/1" not in r2.stdout
    state = ember.load(str(out / "model.pt"))
    assert any(k.endswith("running_mean") for k in state)


def test_missing_data_says_where_to_put_it(tmp_path):
    r = _run(["--data", str(tmp_path / "nowhere"), "--epochs", "1", "--limit-train", "10"], tmp_path)
    if os.path.isdir("/usr/share/datasets/fashion-mnist"):
        pytest.skip("Debian's Fashion-MNIST is installed: the trainer falls back to it")
    assert r.returncode != 0 and "not found" in r.stderr


def test_profile_flag_prints_the_table_and_saves_a_trace(tiny_data, tmp_path):
    out = tmp_path / "prof"
    r = _run(["--data", str(tiny_data), "--batch-size", "32", "--workers", "0", "--out", str(out), "--profile"],
             tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Self CPU %" in r.stdout and "Self CPU time total" in r.stdout
    for name in ("aten::conv2d", "ConvolutionBackward0", "Optimizer.step#AdamW.step", "train_step",
                 "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"):
        assert name in r.stdout or name[:48] in r.stdout, name
    assert "epoch" not in r.stdout  # profiles, then exits without training
    trace = json.loads((out / "profile_trace.json").read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"train_step", "forward", "backward", "aten::conv2d"} <= names


def test_tensorboard_flag_writes_scalars(tiny_data, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    tb = tmp_path / "tb"
    r = _run(["--data", str(tiny_data), "--batch-size", "32", "--workers", "0", "--out", str(tmp_path / "run"),
              "--no-progress", "--no-plot", "--epochs", "1", "--tensorboard", str(tb)], tmp_path)
    assert r.returncode == 0, r.stderr
    acc = EventAccumulator(str(tb), size_guidance={"scalars": 0})
    acc.Reload()
    steps = [e.step for e in acc.Scalars("train/loss")]
    assert steps == list(range(320 // 32))  # one per batch
    assert [e.step for e in acc.Scalars("epoch/test_acc")] == [1]
    assert 0 <= acc.Scalars("epoch/test_acc")[0].value <= 1
    assert len(acc.Scalars("train/lr")) == len(steps)


def test_distributed_data_parallel_run(tiny_data, tmp_path):
    # --distributed starts the launcher with 2 processes: DDP, each on half of every batch; rank 0 reports.
    out = tmp_path / "ddp"
    r = _run(["--data", str(tiny_data), "--batch-size", "32", "--workers", "0", "--out", str(out), "--no-progress",
              "--epochs", "1", "--no-plot", "--distributed", "--nproc", "2"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2 processes (DDP, 16 per process)" in r.stdout
    assert r.stdout.count("epoch  1/1") == 1 and "test acc" in r.stdout  # printed once, by rank 0
    state = ember.load(str(out / "model.pt"))  # the plain module's state: loads without DDP
    assert not any(k.startswith("module.") for k in state) and any(k.endswith("running_mean") for k in state)
    ckpt = ember.load(str(out / "checkpoint.pt"))
    assert ckpt["epoch"] == 1 and ckpt["history"][0]["test_acc"] > 0


def _example_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("fashion_mnist_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_image_batches_normalize_flip_and_shift_each_image():
    mod = _example_module()
    rng = np.random.default_rng(1)
    imgs = rng.integers(0, 256, (40, 6, 5)).astype(np.uint8)
    targets = ember.arange(40)
    normalize = lambda a: (a.astype(np.float32) - 255 * mod.MEAN) / (255 * mod.STD)  # noqa: E731
    plain = mod.ImageBatches(ember.from_numpy(imgs), targets)
    x, y = ember.utils.data.default_collate(plain.__getitems__([3, 0, 7]))
    assert x.shape == (3, 1, 6, 5) and y.tolist() == [3, 0, 7]
    np.testing.assert_allclose(x.numpy()[:, 0], normalize(imgs[[3, 0, 7]]), rtol=1e-6, atol=1e-6)
    # augmented: every image is its source, maybe mirrored, shifted by at most 2 pixels (zeros come in)
    ember.manual_seed(0)
    aug = mod.ImageBatches(ember.from_numpy(imgs), targets, augment=True, shift=2)
    batch = aug.__getitems__(list(range(40)))
    padded = np.pad(imgs, ((0, 0), (2, 2), (2, 2)))
    kinds = set()
    for i, (xi, yi) in enumerate(batch):
        assert int(yi) == i and xi.shape == (1, 6, 5)
        hits = [(f, dy, dx) for f in (0, 1) for dy in range(5) for dx in range(5)
                if np.allclose(xi.numpy()[0], normalize((padded[i, :, ::-1] if f else padded[i])[dy:dy + 6, dx:dx + 5]),
                               atol=1e-5)]
        assert hits, f"image {i} is not a flip/shift of its source"
        kinds.update(hits)
    assert {f for f, _, _ in kinds} == {0, 1} and len(kinds) > 10  # both flips and many shifts drawn
    # a single item and a DataLoader with workers give the same images as direct batches
    np.testing.assert_allclose(plain[5][0].numpy(), normalize(imgs[5])[None], rtol=1e-6, atol=1e-6)
    loader = ember.utils.data.DataLoader(plain, batch_size=8, num_workers=2)
    for i, (xb, yb) in enumerate(loader):
        np.testing.assert_allclose(xb.numpy()[:, 0], normalize(imgs[8 * i:8 * i + 8]), rtol=1e-6, atol=1e-6)
        assert yb.tolist() == list(range(8 * i, 8 * i + 8))
