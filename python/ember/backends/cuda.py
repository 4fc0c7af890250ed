"""``torch.backends.cuda``: ember has no CUDA build. The switches programs set (``matmul.allow_tf32``
and the scaled-dot-product-attention kernel choices) are kept with torch's defaults and change
nothing on the CPU."""


class _MatmulFlags:
    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built():
    return False


def enable_flash_sdp(enabled):
    _SDP["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled):
    _SDP["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled):
    _SDP["math"] = bool(enabled)


def enable_cudnn_sdp(enabled):
    _SDP["cudnn"] = bool(enabled)


def flash_sdp_enabled():
    return _SDP["flash"]


def mem_efficient_sdp_enabled():
    return _SDP["mem_efficient"]


def math_sdp_enabled():
    return _SDP["math"]


def cudnn_sdp_enabled():
    return _SDP["cudnn"]
