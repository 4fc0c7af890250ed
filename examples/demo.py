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
