"""ember.utils: helpers with PyTorch's layout (``ember.utils.dlpack``, ...)."""
