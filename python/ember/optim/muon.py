"""Muon (Jordan et al., 2024) with torch.optim.Muon's interface: momentum (an exponential average of the
gradients, Nesterov's form by default) orthogonalized by a few Newton-Schulz iterations of the quintic
a X + b (X X^T) X + c (X X^T)^2 X on the matrix scaled to unit Frobenius norm, then applied with
decoupled weight decay and a learning rate adjusted to the matrix's shape. For the 2-D weights of
hidden layers only (biases, embeddings and heads go to AdamW). Runs as tensor operations: the
products dominate and are GEMMs already."""
import math

import ember
from ember.optim.optimizer import Optimizer

_ADJUST_LR = ("original", "match_rms_adamw")


def _check(ok, message):
    if not ok:
        raise ValueError(message)


def _orthogonalize(update, coefficients, eps, steps):
    """The Newton-Schulz iteration toward the nearest semi-orthogonal matrix (U V^T of update's SVD),
    on the wide orientation so X X^T is the smaller product. In the parameter's dtype: torch's runs in
    bfloat16, whose rounding moves its result by a few percent (two bfloat16 versions differ from each
    other more than either from the exact iteration)."""
    a, b, c = coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.t() if tall else update
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.t()
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.t() if tall else x


def _adjusted_lr(lr, shape, adjust_lr_fn):
    rows, cols = shape
    if adjust_lr_fn == "match_rms_adamw":  # Moonshot's: the update's RMS near AdamW's
        return 0.2 * math.sqrt(max(rows, cols)) * lr
    return math.sqrt(max(1.0, rows / cols)) * lr  # Keller Jordan's original


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, ember.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn is None or adjust_lr_fn in _ADJUST_LR,
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        """Performs a single optimization step (closure re-evaluates the model and returns the loss)."""
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()
        with ember.no_grad():
            for group in self.param_groups:
                lr = float(group["lr"])
                mu = group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad
                    if grad.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = ember.zeros_like(grad)
                    buf = state["momentum_buffer"]
                    buf.lerp_(grad, 1 - mu)
                    update = grad.lerp(buf, mu) if group["nesterov"] else buf
                    update = _orthogonalize(update, group["ns_coefficients"], group["eps"], group["ns_steps"])
                    p.mul_(1 - lr * group["weight_decay"])
                    p.add_(update, alpha=-_adjusted_lr(lr, p.shape, group["adjust_lr_fn"]))
        return loss
