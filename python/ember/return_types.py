"""Named-tuple results of the (values, indices)-style ops, as ``torch.return_types``.

Each type is a tuple subclass with named fields, so ``values, indices = x.max(0)`` and
``x.max(0).values`` both work, and it prints as ``ember.return_types.max(values=..., indices=...)``.
"""

__all__ = []


def _make(name, fields):
    def __new__(cls, seq=None, **kwargs):
        """Build from a sequence of field values, or from the fields by keyword."""
        if seq is None:
            seq = tuple(kwargs[f] for f in fields)
        seq = tuple(seq)
        if len(seq) != len(fields):
            raise TypeError(f"ember.return_types.{name} takes a {len(fields)}-sequence ({len(seq)}-sequence given)")
        return tuple.__new__(cls, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"ember.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))

    ns = {
        "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__, "__slots__": (),
        "__module__": __name__, "__doc__": f"{name}({', '.join(fields)}): a named tuple of Tensors.",
        "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0,
    }
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i), doc=f"field {i}")
    cls = type(name, (tuple,), ns)
    cls.__qualname__ = name
    globals()[name] = cls
    __all__.append(name)
    return cls


for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"):
    _make(_name, ("values", "indices"))
_make("aminmax", ("min", "max"))
_make("histogram", ("hist", "bin_edges"))
_make("histogramdd", ("hist", "bin_edges"))
_make("triangular_solve", ("solution", "cloned_coefficient"))
del _name
