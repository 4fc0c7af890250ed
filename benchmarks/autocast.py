"""Training step time with and without CPU bfloat16 autocast, ember against torch.

Models: the main job's CNN (examples/fashion_mnist.py's Net, batch 128, AdamW) and an MLP
(1024-wide, 3 layers, batch 256). Usage (one library per process; alternate runs):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=python python3 benchmarks/autocast.py ember
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 benchmarks/autocast.py torch
"""
import os
import sys
import time

lib = sys.argv[1] if len(sys.argv) > 1 else "ember"
torch = __import__(lib)
nn = torch.nn
torch.set_num_threads(int(os.environ.get("THREADS", "2")))


class Net(nn.Module):
    def __init__(self, width=32):
        super().__init__()

        def conv(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*conv(1, width), nn.MaxPool2d(2), *conv(width, 2 * width), nn.MaxPool2d(2),
                                      *conv(2 * width, 2 * width))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * width * 7 * 7, 128), nn.ReLU(inplace=True),
                                        nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def step_time(model, x, y, amp):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    for _ in range(3):
        step()
    ts = []
    for _ in range(10):
        t0 = time.perf_counter()
        step()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2] * 1e3


torch.manual_seed(0)
cases = [("cnn", Net(), torch.randn(128, 1, 28, 28), torch.randint(0, 10, (128,))),
         ("mlp", nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)),
          torch.randn(256, 1024), torch.randint(0, 10, (256,)))]
for name, model, x, y in cases:
    f32, bf16 = step_time(model, x, y, False), step_time(model, x, y, True)
    print(f"{lib:6s} {name}: float32 step {f32:7.2f} ms   bf16 autocast step {bf16:7.2f} ms", flush=True)
