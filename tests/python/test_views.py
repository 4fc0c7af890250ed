"""View and shape operations compared against PyTorch.

Every case builds the same input with both libraries (the API is the same, so one lambda
takes the module), applies the same op, and checks what a user can observe: shape, stride(),
storage_offset(), is_contiguous(), values, whether the result shares memory with the input
(and whether a later write to the input shows through and bumps the result's version), and,
where torch raises, that ember raises the same exception type.
"""

import pickle

import pytest

import ember

torch = pytest.importorskip("torch")

from view_ref import INPUTS, _approx_equal, _f32, _run, compare_on_all, compare_op  # noqa: E402


# ---------------------------------------------------------------------------------------------
# Ops: (name, fn(module, tensor)). Sizes are derived from the input so one op fits all inputs;
# where the derived call is invalid torch raises and ember must raise the same type.


def _shape_fns():
    return {
        "flat": lambda t: (-1,),
        "numel": lambda t: (t.numel(),),
        "1_m1": lambda t: (1, -1),
        "m1_1": lambda t: (-1, 1),
        "append1": lambda t: (*t.shape, 1),
        "prepend1": lambda t: (1, *t.shape),
        "same": lambda t: tuple(t.shape),
        "reversed": lambda t: tuple(reversed(t.shape)),
        "split_last": lambda t: (*t.shape[:-1], 2, -1),
        "merge_first2": lambda t: (-1, *t.shape[2:]),
        "merge_last2": lambda t: (*t.shape[:-2], -1),
        "2_m1": lambda t: (2, -1),
        "m1_m1": lambda t: (-1, -1),
        "zero_d": lambda t: (),
        "drop_ones": lambda t: tuple(s for s in t.shape if s != 1),
        "zero_m1": lambda t: (0, -1),
        "m1_0": lambda t: (-1, 0),
        "neg2": lambda t: (-2,),
        "interleave1": lambda t: tuple(x for s in t.shape for x in (s, 1)),
    }


def _shape_ops():
    ops = {}
    for name, fn in _shape_fns().items():
        ops[f"view[{name}]"] = lambda m, t, fn=fn: t.view(*fn(t))
        ops[f"reshape[{name}]"] = lambda m, t, fn=fn: t.reshape(fn(t))
    for name in ("flat", "split_last", "zero_d"):
        fn = _shape_fns()[name]
        ops[f"view_tuple[{name}]"] = lambda m, t, fn=fn: t.view(fn(t))
        ops[f"m.reshape[{name}]"] = lambda m, t, fn=fn: m.reshape(t, fn(t))
        ops[f"reshape_args[{name}]"] = lambda m, t, fn=fn: t.reshape(*fn(t))
    return ops


