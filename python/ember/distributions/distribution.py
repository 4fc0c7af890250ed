"""The Distribution base class (torch.distributions.Distribution)."""
import warnings

import ember
from ember.distributions import constraints
from ember.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class of probability distributions.

    A distribution has a ``batch_shape`` (independent, not necessarily identical distributions)
    and an ``event_shape`` (the shape of one sample of one of them). ``sample(sample_shape)``
    returns ``sample_shape + batch_shape + event_shape`` values; ``rsample`` does the same with
    gradients flowing to the parameters (the reparameterization trick) where ``has_rsample``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__  # argument validation is on by default, as torch's

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument validation on or off for distributions created without validate_args."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=ember.Size(), event_shape=ember.Size(), validate_args=None):
        self._batch_shape = ember.Size(batch_shape)
        self._event_shape = ember.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              f"`arg_constraints = {{}}` or initialize the distribution with `validate_args=False` "
                              f"to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # the other parametrization was given; skip the lazy one
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                        f"distribution {repr(self)} to satisfy the constraint {repr(constraint)}, but found invalid "
                        f"values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dimensions expanded to batch_shape (no parameter copies)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """Maps each parameter name to the Constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint describing the support of this distribution."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=ember.Size()):
        """A sample (or batch of samples of shape sample_shape), without gradients."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=ember.Size()):
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(ember.Size((n,)))

    def log_prob(self, value):
        """The log of the probability density/mass function at value."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at value."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at value."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """All values of a discrete distribution's support, along a new leading dimension."""
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=ember.Size()):
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        return ember.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          f"initialize the distribution with `validate_args=False` to turn off validation.")
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({repr(support)}) of the distribution {repr(self)}, but found invalid values:\n{value}")

    def _expand_params(self, cls, batch_shape, _instance, params, event_dims=0):
        """The common body of expand(): a new instance of cls whose tensor parameters `params`
        (those present on self) are expanded to batch_shape plus their last `event_dims` dims."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = ember.Size(batch_shape)
        for name in params:
            if name in self.__dict__:
                value = self.__dict__[name]
                tail = tuple(value.shape[value.dim() - event_dims:]) if event_dims else ()
                setattr(new, name, value.expand(batch_shape + tail))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      f"__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        def show(v):  # a 0-d tensor shows its value, as torch's f-string formatting of one does
            if v.numel() != 1:
                return str(v.size())
            return str(v.item()) if v.dim() == 0 else str(v)

        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(f"{p}: {show(self.__dict__[p])}" for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"
