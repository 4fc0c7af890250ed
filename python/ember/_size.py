"""ember.Size: the tuple subclass returned by Tensor.shape and Tensor.size()."""

import operator


class Size(tuple):
    """Sizes of a tensor's dimensions: a tuple of ints with PyTorch's repr and numel().

    Built from any iterable of integers (objects with ``__index__``, such as NumPy integers or
    one-element integer tensors, count as integers). Slicing, concatenation with tuples and
    repetition give a Size again.
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = []
        for i, s in enumerate(sizes):
            try:
                items.append(operator.index(s))
            except TypeError:
                raise TypeError(f"ember.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        return super().__new__(cls, items)

    def numel(self):
        """The number of elements a tensor of this shape holds (1 for ``Size([])``)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return "ember.Size([" + ", ".join(str(s) for s in self) + "])"

    __str__ = __repr__

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        if not isinstance(n, int):
            return NotImplemented
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))
