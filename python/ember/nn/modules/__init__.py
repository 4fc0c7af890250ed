"""nn module classes, one file per family (as torch.nn.modules)."""
from ember.nn.modules.module import Module  # noqa: F401
from ember.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from ember.nn.modules.linear import Identity, Linear, Bilinear, LazyLinear  # noqa: F401
from ember.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from ember.nn.modules.lazy import LazyModuleMixin  # noqa: F401
