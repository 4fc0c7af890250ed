"""ember.vision: IDX/CIFAR datasets read from files the tests write, and the transforms."""
import gzip
import pickle

import numpy as np
import pytest

import ember
from ember.vision import datasets, transforms as T
from ember.vision.transforms import v2


def _write_idx(path, arr, gz):
    codes = {np.uint8: 0x08, np.int32: 0x0C, np.float32: 0x0D}
    header = bytes([0, 0, codes[arr.dtype.type], arr.ndim]) + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    data = header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST])
def test_idx_datasets_read_local_files(tmp_path, gz, cls):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (7, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 7).astype(np.uint8)
    raw = tmp_path / cls.__name__ / "raw"
    raw.mkdir(parents=True)
    sfx = ".gz" if gz else ""
    _write_idx(str(raw / f"t10k-images-idx3-ubyte{sfx}"), imgs, gz)
    _write_idx(str(raw / f"t10k-labels-idx1-ubyte{sfx}"), labels, gz)
    ds = cls(str(tmp_path), train=False, transform=T.ToTensor())
    assert len(ds) == 7
    x, y = ds[3]
    assert tuple(x.shape) == (1, 28, 28) and x.dtype == ember.float32 and y == int(labels[3])
    np.testing.assert_allclose(x.numpy()[0], imgs[3] / 255.0, rtol=1e-6)
    if cls is datasets.MNIST:  # (FashionMNIST falls back to Debian's dataset-fashion-mnist files)
        with pytest.raises(RuntimeError, match="cannot download"):
            cls(str(tmp_path), train=True)


def test_read_idx_rejects_bad_files(tmp_path):
    p = tmp_path / "bad"
    p.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(RuntimeError, match="magic"):
        datasets.read_idx(str(p))
    _write_idx(str(tmp_path / "f"), np.arange(6, dtype=np.float32).reshape(2, 3), False)
    np.testing.assert_array_equal(datasets.read_idx(str(tmp_path / "f")), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_cifar10_reads_pickle_batches(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, (4, 3072), dtype=np.uint8)
    with open(folder / "test_batch", "wb") as f:
        pickle.dump({"data": data, "labels": [1, 2, 3, 4]}, f)
    ds = datasets.CIFAR10(str(tmp_path), train=False)
    img, label = ds[2]
    assert tuple(img.shape) == (32, 32, 3) and label == 3
    np.testing.assert_array_equal(img.numpy(), data[2].reshape(3, 32, 32).transpose(1, 2, 0))
    assert tuple(T.ToTensor()(img).shape) == (3, 32, 32)


def test_to_tensor_normalize_match_numpy():
    a = np.random.default_rng(2).integers(0, 256, (5, 6, 3), dtype=np.uint8)
    t = T.ToTensor()(a)
    np.testing.assert_allclose(t.numpy(), a.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    n = T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))(t)
    ref = (a.transpose(2, 0, 1) / 255.0 - np.array([0.5, 0.4, 0.3])[:, None, None]) / np.array([0.2, 0.3, 0.4])[:, None, None]
    np.testing.assert_allclose(n.numpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        T.Normalize((0.5,), (0.5,))(ember.zeros(1, 2, 2, dtype=ember.uint8))
    with pytest.raises(ValueError):
        T.Normalize((0.5,), (0.0,))(ember.zeros(1, 2, 2))
    with pytest.raises(TypeError):
        T.ToTensor()("not an image")


def test_random_crop_flip_rotation():
    img = ember.arange(16, dtype=ember.float32).reshape(1, 4, 4)
    ember.manual_seed(0)
    for _ in range(10):
        c = T.RandomCrop(4, padding=1)(img)
        assert tuple(c.shape) == (1, 4, 4)
        padded = np.pad(img.numpy(), ((0, 0), (1, 1), (1, 1)))
        assert any(np.array_equal(c.numpy(), padded[:, i:i + 4, j:j + 4]) for i in range(3) for j in range(3))
    assert np.array_equal(T.RandomHorizontalFlip(p=1.0)(img).numpy(), img.numpy()[..., ::-1])
    assert np.array_equal(T.RandomHorizontalFlip(p=0.0)(img).numpy(), img.numpy())
    assert np.array_equal(T.RandomVerticalFlip(p=1.0)(img).numpy(), img.numpy()[..., ::-1, :])
    r = T.RandomRotation((90, 90))(img)
    assert np.array_equal(r.numpy()[0], np.rot90(img.numpy()[0]))
    assert np.array_equal(T.CenterCrop(2)(img).numpy(), img.numpy()[:, 1:3, 1:3])
    with pytest.raises(ValueError):
        T.RandomCrop(5)(img)
    assert tuple(T.RandomCrop(5, pad_if_needed=True)(img).shape) == (1, 5, 5)


def test_compose_lambda_and_v2():
    f = T.Compose([T.Lambda(lambda x: x + 1), T.Lambda(lambda x: x * 2)])
    assert f(ember.tensor([1.0])).item() == 4.0
    assert "Compose(" in repr(f)
    img = ember.full((2, 2, 3), 255, dtype=ember.uint8)
    chw = v2.ToImage()(img)
    assert tuple(chw.shape) == (3, 2, 2) and chw.dtype == ember.uint8
    assert v2.ToDtype(ember.float32, scale=True)(chw).max().item() == 1.0
    with pytest.raises(TypeError):
        T.Lambda(3)
