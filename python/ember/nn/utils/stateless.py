"""functional_call: run a module with some parameters and buffers replaced (torch.func.functional_call)."""
import contextlib

from ember._C import Tensor

__all__ = ["functional_call"]


def _owner(module, name):
    prefix, _, attr = name.rpartition(".")
    return module.get_submodule(prefix), attr


def _set(mod, attr, value):
    # Written straight into the registries: the replacement may be a plain Tensor (or a non-leaf).
    if attr in mod._parameters:
        mod._parameters[attr] = value
    elif attr in mod._buffers:
        mod._buffers[attr] = value
    else:
        setattr(mod, attr, value)


@contextlib.contextmanager
def _reparametrize(module, values, tie_weights=True, strict=False):
    values = dict(values)
    if tie_weights:
        # A value given for one name of a tied tensor applies to every name of it.
        all_named = list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False))
        by_id = {}
        for name, t in all_named:
            by_id.setdefault(id(t), []).append(name)
        for name, t in all_named:
            if name in values:
                for other in by_id[id(t)]:
                    if other not in values:
                        values[other] = values[name]
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(msgs)))
    saved = []
    try:
        for name, value in values.items():
            mod, attr = _owner(module, name)
            if attr in mod._parameters:
                saved.append((mod, attr, "p", mod._parameters[attr]))
            elif attr in mod._buffers:
                saved.append((mod, attr, "b", mod._buffers[attr]))
            else:
                saved.append((mod, attr, "a", mod.__dict__.get(attr, _MISSING)))
            _set(mod, attr, value)
        yield
    finally:
        for mod, attr, kind, old in reversed(saved):
            if kind == "p":
                mod._parameters[attr] = old
            elif kind == "b":
                mod._buffers[attr] = old
            elif old is _MISSING:
                mod.__dict__.pop(attr, None)
            else:
                mod.__dict__[attr] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named parameters/buffers replaced by the given tensors."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        values = {}
        seen = set()
        repeated = set()
        for d in parameter_and_buffer_dicts:
            repeated |= seen & set(d)
            seen |= set(d)
            values.update(d)
        if repeated:
            raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
