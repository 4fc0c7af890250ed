"""Touches the binding module broadly, leaves objects alive, and exits: the process must exit 0.

Run by tests/python/test_exit.py (this Python) and scripts/other_pythons.sh (ember._C built for
each other installed Python): static C++ objects that still hold Python references are destroyed
after the interpreter is, which crashes Python 3.12+ at exit (Note [Process-lifetime Python
objects], python/src/common.h). Needs neither torch nor numpy.
"""
import io
import sys

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset

ember.manual_seed(0)
g = ember.Generator().manual_seed(1)
x = ember.randn(8, 4, generator=g)
print(x.shape, x.dtype, ember.contiguous_format, x.sum(), x.max(dim=1).values.shape, x.amax(1).shape)
print(ember.float16, ember.bfloat16, ember.int64, ember.bool, ember.default_generator)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
opt = ember.optim.Adam(model.parameters(), lr=1e-2)
loader = DataLoader(TensorDataset(x, ember.randint(0, 3, (8,))), batch_size=4, shuffle=True)
for xb, yb in loader:
    loss = F.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()


class Square(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return 2 * a * grad


w = ember.ones(3, requires_grad=True)
w.register_hook(lambda grad: grad * 2)
y = Square.apply(w).sum()
y.backward(create_graph=True)
kept_graph = Square.apply(w * 3)  # a graph with a Python node, alive at exit
buf = io.BytesIO()
ember.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
buf.seek(0)
state = ember.load(buf)
with ember.autograd.profiler.profile() as prof:
    (x @ x.t()).relu().sum()
print(len(prof.key_averages()) > 0, w.grad, sorted(state))
sys.stdout.flush()
print("exit check ok")