OPS = {
    **_shape_ops(),
    "view_list": lambda m, t: t.view([-1]),
    "view_size": lambda m, t: t.view(t.shape),
    "view_as": lambda m, t: t.view_as(t.reshape(-1)),
    "reshape_as": lambda m, t: t.reshape_as(t.reshape(-1)),
    "reshape_args": lambda m, t: t.reshape(-1, 1),
    "reshape_kw": lambda m, t: t.reshape(shape=(-1,)),
    "view_kw": lambda m, t: t.view(size=(-1,)),
    # flatten / unflatten
    "flatten": lambda m, t: t.flatten(),
    "flatten1": lambda m, t: t.flatten(1),
    "flatten01": lambda m, t: t.flatten(0, 1),
    "flatten_neg": lambda m, t: t.flatten(-2, -1),
    "flatten00": lambda m, t: t.flatten(0, 0),
    "flatten_bad_order": lambda m, t: t.flatten(1, 0),
    "flatten_oob": lambda m, t: t.flatten(0, 5),
    "flatten_kw": lambda m, t: t.flatten(start_dim=1, end_dim=-1),
    "m.flatten": lambda m, t: m.flatten(t),
    "m.flatten1": lambda m, t: m.flatten(t, 1),
    "unflatten_1m1": lambda m, t: t.unflatten(0, (1, -1)),
    "unflatten_last": lambda m, t: t.unflatten(-1, (-1, 1)),
    "unflatten_2m1": lambda m, t: t.unflatten(0, (2, -1)),
    "unflatten_empty": lambda m, t: t.unflatten(0, ()),
    "unflatten_two_infer": lambda m, t: t.unflatten(0, (-1, -1)),
    "unflatten_list": lambda m, t: t.unflatten(1, [1, -1, 1]),
    "m.unflatten": lambda m, t: m.unflatten(t, -1, (1, -1)),
    # squeeze / unsqueeze
    "squeeze": lambda m, t: t.squeeze(),
    "squeeze0": lambda m, t: t.squeeze(0),
    "squeeze_neg": lambda m, t: t.squeeze(-1),
    "squeeze1": lambda m, t: t.squeeze(1),
    "squeeze_tuple": lambda m, t: t.squeeze((0, 1)),
    "squeeze_tuple_neg": lambda m, t: t.squeeze((0, -1)),
    "squeeze_list": lambda m, t: t.squeeze([0, 2]),
    "squeeze_empty_tuple": lambda m, t: t.squeeze(()),
    "squeeze_dup": lambda m, t: t.squeeze((0, 0)),
    "squeeze_oob": lambda m, t: t.squeeze(5),
    "squeeze_kw": lambda m, t: t.squeeze(dim=0),
    "m.squeeze": lambda m, t: m.squeeze(t),
    "m.squeeze0": lambda m, t: m.squeeze(t, 0),
    "m.squeeze_tuple": lambda m, t: m.squeeze(t, (0, -1)),
    "unsqueeze0": lambda m, t: t.unsqueeze(0),
    "unsqueeze_neg": lambda m, t: t.unsqueeze(-1),
    "unsqueeze_end": lambda m, t: t.unsqueeze(t.dim()),
    "unsqueeze_mid": lambda m, t: t.unsqueeze(1),
    "unsqueeze_lowest": lambda m, t: t.unsqueeze(-t.dim() - 1),
    "unsqueeze_oob": lambda m, t: t.unsqueeze(t.dim() + 1),
    "unsqueeze_oob_neg": lambda m, t: t.unsqueeze(-t.dim() - 2),
    "unsqueeze_kw": lambda m, t: t.unsqueeze(dim=0),
    "m.unsqueeze": lambda m, t: m.unsqueeze(t, -1),
    # transpose family
    "transpose01": lambda m, t: t.transpose(0, 1),
    "transpose_neg": lambda m, t: t.transpose(0, -1),
    "transpose_last2": lambda m, t: t.transpose(-1, -2),
    "transpose_same": lambda m, t: t.transpose(0, 0),
    "transpose_oob": lambda m, t: t.transpose(0, 5),
    "transpose_kw": lambda m, t: t.transpose(dim0=0, dim1=-1),
    "m.transpose": lambda m, t: m.transpose(t, 0, -1),
    "swapaxes": lambda m, t: t.swapaxes(0, -1),
    "swapdims": lambda m, t: t.swapdims(-1, 0),
    "m.swapaxes": lambda m, t: m.swapaxes(t, 0, 1),
    "m.swapdims": lambda m, t: m.swapdims(t, 0, 1),
    "t": lambda m, t: t.t(),
    "m.t": lambda m, t: m.t(t),
    "mT": lambda m, t: t.mT,
    "mH": lambda m, t: t.mH,
    "H": lambda m, t: t.H,
    "T": lambda m, t: t.T,
    "adjoint": lambda m, t: t.adjoint(),
    "m.adjoint": lambda m, t: m.adjoint(t),
    # permute / movedim
    "permute_rev": lambda m, t: t.permute(*reversed(range(t.dim()))),
    "permute_tuple": lambda m, t: t.permute(tuple(reversed(range(t.dim())))),
    "permute_neg": lambda m, t: t.permute([d - t.dim() for d in range(t.dim())]),
    "permute_rot": lambda m, t: t.permute(*range(1, t.dim()), 0) if t.dim() else t.permute(()),
    "permute_dup": lambda m, t: t.permute(0, 0, *range(2, t.dim())),
    "permute_short": lambda m, t: t.permute(0),
    "permute_kw": lambda m, t: t.permute(dims=tuple(range(t.dim()))),
    "m.permute": lambda m, t: m.permute(t, tuple(reversed(range(t.dim())))),
    "movedim": lambda m, t: t.movedim(0, -1),
    "movedim_back": lambda m, t: t.movedim(-1, 0),
    "movedim_same": lambda m, t: t.movedim(0, 0),
    "movedim_tuple": lambda m, t: t.movedim((0, 1), (1, 0)),
    "movedim_tuple_neg": lambda m, t: t.movedim((0, 1), (-1, -2)),
    "movedim_list": lambda m, t: t.movedim([0], [1]),
    "movedim_dup": lambda m, t: t.movedim((0, 0), (1, 2)),
    "movedim_dup_dst": lambda m, t: t.movedim((0, 1), (2, 2)),
    "movedim_len": lambda m, t: t.movedim((0,), (1, 2)),
    "movedim_oob": lambda m, t: t.movedim(0, 5),
    "movedim_kw": lambda m, t: t.movedim(source=0, destination=1),
    "m.movedim": lambda m, t: m.movedim(t, 1, 0),
    "moveaxis": lambda m, t: t.moveaxis(0, -1),
    "m.moveaxis": lambda m, t: m.moveaxis(t, (0, -1), (-1, 0)),
    # expand / broadcast_to
    "expand_same": lambda m, t: t.expand(*t.shape),
    "expand_m1": lambda m, t: t.expand(*[-1] * t.dim()),
    "expand_lead": lambda m, t: t.expand(2, *t.shape),
    "expand_lead0": lambda m, t: t.expand(0, *t.shape),
    "expand_lead_m1": lambda m, t: t.expand(-1, *t.shape),
    "expand_ones": lambda m, t: t.expand(*[5 if s == 1 else -1 for s in t.shape]),
    "expand_ones_to0": lambda m, t: t.expand(*[0 if s == 1 else s for s in t.shape]),
    "expand_bad": lambda m, t: t.expand(*[s + 1 for s in t.shape]),
    "expand_fewer": lambda m, t: t.expand(*t.shape[1:]),
    "expand_list": lambda m, t: t.expand([2, *t.shape]),
    "expand_as": lambda m, t: t.expand_as(m.zeros(2, *t.shape)),
    "broadcast_to": lambda m, t: t.broadcast_to((3, *t.shape)),
    "m.broadcast_to": lambda m, t: m.broadcast_to(t, (2, 1, *t.shape)),
    "m.broadcast_to_m1": lambda m, t: m.broadcast_to(t, (-1,) * t.dim()),
    # narrow / select / slice-like
    "narrow": lambda m, t: t.narrow(0, 0, 1),
    "narrow_last": lambda m, t: t.narrow(-1, 1, 1),
    "narrow_negstart": lambda m, t: t.narrow(0, -1, 1),
    "narrow_len0": lambda m, t: t.narrow(0, 0, 0),
    "narrow_full": lambda m, t: t.narrow(0, 0, t.shape[0] if t.dim() else 1),
    "narrow_too_long": lambda m, t: t.narrow(0, 1, t.shape[0] if t.dim() else 1),
    "narrow_start_oob": lambda m, t: t.narrow(0, (t.shape[0] if t.dim() else 1) + 1, 0),
    "narrow_start_end": lambda m, t: t.narrow(0, t.shape[0] if t.dim() else 1, 0),
    "narrow_neg_len": lambda m, t: t.narrow(0, 0, -1),
    "narrow_tensor_start": lambda m, t: t.narrow(0, m.arange(3)[1], 1),
    "narrow_float_tensor_start": lambda m, t: t.narrow(0, m.arange(3.0)[0], 1),
    "narrow_kw": lambda m, t: t.narrow(dim=-1, start=0, length=1),
    "m.narrow": lambda m, t: m.narrow(t, -1, 0, 1),
    "select": lambda m, t: t.select(0, 0),
    "select_last": lambda m, t: t.select(-1, -1),
    "select_oob": lambda m, t: t.select(0, t.shape[0] if t.dim() else 0),
    "select_oob_neg": lambda m, t: t.select(0, -(t.shape[0] if t.dim() else 0) - 1),
    "select_dim_oob": lambda m, t: t.select(t.dim(), 0),
    "select_kw": lambda m, t: t.select(dim=0, index=0),
    "m.select": lambda m, t: m.select(t, 1, 0),
    # unfold
    "unfold11": lambda m, t: t.unfold(0, 1, 1),
    "unfold_last": lambda m, t: t.unfold(-1, 2, 1),
    "unfold_step2": lambda m, t: t.unfold(0, 2, 2),
    "unfold_size0": lambda m, t: t.unfold(0, 0, 1),
    "unfold_too_big": lambda m, t: t.unfold(0, 100, 1),
    "unfold_step0": lambda m, t: t.unfold(0, 1, 0),
    "unfold_neg_size": lambda m, t: t.unfold(0, -1, 1),
    "unfold_dim_oob": lambda m, t: t.unfold(5, 1, 1),
    # as_strided
    "as_strided": lambda m, t: t.as_strided((2,), (1,)),
    "as_strided_offset": lambda m, t: t.as_strided((2, 2), (1, 2), 1),
    "as_strided_0d": lambda m, t: t.as_strided((), ()),
    "as_strided_empty": lambda m, t: t.as_strided((0, 100), (100, 1), 1000),
    "as_strided_oob": lambda m, t: t.as_strided((100,), (1,)),
    "as_strided_neg_stride": lambda m, t: t.as_strided((2,), (-1,)),
    "as_strided_neg_size": lambda m, t: t.as_strided((-1,), (1,)),
    "as_strided_len_mismatch": lambda m, t: t.as_strided((2, 2), (1,)),
    "as_strided_neg_offset": lambda m, t: t.as_strided((1,), (1,), -1),
    "as_strided_kw": lambda m, t: t.as_strided(size=(1,), stride=(0,), storage_offset=0),
    "m.as_strided": lambda m, t: m.as_strided(t, (2, 1), (1, 1)),
    # dtype views
    "view_int32": lambda m, t: t.view(m.int32),
    "view_int16": lambda m, t: t.view(m.int16),
    "view_uint8": lambda m, t: t.view(m.uint8),
    "view_float64": lambda m, t: t.view(m.float64),
    "view_dtype_kw": lambda m, t: t.view(dtype=m.int32),
    "view_same_dtype": lambda m, t: t.view(t.dtype),
    # copies and aliases
    "contiguous": lambda m, t: t.contiguous(),
    "contiguous_fmt": lambda m, t: t.contiguous(memory_format=m.contiguous_format),
    "contiguous_preserve": lambda m, t: t.contiguous(memory_format=m.preserve_format),
    "clone": lambda m, t: t.clone(),
    "clone_contig": lambda m, t: t.clone(memory_format=m.contiguous_format),
    "clone_preserve": lambda m, t: t.clone(memory_format=m.preserve_format),
    "m.clone": lambda m, t: m.clone(t),
    "detach": lambda m, t: t.detach(),
    "to_same": lambda m, t: t.to(t.dtype),
    "to_copy": lambda m, t: t.to(t.dtype, copy=True),
    "to_float64": lambda m, t: t.to(m.float64),
    "double": lambda m, t: t.double(),
}


