"""DataLoader throughput over an in-memory map-style dataset: batches/s with 0, 1 and 2 workers.

Usage: PYTHONPATH=python python3 benchmarks/dataloader.py ember   (or torch)
"""
import sys, time
lib = __import__(sys.argv[1])
from importlib import import_module
data = import_module(sys.argv[1] + ".utils.data")
class DS(data.Dataset):  # an in-memory map-style dataset returning one sample per index
    def __init__(self):
        self.x = lib.randn(20000, 1, 28, 28); self.y = lib.randint(0, 10, (20000,))
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return self.x[i], self.y[i]
if __name__ == "__main__":
    ds = DS()
    for w in (0, 1, 2):
        dl = data.DataLoader(ds, batch_size=128, shuffle=True, num_workers=w)
        n = 0; it = iter(dl); next(it); t0 = time.perf_counter()
        for b in it: n += 1
        print(sys.argv[1], f"workers={w}", "%.0f batches/s" % (n / (time.perf_counter() - t0)))
