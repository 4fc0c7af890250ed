"""DataLoader throughput, ember vs torch side by side: batches/s over an in-memory dataset.

Two datasets: a TensorDataset (rows of a 60000x784 float tensor, labels) and a map-style dataset
whose __getitem__ returns a (1, 28, 28) image and an int, as torchvision's do; batch 128, with 0,
1 and 2 worker processes. Run: PYTHONPATH=python python3 benchmarks/dataloader.py
"""
import importlib
import json
import sys
import time


def run(libname, workers, kind, epochs=2):
    lib = importlib.import_module(libname)
    data = importlib.import_module(f"{libname}.utils.data")
    lib.manual_seed(0)
    x, y = lib.randn(60000, 784), lib.randint(0, 10, (60000,))
    if kind == "tensor":
        ds = data.TensorDataset(x, y)
    else:
        class Images(data.Dataset):
            def __len__(self):
                return 60000

            def __getitem__(self, i):
                return x[i].view(1, 28, 28), int(y[i])
        ds = Images()
    dl = data.DataLoader(ds, batch_size=128, shuffle=True, num_workers=workers, persistent_workers=workers > 0)
    n = 0
    for _ in dl:  # warm-up epoch (starts the workers)
        pass
    t = time.perf_counter()
    for _ in range(epochs):
        for b in dl:
            n += 1
    return n / (time.perf_counter() - t)


if __name__ == "__main__":
    if len(sys.argv) > 1:  # child: one measurement
        lib, workers, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        print(run(lib, workers, kind))
        sys.exit(0)
    import subprocess  # noqa: PLC0415
    for kind in ("tensor", "getitem"):
        for workers in (0, 1, 2):
            res = {}
            for lib in ("torch", "ember"):
                out = subprocess.run([sys.executable, __file__, lib, str(workers), kind], capture_output=True,
                                     text=True, check=True)
                res[lib] = float(out.stdout.strip().splitlines()[-1])
            print(json.dumps({"bench": f"dataloader.{kind}_w{workers}", "torch_batches_per_s": round(res["torch"], 1),
                              "ember_batches_per_s": round(res["ember"], 1),
                              "ember_over_torch": round(res["ember"] / res["torch"], 2)}), flush=True)