@pytest.mark.parametrize("op", list(OPS), ids=list(OPS))
@pytest.mark.filterwarnings("ignore:.*deprecated on 0-D tensors", "ignore:The use of `x.T`")
def test_view_op(op):
    compare_on_all(INPUTS, OPS[op])


# ---------------------------------------------------------------------------------------------
# reshape's view-or-copy decision on layouts chosen to sit right at the boundary.

RESHAPE_CASES = [
    # (input builder, target shape)
    (lambda m: _f32(m, 24).reshape(2, 3, 4).permute(1, 0, 2), (6, 4)),  # copy: crosses chunks
    (lambda m: _f32(m, 24).reshape(2, 3, 4).permute(1, 0, 2), (3, 2, 2, 2)),  # view: splits last
    (lambda m: _f32(m, 24).reshape(2, 3, 4).permute(1, 0, 2), (3, 8)),  # view: merges dims 1-2
    (lambda m: _f32(m, 24).reshape(4, 6)[:, :3], (2, 2, 3)),  # view: only splits the outer dim
    (lambda m: _f32(m, 24).reshape(4, 6)[:, :3], (12,)),  # copy
    (lambda m: _f32(m, 24).reshape(4, 6)[::2], (12,)),  # view: rows are contiguous
    (lambda m: _f32(m, 24).reshape(4, 6)[::2], (3, 4)),  # copy
    (lambda m: _f32(m, 3).reshape(3, 1).expand(3, 4), (12,)),  # copy
    (lambda m: _f32(m, 3).reshape(3, 1).expand(3, 4), (3, 2, 2)),  # view: zero stride split
    (lambda m: _f32(m, 3).reshape(3, 1).expand(3, 4), (3, 4, 1)),
    (lambda m: _f32(m, 4).expand(3, 4), (3, 2, 2)),
    (lambda m: _f32(m, 4).expand(3, 4), (12,)),
    (lambda m: _f32(m, 24).reshape(4, 1, 6)[:, :, ::2].transpose(0, 1), (4, 3)),
    (lambda m: _f32(m, 8).reshape(2, 1, 4).as_strided((2, 1, 4), (4, 7, 1)), (2, 4)),
    (lambda m: _f32(m, 8).reshape(2, 1, 4).as_strided((2, 1, 4), (4, 7, 1)), (8,)),
    (lambda m: m.zeros(0, 3).t(), (3, 0)),
    (lambda m: m.zeros(0, 3).t(), (0, 3)),
    (lambda m: m.zeros(4, 0, 3).transpose(0, 2), (3, 0, 4)),
    (lambda m: m.zeros(4, 0, 3).transpose(0, 2), (0,)),
    (lambda m: m.zeros(4, 0, 3).transpose(0, 2), (2, 0, 6)),
    (lambda m: m.full((), 1.0), (1, 1, 1)),
    (lambda m: _f32(m, 6)[2:3], ()),
    (lambda m: _f32(m, 6)[::5], (1, 2)),
    (lambda m: _f32(m, 6)[::5], (2, 1)),
]


