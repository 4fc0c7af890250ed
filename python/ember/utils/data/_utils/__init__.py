"""Internals of the DataLoader: collation and the worker loop."""
from ember.utils.data._utils import collate, worker  # noqa: F401
