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
from ember.nn import parallel  # noqa: F401
from ember.nn.parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel)
# The star import above also binds the submodule ember.nn.modules.utils as `utils`; `nn.utils` must be
# the ember.nn.utils package (clip_grad_norm_, rnn, ...), as torch.nn.utils is. import_module returns the
# package itself (a `from ember.nn import utils` would find the attribute already bound and keep it).
import importlib as _importlib  # noqa: E402

utils = _importlib.import_module("ember.nn.utils")
del _importlib


def __getattr__(name):  # ember.nn.attention on first use (import time), as torch.nn.attention
    if name == "attention":
        import importlib
        return importlib.import_module("ember.nn.attention")
    raise AttributeError(f"module 'ember.nn' has no attribute {name!r}")