@pytest.mark.parametrize("case", range(len(RESHAPE_CASES)))
def test_reshape_view_or_copy(case):
    make, shape = RESHAPE_CASES[case]
    compare_op(make, lambda m, t: t.view(shape))
    compare_op(make, lambda m, t: t.reshape(shape))
    if len(shape) == 1:
        compare_op(make, lambda m, t: t.flatten())


# ---------------------------------------------------------------------------------------------
# clone / to / contiguous keep torch's layout choice (preserve_format).

LAYOUTS = {
    "permuted": lambda m: _f32(m, 120).reshape(2, 3, 4, 5).permute(3, 1, 0, 2),
    "stepped": lambda m: _f32(m, 120).reshape(2, 3, 4, 5)[:, ::2, :, 1::2],
    "stepped_t": lambda m: _f32(m, 120).reshape(2, 3, 4, 5)[:, ::2].transpose(1, 3),
    "expanded_col": lambda m: _f32(m, 3).reshape(3, 1).expand(3, 4),
    "expanded_row": lambda m: _f32(m, 3).reshape(1, 3).expand(4, 3),
    "size1_t": lambda m: _f32(m, 120).reshape(2, 3, 4, 5)[:, 1:2].transpose(1, 3),
    "empty_t": lambda m: m.zeros(0, 3).t(),
    "empty_t3": lambda m: m.zeros(3, 0, 2).transpose(0, 2),
    "last1": lambda m: _f32(m, 120).reshape(2, 3, 4, 5)[..., :1],
    "equal_strides": lambda m: _f32(m, 4).as_strided((2, 2), (1, 1)),
    "overlap": lambda m: _f32(m, 10).as_strided((3, 3), (2, 1)),
    "gappy_dense_1": lambda m: _f32(m, 10).as_strided((2, 1, 3), (3, 100, 1)),
    "channels_last": lambda m: _f32(m, 120).reshape(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    "scalar": lambda m: m.full((), 2.0),
    "contig_wide_size1": lambda m: _f32(m, 300).as_strided((1, 3), (100, 1)),
    "contig_size1_last": lambda m: _f32(m, 300).as_strided((3, 1), (1, 100)),
}


@pytest.mark.parametrize("fn", ["clone", "to_double", "to_copy", "contiguous", "cl", "cl_clone", "cl3d", "to_cl",
                                "to_contig", "to_legacy", "to_double_cl", "to_copy_contig"])
@pytest.mark.parametrize("layout", list(LAYOUTS), ids=list(LAYOUTS))
def test_copy_layouts(layout, fn):
    op = {
        "clone": lambda m, t: t.clone(),
        "to_double": lambda m, t: t.to(m.float64),
        "to_copy": lambda m, t: t.to(m.float32, copy=True),
        "contiguous": lambda m, t: t.contiguous(),
        "cl": lambda m, t: t.contiguous(memory_format=m.channels_last),
        "cl_clone": lambda m, t: t.clone(memory_format=m.channels_last),
        "cl3d": lambda m, t: t.unsqueeze(-1).contiguous(memory_format=m.channels_last_3d),
        "to_cl": lambda m, t: t.to(memory_format=m.channels_last),
        "to_contig": lambda m, t: t.to(memory_format=m.contiguous_format),
        "to_legacy": lambda m, t: t.to(memory_format=m.legacy_contiguous_format),
        "to_double_cl": lambda m, t: t.to(m.float64, memory_format=m.channels_last),
        "to_copy_contig": lambda m, t: t.to(m.float32, copy=True, memory_format=m.contiguous_format),
    }[fn]
    compare_op(LAYOUTS[layout], op)


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"])
@pytest.mark.parametrize("layout", list(LAYOUTS) + ["nd5", "nd5_cl"])
def test_is_contiguous_memory_format(layout, fmt):
    extra = {
        "nd5": lambda m: _f32(m, 240).reshape(2, 3, 2, 4, 5),
        "nd5_cl": lambda m: _f32(m, 240).reshape(2, 3, 2, 4, 5).permute(0, 2, 3, 4, 1),
    }
    make = extra.get(layout) or LAYOUTS[layout]
    tr, texc = _run(lambda: make(torch).is_contiguous(memory_format=getattr(torch, fmt)))
    er, eexc = _run(lambda: make(ember).is_contiguous(memory_format=getattr(ember, fmt)))
    assert (er, eexc) == (tr, texc)


def test_memory_format_objects():
    assert repr(ember.contiguous_format) == "ember.contiguous_format"
    assert repr(ember.channels_last) == "ember.channels_last"
    assert isinstance(ember.preserve_format, ember.memory_format)
    assert ember.contiguous_format == ember.contiguous_format
    assert ember.contiguous_format != ember.channels_last
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last
    with pytest.raises(TypeError):
        ember.zeros(2).contiguous(memory_format=3)


def test_to_memory_format_aliases_like_torch():
    # torch returns the tensor itself when its layout already is the one asked for (no copy)
    for m in (torch, ember):
        t = m.zeros(2, 3, 4, 5)
        assert t.to(memory_format=m.contiguous_format) is t
        cl = t.contiguous(memory_format=m.channels_last)
        assert cl.to(memory_format=m.channels_last) is cl
        assert cl.to(memory_format=m.contiguous_format).is_contiguous()
        assert m.legacy_contiguous_format is m.contiguous_format
    with pytest.raises(TypeError):
        ember.zeros(2).to(memory_format="channels_last")


def test_contiguous_returns_same_data():
    t = ember.zeros(3, 4)
    assert t.contiguous().data_ptr() == t.data_ptr()
    assert t.contiguous() is t  # as torch: the same object
    s = ember.zeros(4, 3).t()
    assert s.contiguous().data_ptr() != s.data_ptr()


# ---------------------------------------------------------------------------------------------
# copy_: broadcasting, dtype conversion, overlap rules, version counter.

FLOATS = [float("nan"), float("inf"), -float("inf"), 300.7, -1.5, -300.7, 1e10, -1e10, 0.5, 2.0**31, 70000.4,
          1e10 + 1, 2.0**63, -2.0**63, 255.9, -0.9, 1e30]


@pytest.mark.parametrize("src_dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dst_dtype", ["int8", "uint8", "int16", "int32", "int64", "bool", "float16", "bfloat16",
                                       "float32", "float64"])
@pytest.mark.parametrize("n", [1, 40])
def test_copy_float_conversion(src_dtype, dst_dtype, n):
    """Matches torch on x86, including out-of-range and NaN (which C++ leaves undefined)."""
    vals = (FLOATS * n)[: len(FLOATS) * n]
    results = []
    for m in (torch, ember):
        src = m.zeros(len(vals), dtype=m.float64)
        for i, v in enumerate(vals):
            src[i] = v
        src = src.to(getattr(m, src_dtype))
        dst = m.zeros(len(vals), dtype=getattr(m, dst_dtype))
        dst.copy_(src)
        results.append((dst.tolist(), src.to(getattr(m, dst_dtype)).tolist()))
    assert _approx_equal(results[1][0], results[0][0])
    assert _approx_equal(results[1][1], results[0][1])


INTS = [300, -1, 2**31 + 5, -2**40 - 3, 255, 128, -129, 65535, 2**63 - 1, -2**63, 0, 1]


@pytest.mark.parametrize("dst_dtype", ["int8", "uint8", "int16", "int32", "int64", "bool", "float16", "bfloat16",
                                       "float32", "float64"])
@pytest.mark.parametrize("src_dtype", ["int64", "int32", "uint8", "bool", "int8"])
def test_copy_int_conversion(src_dtype, dst_dtype):
    results = []
    for m in (torch, ember):
        src = m.zeros(len(INTS), dtype=m.int64)
        for i, v in enumerate(INTS):
            src[i] = v
        src = src.to(getattr(m, src_dtype))
        dst = m.zeros(len(INTS), dtype=getattr(m, dst_dtype))
        dst.copy_(src)
        results.append(dst.tolist())
    assert results[1] == results[0]


COPY_CASES = {
    "broadcast_row": (lambda m: m.zeros(3, 4), lambda m, d: _f32(m, 4)),
    "broadcast_col": (lambda m: m.zeros(3, 4), lambda m, d: _f32(m, 3).reshape(3, 1)),
    "broadcast_scalar": (lambda m: m.zeros(3, 4), lambda m, d: m.full((), 7.0)),
    "broadcast_bad": (lambda m: m.zeros(3, 4), lambda m, d: _f32(m, 3)),
    "src_bigger": (lambda m: m.zeros(4), lambda m, d: m.zeros(2, 4)),
    "src_lead1": (lambda m: m.zeros(4), lambda m, d: m.ones(1, 4)),
    "dst_transposed": (lambda m: m.zeros(4, 3).t(), lambda m, d: _f32(m, 12).reshape(3, 4)),
    "dst_stepped": (lambda m: m.zeros(5, 6)[::2, 1::2], lambda m, d: _f32(m, 9).reshape(3, 3)),
    "src_transposed_int": (lambda m: m.zeros(3, 4, dtype=m.int32), lambda m, d: _f32(m, 12).reshape(4, 3).t() * 1.5),
    "empty": (lambda m: m.zeros(0, 3), lambda m, d: _f32(m, 3)),
    "empty_to_empty": (lambda m: m.zeros(2, 0), lambda m, d: m.zeros(0)),
    "dst_expanded": (lambda m: m.zeros(3).expand(2, 3), lambda m, d: m.ones(2, 3)),
    "dst_expanded_size1": (lambda m: m.zeros(1).expand(1, 3)[:, :1], lambda m, d: m.ones(1, 1)),
    "self": (lambda m: _f32(m, 6), lambda m, d: d),
    "self_view_same": (lambda m: _f32(m, 6), lambda m, d: d[:]),
    "shift_right": (lambda m: _f32(m, 6)[1:], lambda m, d: d.as_strided((5,), (1,), 0)),
    "shift_left": (lambda m: _f32(m, 6)[:-1], lambda m, d: d.as_strided((5,), (1,), 1)),
    "shift_rows": (lambda m: _f32(m, 12).reshape(3, 4)[1:], lambda m, d: d.as_strided((2, 4), (4, 1), 0)),
    "transpose_self": (lambda m: _f32(m, 9).reshape(3, 3), lambda m, d: d.t()),
    "reverse_halves": (lambda m: _f32(m, 8)[4:], lambda m, d: d.as_strided((4,), (1,), 0)),
    "disjoint_same_storage": (lambda m: _f32(m, 8)[:4], lambda m, d: d.as_strided((4,), (1,), 4)),
    "interleaved": (lambda m: _f32(m, 8)[::2], lambda m, d: d.as_strided((4,), (2,), 1)),
    "int_to_bool": (lambda m: m.zeros(4, dtype=m.bool), lambda m, d: m.arange(4) - 1),
    "bool_to_float": (lambda m: m.zeros(4), lambda m, d: m.arange(4) > 1),
    "float_to_bool": (lambda m: m.zeros(5, dtype=m.bool), lambda m, d: (_f32(m, 5) - 2) / 4),
}


@pytest.mark.parametrize("case", list(COPY_CASES))
def test_copy_(case):
    make_dst, make_src = COPY_CASES[case]
    outs = []
    for m in (torch, ember):
        dst = make_dst(m)
        src = make_src(m, dst)
        v0 = dst._version
        res, exc = _run(lambda: dst.copy_(src))
        outs.append((exc, dst.tolist() if exc is None else None, dst._version - v0 if exc is None else None,
                     res is dst if exc is None else None))
    assert outs[1] == outs[0]


def test_copy_overlap_unchecked_cases_give_a_defined_result():
    # Overlapping but not dense: torch does not detect it; ember copies through a temporary.
    a = _f32(ember, 12).reshape(3, 4)
    a[:, 1:] = a[:, :-1]
    assert a.tolist() == [[0, 0, 1, 2], [4, 4, 5, 6], [8, 8, 9, 10]]


# ---------------------------------------------------------------------------------------------
# Version counter: what bumps it and by how much.

VERSION_CASES = {
    "setitem_scalar": lambda m, t: t.__setitem__(0, 1),
    "setitem_tensor": lambda m, t: t.__setitem__(0, m.ones(4)),
    "setitem_ellipsis": lambda m, t: t.__setitem__(Ellipsis, 2),
    "setitem_element": lambda m, t: t.__setitem__((0, 0), 5),
    "setitem_self": lambda m, t: t.__setitem__(slice(None), t),
    "setitem_empty": lambda m, t: t.__setitem__(slice(0, 0), 1),
    "add_": lambda m, t: t.add_(1),
    "mul_": lambda m, t: t.mul_(2),
    "iadd": lambda m, t: t.__iadd__(1),
    "copy_": lambda m, t: t.copy_(m.ones(3, 4)),
    "copy_self": lambda m, t: t.copy_(t),
    "copy_broadcast": lambda m, t: t.copy_(m.ones(4)),
    "fill_": lambda m, t: t.fill_(3),
    "zero_": lambda m, t: t.zero_(),
    "view_fill": lambda m, t: t[1].fill_(3),
    "view_chain": lambda m, t: t[1:].view(-1).t().fill_(3),
    "reshape_copy_fill": lambda m, t: t.t().reshape(-1).fill_(3),
    "clone_fill": lambda m, t: t.clone().fill_(3),
    "detach_fill": lambda m, t: t.detach().fill_(3),
    "two_ops": lambda m, t: (t.add_(1), t[0].zero_()),
    "view_only": lambda m, t: t.view(2, 6).t().unsqueeze(0),
    "getitem": lambda m, t: t[0, 1:],
    "contiguous": lambda m, t: t.contiguous(),
    "resize_same": lambda m, t: t.resize_(3, 4),
    "resize_same_numel": lambda m, t: t.resize_(12),
    "resize_grow": lambda m, t: t.resize_(5, 5),
}


@pytest.mark.parametrize("case", list(VERSION_CASES))
def test_version_counter(case):
    deltas = []
    for m in (torch, ember):
        t = m.zeros(3, 4)
        v0 = t._version
        VERSION_CASES[case](m, t)
        deltas.append(t._version - v0)
    assert deltas[1] == deltas[0]


def test_version_counter_shared_by_views():
    t = ember.zeros(3, 4)
    views = [t.view(-1), t.t(), t[1], t[..., None], t.expand(2, 3, 4), t.view(ember.int32), t.unfold(0, 2, 1)]
    t.add_(1)
    assert all(v._version == t._version for v in views)
    views[1][0].fill_(2)
    assert all(v._version == t._version for v in views)
    c = t.clone()
    c.add_(1)
    assert c._version != t._version or c._version == 1


# ---------------------------------------------------------------------------------------------
# ember.Size


def test_size_basics():
    for m in (torch, ember):
        s = m.Size([2, 3, 4])
        assert isinstance(s, tuple)
        assert s == (2, 3, 4) and hash(s) == hash((2, 3, 4))
        assert s.numel() == 24 and m.Size([]).numel() == 1 and m.Size([0, 3]).numel() == 0
        for r in (s[1:], s[::-1], s + (1,), (1,) + s, s + s, s * 2, 2 * s):
            assert type(r) is m.Size
        assert type(s[0]) is int
    assert repr(ember.Size([2, 3])) == "ember.Size([2, 3])"
    assert str(ember.Size([])) == "ember.Size([])"
    assert repr(ember.zeros(2, 3).shape) == "ember.Size([2, 3])"
    assert pickle.loads(pickle.dumps(ember.Size([1, 2]))) == ember.Size([1, 2])
    assert type(pickle.loads(pickle.dumps(ember.Size([1, 2])))) is ember.Size


@pytest.mark.parametrize("arg", ["[1.5]", "(2, 'a')", "3", "[None]", "[True, 2]", "[-1]", "[numpy.int64(2)]",
                                 "[m.full((), 3, dtype=m.int64)]", "range(3)"])
def test_size_construction(arg):
    import numpy  # noqa: F401

    results = []
    for m in (torch, ember):
        r, exc = _run(lambda: tuple(m.Size(eval(arg))))
        results.append((r, exc))
    assert results[1] == results[0]


def test_size_concat_with_list_is_type_error():
    for m in (torch, ember):
        with pytest.raises(TypeError):
            m.Size([1]) + [2]


def test_shape_is_size():
    t = ember.zeros(2, 3)
    assert type(t.shape) is ember.Size and type(t.size()) is ember.Size
    assert t.size(-1) == 3 and t.size(dim=0) == 2
    assert ember.zeros(*t.shape).shape == t.shape
    assert t.view(t.shape[::-1]).shape == (3, 2)


# ---------------------------------------------------------------------------------------------
# Warnings torch gives (once per process) on deprecated transposes.

_WARN_SCRIPT = """
import sys, warnings
m = __import__(sys.argv[1])
t, s = m.zeros(2, 3, 4), m.full((), 1.0)
out = []
for expr in ["t.T", "s.T", "s.mT", "s.mH", "s.H", "s.adjoint()", "t.T", "s.mT", "t.mT", "t[0].T", "t[0, 0].T"]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = eval(expr)
    out.append((expr, tuple(r.shape), sum(issubclass(x.category, UserWarning) for x in w)))
print(out)
"""


def test_transpose_property_warnings():
    import os
    import pathlib
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(ember.__file__).parents[1]))
    got = [subprocess.run([sys.executable, "-c", _WARN_SCRIPT, lib], capture_output=True, text=True, env=env,
                          check=True).stdout for lib in ("torch", "ember")]
    assert got[1] == got[0]


