"""Stochastic weight averaging and EMA helpers with torch.optim.swa_utils' API."""
import itertools
import math
from copy import deepcopy

import ember
from ember.nn import Module
from ember.optim.lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ema += (1 - decay) * (current - ema)."""

    @ember.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for e, c in zip(ema_param_list, current_param_list):
            if e.is_floating_point() or e.is_complex():
                e.lerp_(c, 1 - decay)
            else:
                e.copy_(e * decay + c * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors."""

    @ember.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = float(num_averaged)
        for a, c in zip(averaged_param_list, current_param_list):
            if a.is_floating_point() or a.is_complex():
                a.lerp_(c, 1 / (n + 1))
            else:
                a.copy_(a + (c - a) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """avg_fn(ema, current, n) = decay * ema + (1 - decay) * current."""

    @ember.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """avg_fn(avg, current, n) = avg + (current - avg) / (n + 1)."""

    @ember.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """Keeps a running average (SWA by default, or avg_fn / multi_avg_fn such as EMA) of a model's weights."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Folds model's current weights into the average."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers()) if self.use_buffers
                       else model.parameters())
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        with ember.no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach()
                averaged.append(p_averaged.detach())
                current.append(p_model_)
                if first:
                    p_averaged.detach().copy_(p_model_)
            if not first:
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged, current, self.n_averaged)
                else:
                    avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for p_averaged, p_model in zip(averaged, current):
                        p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            if not self.use_buffers:
                # the buffers are not averaged: keep them equal to the model's
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged += 1


def _is_batchnorm(module):
    return all(hasattr(module, a) for a in ("running_mean", "running_var", "momentum", "reset_running_stats"))


@ember.no_grad()
def update_bn(loader, model, device=None):
    """Recomputes batch-norm running statistics with one pass over loader (cumulative averages)."""
    momenta = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for inp in loader:
        if isinstance(inp, (list, tuple)):
            inp = inp[0]
        if device is not None:
            inp = inp.to(device)
        model(inp)
    for bn_module, momentum in momenta.items():
        bn_module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs (cos or linear), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(swa_lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                             f"{len(swa_lrs)}, optimizer.param_groups has {len(optimizer.param_groups)}")
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t):
        if self._anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        self._warn_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha) for group in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(groups, prev_lrs)]
