"""GradScaler, as torch.amp.GradScaler: loss scaling for float16 training.

scale(loss) multiplies by the current scale; step(optimizer) unscales the gradients (once per
optimizer and iteration), skips the step when any is inf/NaN, and update() halves the scale after
an overflow or doubles it after growth_interval clean steps.
"""
import warnings


class GradScaler:
    def __init__(self, device="cpu", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if device not in ("cpu", "cuda"):
            raise RuntimeError(f"GradScaler: unsupported device '{device}'")
        if device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            enabled = False
        self._device = device
        self._enabled = enabled
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"unscaled": bool, "found_inf": bool}

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def scale(self, outputs):
        """outputs (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        import ember  # noqa: PLC0415
        if isinstance(outputs, ember.Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "found_inf": False})

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale in place; records whether any is inf/NaN."""
        if not self._enabled:
            return
        import ember  # noqa: PLC0415
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        inv = 1.0 / self._scale
        found = False
        with ember.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not bool(ember.isfinite(p.grad).all()):
                        found = True
        state["unscaled"], state["found_inf"] = True, found

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step() unless the unscaled gradients hold inf/NaN; returns its result or None."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if not state["unscaled"]:
            self.unscale_(optimizer)
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Adjusts the scale: backoff after an inf/NaN this iteration, growth after enough clean steps."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        else:
            found_inf = any(s["found_inf"] for s in self._per_optimizer.values())
            if found_inf:
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