# ---------------------------------------------------------------------------------------------
# Random layouts and random regroupings of their dims: view/reshape/flatten must decide
# view-or-copy (and the strides) exactly as torch does.

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _layout_and_target(draw):
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(0 if draw(st.booleans()) else 1, 4), min_size=ndim, max_size=ndim))
    steps = draw(st.lists(st.integers(1, 2), min_size=ndim, max_size=ndim))
    perm = draw(st.permutations(range(ndim)))
    expand_to = [draw(st.sampled_from([1, 3])) if s == 1 else s for s in shape]
    # The regrouped target: merge neighbours, split dims by a divisor, sprinkle size-1 dims.
    sizes = [s for s in (expand_to[p] for p in perm)]
    target = []
    i = 0
    while i < len(sizes):
        op = draw(st.sampled_from(["keep", "merge", "split", "one"]))
        if op == "merge" and i + 1 < len(sizes):
            target.append(sizes[i] * sizes[i + 1])
            i += 2
            continue
        if op == "split" and sizes[i] > 1:
            d = draw(st.sampled_from([d for d in range(1, sizes[i] + 1) if sizes[i] % d == 0]))
            target += [d, sizes[i] // d]
        elif op == "one":
            target += [1, sizes[i]]
        else:
            target.append(sizes[i])
        i += 1
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return shape, steps, perm, expand_to, tuple(target)


def _build(m, shape, steps, perm, expand_to):
    full = [s * st_ for s, st_ in zip(shape, steps)]
    n = 1
    for s in full:
        n *= s
    t = m.arange(n, dtype=m.float32).reshape(full)
    t = t[tuple(slice(None, None, st_) for st_ in steps)]
    return t.expand(expand_to).permute(perm)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_layout_and_target())
