"""The default DDP communication hooks: plain all-reduce, and all-reduce in float16 or bfloat16.

Each takes (process_group, bucket) -- the state given to register_comm_hook is the group, None for
the default one -- and returns an ember.futures.Future of the bucket's averaged flat gradients.
"""
import ember
import ember.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def _allreduce_fut(process_group, tensor):
    """Averages tensor over the group in place; a future of it."""
    group = _group(process_group)
    tensor.div_(dist.get_world_size(group))
    fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def allreduce_hook(process_group, bucket):
    """The built-in behaviour as a hook: all-reduce the bucket and divide by the world size."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(dist.get_world_size(group))
    fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(f):
        buffer.copy_(f.value()[0])  # back to the gradients' dtype, in the bucket itself
        return buffer

    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Halves the traffic: gradients are cast to float16, divided by the world size, all-reduced,
    and cast back."""
    return _compress_hook(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As fp16_compress_hook, with bfloat16 (float32's range, fewer mantissa bits)."""
    return _compress_hook(ember.bfloat16, process_group, bucket)
