"""nn module classes, one file per family (as torch.nn.modules)."""
from ember.nn.modules.module import Module  # noqa: F401
from ember.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from ember.nn.modules.linear import Identity, Linear, Bilinear, LazyLinear  # noqa: F401
from ember.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from ember.nn.modules.lazy import LazyModuleMixin  # noqa: F401

# ---- normalization, dropout, embedding, losses (helper nnnorm) ----
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401,E402
from ember.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401,E402
from ember.nn.modules.normalization import LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm  # noqa: F401,E402
from ember.nn.modules.dropout import (  # noqa: F401,E402
    Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
)
from ember.nn.modules.sparse import Embedding, EmbeddingBag  # noqa: F401,E402
from ember.nn.modules.loss import *  # noqa: F401,F403,E402
# ---- end of normalization, dropout, embedding, losses ----