def test_random_regroupings(case):
    shape, steps, perm, expand_to, target = case
    make = lambda m: _build(m, shape, steps, perm, expand_to)  # noqa: E731
    compare_op(make, lambda m, t: t.view(target))
    compare_op(make, lambda m, t: t.reshape(target))
    compare_op(make, lambda m, t: t.flatten(1) if t.dim() > 1 else t.flatten())
    compare_op(make, lambda m, t: t.clone())


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape,perm", [((16, 128, 4, 64), (0, 2, 1, 3)), ((7, 333, 3, 37), (0, 2, 1, 3)),
                                        ((5, 4099, 9), (1, 0, 2)), ((3, 50001), (0, 1)), ((257, 3, 131), (2, 1, 0))])
def test_large_permuted_copies_split_across_threads(threads, shape, perm):
    # TensorIter.for_each_2d hands copy runs of whole rows; thread ranges start and end mid-row here
    import numpy as np
    n = ember.get_num_threads()
    src = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        ember.set_num_threads(threads)
        t = ember.tensor(src).permute(*perm)
        for out in (t.contiguous(), t.to(ember.float64), t.reshape(-1)):
            assert np.array_equal(out.numpy(), src.transpose(perm).reshape(out.shape).astype(out.numpy().dtype))
    finally:
        ember.set_num_threads(n)


