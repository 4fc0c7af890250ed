"""ember.optim: optimizers with torch.optim's API; each group's update is one fused C++ call."""
from ember.optim.optimizer import Optimizer  # noqa: F401
from ember.optim._fused import (  # noqa: F401
    SGD, Adam, AdamW, Adamax, NAdam, RAdam, Adagrad, RMSprop, Adadelta, ASGD, Rprop,
)
from ember.optim import optimizer  # noqa: F401
from ember.optim import lr_scheduler  # noqa: F401,E402
from ember.optim.lbfgs import LBFGS  # noqa: F401,E402
from ember.optim import swa_utils  # noqa: F401,E402
