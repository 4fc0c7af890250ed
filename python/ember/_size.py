"""ember.Size: the tuple subclass returned by Tensor.shape and Tensor.size()."""


class Size(tuple):
    """Sizes of a tensor's dimensions; a tuple of ints with PyTorch's repr and numel()."""

    __slots__ = ()

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return "ember.Size([" + ", ".join(str(s) for s in self) + "])"

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))