def _copy_test_values(rng, shape, dtype, span):
    """numpy values of `dtype` for the copy tests: bools, complex normals, else integers in [-span, span)."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "complex128":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return rng.integers(-span, span, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["bool", "int16", "float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("shape,perm", [((64, 4096), (1, 0)), ((4099, 70), (1, 0)), ((37, 300), (1, 0)),
                                        ((3, 40, 1024), (0, 2, 1)), ((17, 33, 256), (2, 1, 0)),
                                        ((2, 64, 20, 20), (0, 2, 3, 1))])
def test_transposed_copy_blocks(shape, perm, dtype):
    """contiguous() of transposed views (Note [Transposed copy]: square blocks through a buffer for
    long rows or strides that crowd cache sets, with tail rows and columns; row by row otherwise):
    numpy's transpose, element for element, on 1 and 2 threads, and copy_ into a transposed view."""
    import numpy as np

    v = _copy_test_values(np.random.default_rng(len(shape) * 100 + shape[-1]), shape, dtype, 1000)
    e = ember.from_numpy(v)
    want = np.ascontiguousarray(v.transpose(perm))
    before = ember.get_num_threads()
    try:
        for threads in (1, 2):
            ember.set_num_threads(threads)
            got = e.permute(*perm).contiguous()
            assert got.is_contiguous() and tuple(got.shape) == want.shape
            assert np.array_equal(got.numpy(), want)
            # the other direction: a contiguous source into a transposed destination
            dst = ember.zeros(shape, dtype=e.dtype)
            dst.permute(*perm).copy_(ember.from_numpy(want))
            assert np.array_equal(dst.numpy(), v)
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("src_shape,shape", [((1024, 1), (1024, 1024)), ((300, 1), (300, 17)), ((64, 1, 1, 128), (64, 3, 5, 128)),
                                             ((5, 1, 1), (5, 40, 33)), ((1,), (2049,))])
def test_broadcast_copy_fills(src_shape, shape, dtype):
    """expand(...).contiguous() and copy_ of a broadcast source: runs whose source stride is 0 are
    fills (never the transposed blocks), with and without a dtype conversion, on 1 and 2 threads:
    numpy's broadcast values exactly."""
    import numpy as np

    v = _copy_test_values(np.random.default_rng(sum(shape)), src_shape, dtype, 100)
    want = np.broadcast_to(v, shape)
    e = ember.from_numpy(v)
    before = ember.get_num_threads()
    try:
        for threads in (1, 2):
            ember.set_num_threads(threads)
            got = e.expand(*shape).contiguous()
            assert got.is_contiguous() and np.array_equal(got.numpy(), want)
            dst = ember.zeros(shape[::-1], dtype=e.dtype).t() if len(shape) == 2 else ember.zeros(shape, dtype=e.dtype)
            dst.copy_(e)  # broadcast by copy_, into a transposed destination for 2-d shapes
            assert np.array_equal(dst.numpy(), want)
            if dtype != "complex128":
                conv = e.expand(*shape).to(ember.float64)
                assert np.array_equal(conv.numpy(), want.astype(np.float64))
    finally:
        ember.set_num_threads(before)


def test_transposed_copy_of_bool_bytes_other_than_0_and_1():
    """A bool view of bytes 0..255 copied through the transposed blocks stays a valid bool tensor
    with the same truth values (bytes move as bits, never loaded as C++ bool)."""
    import numpy as np

    raw = np.random.default_rng(3).integers(0, 256, size=(64, 4096)).astype(np.uint8)
    b = ember.from_numpy(raw).view(ember.bool)
    got = b.t().contiguous()
    assert np.array_equal(got.to(ember.uint8).numpy() != 0, raw.T != 0)
    assert np.array_equal(got.numpy(), raw.T != 0)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "float16", "float32", "int64", "float64", "complex128"])
@pytest.mark.parametrize("shape,dims", [((3, 97), (1,)), ((2, 5, 300), (-1,)), ((4, 33, 65), (0, 2)),
                                        ((70001,), (0,)), ((31,), (0,)), ((6, 64), (0, 1))])
