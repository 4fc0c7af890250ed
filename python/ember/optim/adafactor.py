"""Adafactor (Shazeer & Stern, 2018) with torch.optim.Adafactor's interface and variant: lr caps the
relative step size and scales decoupled weight decay, epsilon1 guards the variance estimate and
the update rather than the squared gradient, and the factored second moment keeps means (row_var
over the last dimension, col_var over the one before) instead of sums. Parameters of two or more
dimensions store a row and a column factor (sublinear memory); vectors and scalars a full
variance. Runs as tensor operations per parameter: Adafactor is chosen for memory, not speed."""
import math

import ember
from ember.optim.optimizer import Optimizer


def _check(ok, message):
    if not ok:
        raise ValueError(message)


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, ember.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step (closure re-evaluates the model and returns the loss)."""
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()
        with ember.no_grad():
            for group in self.param_groups:
                lr = float(group["lr"])
                eps1, eps2 = group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    self._update(p, p.grad, group, lr, eps1, eps2)
        return loss

    def _update(self, p, grad, group, lr, eps1, eps2):
        state = self.state[p]
        if not state:
            state["step"] = ember.tensor(0.0, dtype=ember.float32)
            if p.dim() > 1:
                state["row_var"] = ember.zeros(p.shape[:-1] + (1,), dtype=p.dtype)
                state["col_var"] = ember.zeros(p.shape[:-2] + (1, p.shape[-1]), dtype=p.dtype)
            else:
                state["variance"] = ember.zeros_like(p)
        if eps1 is None:
            eps1 = ember.finfo(p.dtype).eps
        g = -grad if group["maximize"] else grad
        state["step"] += 1
        t = float(state["step"])
        one_minus_beta2 = t ** group["beta2_decay"]  # 1 - beta2_t, beta2_t = 1 - t^decay
        rho = min(lr, 1.0 / math.sqrt(t))
        numel = p.numel()  # an empty parameter divides by zero (ZeroDivisionError, as torch's)
        alpha = max(eps2, float(p.norm()) / math.sqrt(numel)) * rho
        if group["weight_decay"] != 0:
            p.mul_(1.0 - lr * group["weight_decay"])
        g2 = g * g
        if p.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(g2.mean(-1, keepdim=True), one_minus_beta2)
            col_var.lerp_(g2.mean(-2, keepdim=True), one_minus_beta2)
            var_est = row_var @ col_var
            var_est.div_(row_var.mean(-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(g2, one_minus_beta2)
            var_est = variance.clone()
        update = var_est.clamp_(min=eps1 * eps1).rsqrt_().mul_(g)
        denom = max(1.0, float(update.norm()) / math.sqrt(numel) / group["d"])
        p.add_(update, alpha=-alpha / denom)
