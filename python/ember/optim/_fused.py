"""torch.optim's first-order algorithms on the fused C++ updates of csrc/ember/optim.

Each step() collects a group's parameters that have gradients and their state, then calls one
C++ function that updates the whole group (Note [Fused optimizer step]); the state tensors it
creates on the first step are stored back into ``self.state`` in torch's key order.
"""
import ember
from ember import _C
from ember.optim.optimizer import Optimizer

__all__ = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "RMSprop", "Adadelta", "ASGD", "Rprop"]


def _check_lr(lr):
    if isinstance(lr, ember.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check(cond, msg):
    if not cond:
        raise ValueError(msg)


def _check_betas(betas):
    for i, b in enumerate(betas):
        if isinstance(b, ember.Tensor) and b.numel() != 1:
            raise ValueError("Tensor betas[%d] must be 1-element" % i)
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


class _FusedOptimizer(Optimizer):
    _kernel = None      # name of the ember._C._optim function
    _args = ()          # state keys in the kernel's argument order
    _order = ()         # state keys in torch's insertion order
    _name = ""

    def __init__(self, params, defaults):
        if defaults.get("differentiable"):
            raise NotImplementedError(f"{type(self).__name__}: differentiable=True is not supported by ember "
                                      "(the update runs in one fused C++ kernel outside autograd)")
        fused, foreach = defaults.get("fused"), defaults.get("foreach")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        lr = defaults.get("lr")
        if isinstance(lr, ember.Tensor) and foreach and not defaults.get("capturable") and not fused:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in self.defaults.items():
                group.setdefault(k, v)

    def step(self, closure=None):
        """Performs a single optimization step (closure re-evaluates the model and returns the loss)."""
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()
        kernel = getattr(_C._optim, self._kernel)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads = self._grads_of(group, type(self).__name__)
                if not params:
                    continue
                state = self.state
                states = [state.get(p, {}) for p in params]  # .get: no empty entries (torch has none)
                lists = {k: [s.get(k) for s in states] for k in self._order}
                kernel(params, grads, *[lists[k] for k in self._args], group)
                for k in self._order:
                    for p, t in zip(params, lists[k]):
                        if t is not None:
                            state[p][k] = t
        return loss


class SGD(_FusedOptimizer):
    """Stochastic gradient descent with optional momentum, dampening, Nesterov momentum and weight decay."""
    _kernel, _args, _order = "sgd_step", ("momentum_buffer",), ("momentum_buffer",)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)


class Adam(_FusedOptimizer):
    """Adam (and AdamW with decoupled_weight_decay=True), with the AMSGrad variant."""
    _kernel = "adam_step"
    _args = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step")
    _order = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


class Adamax(_FusedOptimizer):
    """Adamax: Adam with the infinity norm."""
    _kernel, _args, _order = "adamax_step", ("exp_avg", "exp_inf", "step"), ("step", "exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)


class NAdam(_FusedOptimizer):
    """NAdam: Adam with Nesterov momentum (decoupled_weight_decay gives NAdamW)."""
    _kernel = "nadam_step"
    _args = ("exp_avg", "exp_avg_sq", "mu_product", "step")
    _order = ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)


class RAdam(_FusedOptimizer):
    """RAdam: Adam with variance rectification (decoupled_weight_decay gives RAdamW)."""
    _kernel, _args, _order = "radam_step", ("exp_avg", "exp_avg_sq", "step"), ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)


class Adagrad(_FusedOptimizer):
    """Adagrad; its state is created when the optimizer is (as torch's)."""
    _kernel, _args, _order = "adagrad_step", ("sum", "step"), ("step", "sum")

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = ember.tensor(0.0, dtype=ember.float32)
                init = group["initial_accumulator_value"]
                state["sum"] = ember.full_like(p, init)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()


class RMSprop(_FusedOptimizer):
    """RMSprop with optional momentum and the centered variant."""
    _kernel = "rmsprop_step"
    _args = ("square_avg", "momentum_buffer", "grad_avg", "step")
    _order = ("step", "square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)


class Adadelta(_FusedOptimizer):
    """Adadelta."""
    _kernel, _args, _order = "adadelta_step", ("square_avg", "acc_delta", "step"), ("step", "square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)


class ASGD(_FusedOptimizer):
    """Averaged stochastic gradient descent."""
    _kernel, _args, _order = "asgd_step", ("ax", "eta", "mu", "step"), ("step", "eta", "mu", "ax")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)


class Rprop(_FusedOptimizer):
    """Resilient backpropagation."""
    _kernel, _args, _order = "rprop_step", ("prev", "step_size", "step"), ("step", "prev", "step_size")

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)
