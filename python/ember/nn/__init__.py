"""ember.nn: modules, parameters, initialisation and functional ops, with torch.nn's layout."""
from ember.nn.parameter import (  # noqa: F401
    Parameter, Buffer, UninitializedParameter, UninitializedBuffer,
)
from ember.nn.modules import *  # noqa: F401,F403
from ember.nn.modules import (  # noqa: F401
    Module, Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
    Identity, Linear, Bilinear, LazyLinear, Flatten, Unflatten,
)
from ember.nn import functional  # noqa: F401
from ember.nn import init  # noqa: F401
from ember.nn import modules  # noqa: F401
from ember.nn import parameter  # noqa: F401
