"""Shared by the view and indexing tests: inputs built with either library and a checker
that compares what torch and ember give for the same op."""

import ember
import torch

# ---------------------------------------------------------------------------------------------
# Inputs: one layout each (contiguous, transposed, stepped, expanded, 0-d, empty, size-1 dims).


def _f32(m, n):
    return m.arange(n, dtype=m.float32)


INPUTS = {
    "contig": lambda m: _f32(m, 24).reshape(2, 3, 4),
    "transposed": lambda m: _f32(m, 24).reshape(2, 3, 4).transpose(0, 2),
    "permuted": lambda m: _f32(m, 24).reshape(2, 3, 4).permute(1, 2, 0),
    "stepped": lambda m: _f32(m, 120).reshape(4, 5, 6)[1:, ::2, 1::3],
    "offset": lambda m: _f32(m, 30).reshape(5, 6)[2:, 1:],
    "matrix_t": lambda m: _f32(m, 12).reshape(3, 4).t(),
    "expanded": lambda m: _f32(m, 3).reshape(3, 1).expand(3, 4),
    "expanded_lead": lambda m: _f32(m, 4).expand(2, 3, 4),
    "scalar": lambda m: m.full((), 5.0),
    "scalar_view": lambda m: _f32(m, 6)[3],
    "vector": lambda m: _f32(m, 6),
    "vector_step": lambda m: _f32(m, 12)[1::3],
    "single": lambda m: _f32(m, 1).reshape(1, 1),
    "empty": lambda m: m.zeros(0),
    "empty_mid": lambda m: m.zeros(2, 0, 3),
    "empty_t": lambda m: m.zeros(3, 0).t(),
    "empty_lead": lambda m: m.zeros(0, 4),
    "ones": lambda m: _f32(m, 6).reshape(1, 2, 1, 3),
    "ones_odd": lambda m: _f32(m, 24).reshape(4, 6)[1:2, ::2].unsqueeze(0),
    "column": lambda m: _f32(m, 12).reshape(3, 4)[:, 1:2],
    "int64": lambda m: m.arange(12).reshape(3, 4)[:, 1:],
}


def _builtin_exc(e):
    """The builtin exception class torch's (or ember's) error derives from."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def _run(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return None, _builtin_exc(e)


def _shares(a, b, lib):
    if lib is torch:
        return a.untyped_storage()._cdata == b.untyped_storage()._cdata
    return a._storage_id() == b._storage_id()


def _describe(t):
    return {
        "shape": tuple(t.shape),
        "stride": tuple(t.stride()),
        "offset": t.storage_offset(),
        "contiguous": t.is_contiguous(),
        "dtype": str(t.dtype).split(".")[-1],
        "values": t.tolist(),
    }


def _approx_equal(a, b):
    """tolist() values equal, NaN equal to NaN (int32 bits viewed as float can be NaN)."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_approx_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return a == b and type(a) is type(b)


def compare_op(make, op):
    """Runs op on torch's and ember's version of one input and checks they agree."""
    tin, ein = make(torch), make(ember)
    assert _describe(ein) == _describe(tin), "inputs differ"
    tout, texc = _run(op, torch, tin)
    if texc is not None:
        eout, eexc = _run(op, ember, ein)
        assert eexc is texc, f"torch raised {texc.__name__}, ember gave {eexc or _describe(eout)}"
        return
    eout = op(ember, ein)
    assert isinstance(eout, ember.Tensor)
    dt, de = _describe(tout), _describe(eout)
    vt, ve = dt.pop("values"), de.pop("values")
    assert de == dt
    assert _approx_equal(ve, vt), (ve, vt)
    shared = _shares(tout, tin, torch)
    assert _shares(eout, ein, ember) == shared, f"torch shares memory: {shared}"
    if shared and tout.numel() and tin.numel():
        assert eout.data_ptr() - ein.data_ptr() == (tout.data_ptr() - tin.data_ptr()) // tin.element_size() * \
            ein.element_size()
    # A write to the input shows through exactly when memory is shared, and bumps the result's
    # version exactly when the version counter is shared (views share both).
    vt0, ve0 = tout._version, eout._version
    tin.fill_(-3)
    ein.fill_(-3)
    assert _approx_equal(eout.tolist(), tout.tolist())
    assert eout._version - ve0 == tout._version - vt0


def compare_on_all(inputs, op):
    """compare_op over several inputs; reports every input that disagrees."""
    failures = []
    for name, make in inputs.items():
        try:
            compare_op(make, op)
        except AssertionError as e:
            failures.append(f"{name}: {e}")
    assert not failures, "\n".join(failures)


