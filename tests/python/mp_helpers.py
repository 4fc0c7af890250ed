"""Functions run in child processes by test_multiprocessing.py (importable under spawn)."""
import ember


def add_one(t, q, done):
    t.add_(1)
    q.put(t[1:3])
    done.wait()


def hogwild_worker(rank, w, x, y, steps, lr):
    # Each process runs SGD on the same shared weights: least squares y = x @ w_true.
    g = ember.Generator()
    g.manual_seed(rank)
    for _ in range(steps):
        idx = ember.randint(0, x.shape[0], (16,), generator=g)
        xb, yb = x[idx], y[idx]
        wl = w.detach().requires_grad_(True)
        loss = ((xb @ wl - yb) ** 2).mean()
        loss.backward()
        with ember.no_grad():
            w.sub_(lr * wl.grad)


def fail_on_one(rank):
    if rank == 1:
        raise ValueError("rank one failed on purpose")


def exit_on_zero(rank):
    if rank == 0:
        import os  # noqa: PLC0415
        os._exit(3)
