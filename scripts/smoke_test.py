"""Smoke test of an installed ember: import, arithmetic, a matmul, reductions, autograd, FFTs, printing,
save/load (the C++ archive and its CRC-32 from the bundled libdeflate) and safetensors.

Run by scripts/wheel_test.sh in a fresh venv holding the repaired wheel, natively and under
qemu-user's emulated CPUs (so any instruction the CPU lacks is a SIGILL here). Checks against
closed forms and plain-Python arithmetic only (no torch, no numpy). `--expect-capability X`
also checks ember.backends.cpu.get_cpu_capability() == X.
"""
import argparse
import math
import sys

import ember as torch

parser = argparse.ArgumentParser()
parser.add_argument("--expect-capability")
args = parser.parse_args()

cap = torch.backends.cpu.get_cpu_capability()
print("ember", torch.__version__, "from", torch.__file__, "kernels:", cap)
if args.expect_capability:
    assert cap == args.expect_capability, f"capability {cap}, expected {args.expect_capability}"


def close(a, b, tol=1e-5):
    return abs(a - b) <= tol * max(1.0, abs(b))


# Elementwise arithmetic (float, int, bool), broadcasting, unary math (1000 elements: the vector loops).
n = 1000
x = torch.arange(n, dtype=torch.float32) / 100
y = x * 2 + 1
assert all(close(v, i / 100 * 2 + 1) for i, v in enumerate(y.tolist()))
assert all(close(v, math.exp(i / 100 - 5)) for i, v in enumerate((x - 5).exp().tolist()))
assert all(close(v, math.tanh(i / 100 - 5), 1e-5) for i, v in enumerate((x - 5).tanh().tolist()))
assert all(close(v, max(u - 5, 0.0)) for u, v in zip(x.tolist(), torch.relu(x - 5).tolist()))
ints = torch.arange(n, dtype=torch.int64)
assert (ints * 3 - 7).tolist() == [i * 3 - 7 for i in range(n)]
assert (ints % 7 == 0).sum().item() == len([i for i in range(n) if i % 7 == 0])
row = torch.ones(3, 1) + torch.arange(4, dtype=torch.float32)
assert row.tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
assert torch.maximum(x, torch.tensor(3.0)).max().item() == x.max().item()

# Matmul (OpenBLAS) against the plain-Python product.
a = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 10
b = torch.arange(20, dtype=torch.float32).reshape(4, 5) / 10
al, bl = a.tolist(), b.tolist()
want = [[sum(al[i][k] * bl[k][j] for k in range(4)) for j in range(5)] for i in range(3)]
got = (a @ b).tolist()
assert all(close(got[i][j], want[i][j]) for i in range(3) for j in range(5)), got
big = torch.ones(128, 64) @ torch.ones(64, 32)
assert big.min().item() == 64.0 and big.max().item() == 64.0

# Reductions, softmax, masked selection.
assert close(x.sum().item(), sum(i / 100 for i in range(n)), 1e-6)
assert close(x.mean().item(), sum(i / 100 for i in range(n)) / n, 1e-6)
assert all(close(v, sum(al[i][j] for i in range(3))) for j, v in enumerate(a.sum(dim=0).tolist()))
s = torch.softmax(a, dim=1)
assert all(close(v, 1.0) for v in s.sum(dim=1).tolist())
assert x[x > 5].tolist() == [v for v in x.tolist() if v > 5]
assert ints[ints % 3 == 1].tolist() == [i for i in range(n) if i % 3 == 1]

# Random numbers (Philox) and autograd.
torch.manual_seed(0)
r = torch.randn(10000)
assert abs(r.mean().item()) < 0.05 and abs(r.std().item() - 1) < 0.05
w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
loss = (w * w).sum() + torch.sigmoid(w).sum()
loss.backward()
sig = [1 / (1 + math.exp(-v)) for v in (1.0, -2.0, 3.0)]
assert all(close(g, 2 * v + s_ * (1 - s_)) for g, v, s_ in zip(w.grad.tolist(), (1.0, -2.0, 3.0), sig))
weight = torch.full((2, 4), 0.5).requires_grad_()
out = torch.relu(torch.ones(3, 4) @ weight.t()).sum()
out.backward()
assert out.item() == 12.0 and weight.grad.tolist() == [[3.0] * 4] * 2

# FFT (FFTW, bundled by auditwheel; its SIMD codelets are chosen from the CPU at run time): a
# cosine's spectrum, a round trip over a prime length, complex64 against the plain-Python DFT.
m = 64
wave = torch.cos(torch.arange(m, dtype=torch.float64) * (2 * math.pi * 5 / m))
mag = torch.fft.rfft(wave).abs().tolist()
assert close(mag[5], m / 2, 1e-9) and all(abs(v) < 1e-9 for i, v in enumerate(mag) if i != 5), mag
xs = torch.arange(1009, dtype=torch.float32) / 1009
back = torch.fft.irfft(torch.fft.rfft(xs), n=1009)
assert all(close(u, v, 1e-4) for u, v in zip(back.tolist(), xs.tolist()))
zs = torch.complex(torch.arange(256, dtype=torch.float32) / 256, torch.ones(256))
zl = zs.tolist()
spec = torch.fft.fft(zs).tolist()
for k in (0, 1, 77, 255):
    want = sum(zl[j] * complex(math.cos(2 * math.pi * j * k / 256), -math.sin(2 * math.pi * j * k / 256))
               for j in range(256))
    assert abs(spec[k] - want) < 1e-3 * max(1.0, abs(want)), (k, spec[k], want)
# Checkpoints: save/load through the C++ archive (libdeflate's CRC-32, chosen by CPU at run time).
import io  # noqa: E402
import tempfile  # noqa: E402

buf = io.BytesIO()
torch.save({"w": x, "ints": ints[::3], "step": 7}, buf)
buf.seek(0)
back = torch.load(buf)
assert back["w"].tolist() == x.tolist() and back["ints"].tolist() == ints[::3].tolist() and back["step"] == 7
with tempfile.TemporaryDirectory() as d:
    torch.save({"w": x}, d + "/c.pt")
    assert torch.load(d + "/c.pt", mmap=True)["w"].tolist() == x.tolist()
    from ember.utils import safetensors  # noqa: E402
    safetensors.save_file({"w": x}, d + "/c.safetensors")
    assert safetensors.load_file(d + "/c.safetensors")["w"].tolist() == x.tolist()

# Printing.
text = str(torch.tensor([[1.5, -2.0], [0.25, 3.0]]))
assert text.startswith("tensor([[") and "1.5000" in text, text
print(a)
print("smoke test passed")
sys.exit(0)
