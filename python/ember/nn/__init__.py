"""Neural-network building blocks. For now only the functional activations (ember.nn.functional)."""
from ember.nn import functional  # noqa: F401
