"""``torch.backends.cudnn``: ember has no CUDA build, so cuDNN is never available. The flags
programs set (``benchmark``, ``deterministic``, ``enabled``, ``allow_tf32``) are kept with
torch's defaults and change nothing on the CPU."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
