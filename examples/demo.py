"""A tour of the tensor core: views, broadcasting, reductions, matmul, NumPy sharing."""
import ember as torch

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print("x =", x)
y = x[:, 1::2]
y += 100
print("after y += 100 on the view x[:, 1::2]:", x)
print("column sums:", x.sum(dim=0), "mean:", x.mean())
print("x @ ones(4, 2) =", x @ torch.ones(4, 2))
print("broadcast:", torch.ones(3, 1) * torch.arange(4))
try:
    import numpy as np
    a = np.ones(3, dtype=np.float32)
    t = torch.from_numpy(a)
    t += 1
    print("numpy array after t += 1 on from_numpy(a):", a)
except (ImportError, AttributeError):
    pass

# Autograd: fit y = 3x - 2 with tensor ops and a manual SGD step under no_grad.
torch.manual_seed(0)
x = torch.randn(256, 1)
y = 3 * x - 2 + 0.01 * torch.randn(256, 1)
w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(200):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad = None
        b.grad = None
print(f"fitted w={w.item():.3f} b={b.item():.3f} (true 3, -2), loss={loss.item():.5f}")
