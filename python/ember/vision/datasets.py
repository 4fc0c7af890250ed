"""Image datasets read from local files, with torchvision's class names and behaviour.

There is no network here: `download=True` explains where to put the files instead of fetching them.
"""
import gzip
import os
import pickle

import numpy as np

import ember
from ember.utils.data import Dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "read_idx"]

# Where Debian's dataset-fashion-mnist package installs the files.
_SYSTEM_DIRS = {"FashionMNIST": ["/usr/share/datasets/fashion-mnist"], "MNIST": ["/usr/share/datasets/mnist"]}


def read_idx(path):
    """Reads an IDX file (gzipped or not) into a NumPy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise RuntimeError(f"{path} is not an IDX file (bad magic number)")
    type_code, ndim = data[2], data[3]
    dtypes = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if type_code not in dtypes:
        raise RuntimeError(f"{path}: unknown IDX element type 0x{type_code:02x}")
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    arr = np.frombuffer(data, dtype=dtypes[type_code], offset=4 + 4 * ndim)
    if arr.size != int(np.prod(shape)):
        raise RuntimeError(f"{path}: expected {int(np.prod(shape))} elements for shape {shape}, found {arr.size}")
    return arr.reshape(shape).astype(arr.dtype.newbyteorder("="))


class MNIST(Dataset):
    """MNIST from the IDX files in `root` (or `root/<ClassName>/raw`); samples are (PIL-free image, label).

    Images are uint8 tensors of shape (28, 28) before `transform` (ToTensor makes them (1, 28, 28) floats).
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        images, labels = (self._find(name, download) for name in self._files[bool(train)])
        self.data = ember.from_numpy(read_idx(images).copy())
        self.targets = ember.from_numpy(read_idx(labels).astype(np.int64))
        if len(self.data) != len(self.targets):
            raise RuntimeError(f"{images} has {len(self.data)} images but {labels} has {len(self.targets)} labels")

    def _find(self, name, download):
        name_cls = type(self).__name__
        dirs = []
        if self.root is not None:
            dirs += [self.root, os.path.join(self.root, name_cls, "raw"), os.path.join(self.root, name_cls)]
        dirs += _SYSTEM_DIRS.get(name_cls, [])
        for d in dirs:
            for candidate in (name, name + ".gz"):
                path = os.path.join(d, candidate)
                if os.path.isfile(path):
                    return path
        hint = (f"{name_cls}: {name}[.gz] not found in {', '.join(dirs)}. This machine cannot download data sets: "
                f"put the IDX files in {os.path.join(str(self.root), name_cls, 'raw')}")
        if name_cls == "FashionMNIST":
            hint += " (on Debian: `apt-get install dataset-fashion-mnist` installs them in /usr/share/datasets)"
        raise RuntimeError(hint + ("" if not download else " (download=True cannot fetch them here)"))

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}", f"    Split: {'Train' if self.train else 'Test'}"]
        if self.transform is not None:
            lines.append("    StandardTransform\n    Transform: " + repr(self.transform).replace("\n", "\n    "))
        return "\n".join(lines)


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando's clothing images, MNIST's format)."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class CIFAR10(Dataset):
    """CIFAR-10 from its Python pickle batches (`root/cifar-10-batches-py`); images are (32, 32, 3) uint8."""

    base_folder = "cifar-10-batches-py"
    train_list = [f"data_batch_{i}" for i in range(1, 6)]
    test_list = ["test_batch"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        folder = os.path.join(self.root, self.base_folder)
        data, targets = [], []
        for name in (self.train_list if train else self.test_list):
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                raise RuntimeError(f"CIFAR10: {path} not found. This machine cannot download data sets: extract "
                                   f"cifar-10-python.tar.gz into {self.root}")
            with open(path, "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            data.append(np.asarray(entry["data"], dtype=np.uint8))
            targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self.targets = targets
        meta = os.path.join(folder, "batches.meta")
        if os.path.isfile(meta):
            with open(meta, "rb") as f:
                self.classes = pickle.load(f, encoding="latin1")["label_names"]
        else:
            self.classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

    def __getitem__(self, index):
        img, target = ember.from_numpy(np.ascontiguousarray(self.data[index])), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)