def test_flip_last_dim_vector_path(shape, dims, dtype):
    """flip along the last dim copies rows backwards 32 bytes per permute (cpu::reverse_run) with
    scalar tails: numpy's flip element for element, for 1- to 16-byte elements, on 1 and 2 threads."""
    import numpy as np

    v = _copy_test_values(np.random.default_rng(sum(shape)), shape, dtype, 100)
    e = ember.from_numpy(v)
    want = np.flip(v, axis=dims)
    before = ember.get_num_threads()
    try:
        for threads in (1, 2):
            ember.set_num_threads(threads)
            assert np.array_equal(ember.flip(e, dims).numpy(), want)
            if len(shape) == 2:  # a strided source row: the element loop
                assert np.array_equal(e.t().flip(dims).numpy(), np.flip(v.T, axis=dims))
    finally:
        ember.set_num_threads(before)


# Ops whose results torch always puts in new memory, at arguments where a view of the input would
# have the same values (repeat(1, 1), pixel_shuffle by 1, diff of order 0): writing to the result
# must leave the input alone. Gradients and node names as torch's for repeat/tile.
_FRESH = {
    "repeat": lambda lib, x: x.repeat(1, 1), "repeat_lead": lambda lib, x: x.repeat(1, 1, 1),
    "tile": lambda lib, x: x.tile(1), "tile_more": lambda lib, x: x.tile((2, 1)),
    "pixel_shuffle": lambda lib, x: lib.nn.functional.pixel_shuffle(x.reshape(1, 1, 2, 3), 1),
    "pixel_unshuffle": lambda lib, x: lib.nn.functional.pixel_unshuffle(x.reshape(1, 1, 2, 3), 1),
    "pixel_shuffle_1x1": lambda lib, x: lib.nn.functional.pixel_shuffle(x.reshape(1, 4, 1, 1)[:, :4], 2),
    "diff0": lambda lib, x: lib.diff(x, n=0), "cat1": lambda lib, x: lib.cat([x]),
    "stack1": lambda lib, x: lib.stack([x])[0], "roll0": lambda lib, x: x.roll(0, 0),
    "repeat_interleave1": lambda lib, x: x.repeat_interleave(1, dim=0),
}


@pytest.mark.parametrize("name", sorted(_FRESH))
def test_results_in_new_memory_as_torch(name):
    import torch
    f = _FRESH[name]
    for lib in (torch, ember):
        x = lib.arange(6.0).reshape(2, 3) if name != "pixel_shuffle_1x1" else lib.arange(4.0)
        before = x.clone()
        y = f(lib, x)
        y.reshape(-1)[0] = 77.0
        assert lib.equal(x, before), f"{lib.__name__}: writing to {name}'s result changed its input"


@pytest.mark.parametrize("reps", [(1, 1), (2, 3), (2, 1, 1), (1, 0), (3,)])
def test_repeat_gradient_and_node_as_torch(reps):
    import torch
    x0 = torch.randn(2, 3, dtype=torch.float64)
    if len(reps) < 2:
        x0 = x0[0]
    xt, xe = x0.clone().requires_grad_(), ember.from_numpy(x0.numpy().copy()).requires_grad_()
    yt, ye = xt.repeat(*reps), xe.repeat(*reps)
    assert ye.grad_fn.name() == yt.grad_fn.name() == "RepeatBackward0"
    assert tuple(ye.shape) == tuple(yt.shape)
    g = torch.randn(yt.shape, dtype=torch.float64)
    yt.backward(g)
    ye.backward(ember.from_numpy(g.numpy().copy()))
    assert ember.allclose(xe.grad, ember.from_numpy(xt.grad.numpy().copy()))
    ye2 = xe.detach().requires_grad_().repeat(*reps)
    ye2.mul_(2)  # an in-place op on the result: a plain tensor, not a view
    assert ember.autograd.gradcheck(lambda a: a.repeat(*reps), (xe.detach().requires_grad_(),))
    assert ember.autograd.gradgradcheck(lambda a: a.repeat(*reps), (xe.detach().requires_grad_(),))


_ALIASING = {  # result -> (torch's _is_view(), whether it shares the input's memory)
    "einsum_identity": lambda lib, x, w, i, y: lib.einsum("ij->ij", x),
    "einsum_transpose": lambda lib, x, w, i, y: lib.einsum("ij->ji", x),
    "embedding": lambda lib, x, w, i, y: lib.nn.functional.embedding(i, w),
    "embedding_flat": lambda lib, x, w, i, y: lib.nn.functional.embedding(i[0], w),
    "cross_entropy_none": lambda lib, x, w, i, y: lib.nn.functional.cross_entropy(x, y, reduction="none"),
    "nll_loss_none": lambda lib, x, w, i, y: lib.nn.functional.nll_loss(x, y, reduction="none"),
    # (N, C, H, W): fresh in torch too (its 3-d and 5-d forms come back as views of a 4-d loss)
    "cross_entropy_none_2d": lambda lib, x, w, i, y: lib.nn.functional.cross_entropy(
        x.reshape(1, 3, 2, 2), lib.tensor([[[0, 2], [1, 1]]]), reduction="none"),
}


@pytest.mark.parametrize("name", sorted(_ALIASING))
def test_view_or_fresh_result_as_torch(name):
    """A result is a view exactly where torch's is (einsum passing an operand through: a view of it,
    never the operand object itself; embedding and per-element losses: fresh tensors, no _base), and
    in-place ops on the fresh ones record the op's own history."""
    import torch
    got = {}
    for lib in (torch, ember):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        w = lib.arange(15.0).reshape(5, 3).requires_grad_()
        i, y = lib.tensor([[1, 2], [3, 4]]), lib.tensor([0, 3, 1])
        r = _ALIASING[name](lib, x, w, i, y)
        got[lib.__name__] = (r._is_view(), r is x, r._base is x, tuple(r.shape))
        if not r._is_view():
            r.mul_(2)  # a fresh result takes in-place ops as a plain tensor
            assert r.grad_fn.name() == "MulBackward0"
            r.sum().backward()
    assert got["ember"] == got["torch"]
