"""``ember.version``, as ``torch.version``: the release and the accelerator toolkits built in
(none: ember is a CPU build)."""
__version__ = "0.1.0"
cuda = None
hip = None
xpu = None
git_version = "unknown"
debug = False
