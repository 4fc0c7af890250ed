"""ember.optim: optimizers with torch.optim's API; each group's update is one fused C++ call."""
from ember.optim.optimizer import Optimizer  # noqa: F401
from ember.optim._fused import (  # noqa: F401
    SGD, Adam, AdamW, Adamax, NAdam, RAdam, Adagrad, RMSprop, Adadelta, ASGD, Rprop,
)
from ember.optim import optimizer  # noqa: F401
from ember.optim import lr_scheduler  # noqa: F401,E402
from ember.optim.lbfgs import LBFGS  # noqa: F401,E402
from ember.optim.adafactor import Adafactor  # noqa: F401,E402
from ember.optim.muon import Muon  # noqa: F401,E402
from ember.optim import swa_utils  # noqa: F401,E402


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam updates from sparse gradients, which ember does not have (its
    Embedding(sparse=True) raises NotImplementedError); use Adam."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        raise NotImplementedError("SparseAdam: ember has no sparse gradients (Embedding(sparse=True) is not "
                                  "supported); use ember.optim.Adam")
