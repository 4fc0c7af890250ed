"""nn module classes, one file per family (as torch.nn.modules)."""
from ember.nn.modules.module import Module  # noqa: F401
from ember.nn.modules.container import (  # noqa: F401
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from ember.nn.modules.linear import Identity, Linear, Bilinear, LazyLinear  # noqa: F401
from ember.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from ember.nn.modules.lazy import LazyModuleMixin  # noqa: F401
from ember.nn.modules.activation import (  # noqa: F401
    Threshold, ReLU, RReLU, Hardtanh, ReLU6, Sigmoid, Hardsigmoid, Tanh, SiLU, Mish, Hardswish, ELU, CELU, SELU, GLU,
    GELU, Hardshrink, LeakyReLU, LogSigmoid, Softplus, Softshrink, PReLU, Softsign, Tanhshrink, Softmin, Softmax,
    Softmax2d, LogSoftmax, MultiheadAttention,
)
from ember.nn.modules.padding import (  # noqa: F401
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from ember.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from ember.nn.modules.channelshuffle import ChannelShuffle  # noqa: F401
from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
# ---- convolution, pooling, fold (nnconv) ----
from ember.nn.modules.conv import (  # noqa: F401
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d, LazyConv3d,
    LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
)
from ember.nn.modules.pooling import (  # noqa: F401
    MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, AvgPool1d, AvgPool2d, AvgPool3d,
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d, FractionalMaxPool3d,
)
from ember.nn.modules.fold import Fold, Unfold  # noqa: F401
from ember.nn.modules.upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from ember.nn.modules.rnn import (  # noqa: F401
    RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell,
)

# ---- normalization, dropout, embedding, losses (helper nnnorm) ----
from ember.nn.modules.batchnorm import (  # noqa: F401,E402
    BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, SyncBatchNorm,
)
from ember.nn.modules.instancenorm import (  # noqa: F401,E402
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from ember.nn.modules.normalization import LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm  # noqa: F401,E402
from ember.nn.modules.dropout import (  # noqa: F401,E402
    Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
)
from ember.nn.modules.sparse import Embedding, EmbeddingBag  # noqa: F401,E402
from ember.nn.modules.loss import *  # noqa: F401,F403,E402
from ember.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401,E402
# ---- end of normalization, dropout, embedding, losses ----

# ---- attention: Transformer family (MultiheadAttention is in activation.py, as torch) ----
from ember.nn.modules.transformer import (  # noqa: F401,E402
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer, TransformerDecoderLayer,
)
