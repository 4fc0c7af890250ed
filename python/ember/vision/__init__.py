"""ember.vision: the parts of torchvision that training examples need (datasets, transforms)."""
from ember.vision import datasets, transforms  # noqa: F401
