"""nn.DataParallel, as torch's: single-process replication over GPUs. ember has none, so, as
torch does on a machine without one, the wrapper runs its module as it is (``device_ids`` is
empty; state_dict keys keep torch's ``module.`` prefix) and the functional ``data_parallel``
raises."""
from ember.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """torch's functional form: it needs a GPU to scatter over and, as torch's without one, raises."""
    raise RuntimeError("device type could not be determined")
