"""Op table rows for indexing, assembly and shape ops (ops/index.cpp, ops/shape.cpp).

Index tensors are built inside `call` (lib.tensor(...)), so every tensor in a sample is a
differentiable input for the generic gradient tests.
"""
from op_db import ALL, COMPLEX, FLOATS, NUMERIC, OpInfo, Sample, make_tensor

ALLC = ALL + COMPLEX
NUMC = NUMERIC + COMPLEX


def _s(*shapes, seed=1):
    """Samples factory: one Sample per shape tuple (or tuple of shapes for several inputs)."""
    def f(dt):
        out = []
        for i, sh in enumerate(shapes):
            many = isinstance(sh[0], tuple) if sh else False
            args = [make_tensor(s, dt, seed + i * 7 + j) for j, s in enumerate(sh if many else [sh])]
            out.append(Sample(f"s{i}", *args))
        return out
    return f


def _noncontig(dt):
    return [Sample("transposed", make_tensor((5, 4), dt, 3).t())]


def _op(name, call, shapes, dtypes=ALLC, grad=True, extra=None, **kw):
    """Complex values are compared; gradients in float64 and, where the row has complex dtypes,
    complex128 too (their backward needs complex scatter_add/index_add)."""
    if grad and "complex128" in dtypes and "grad_dtypes" not in kw:
        kw["grad_dtypes"] = ("float64", "complex128")

    def samples(dt):
        s = _s(*shapes)(dt)
        if extra:
            s += extra(dt)
        return s
    return OpInfo(name, call=call, samples=samples, dtypes=dtypes, grad=grad, method=False, **kw)


def L(lib, v):
    return lib.tensor(v, dtype=lib.int64)


OPS = [
    _op("cat", lambda lib, a, b: lib.cat([a, b], 1), [((2, 3), (2, 4)), ((3, 2), (3, 0))]),
    _op("cat_dim0_empty_legacy", lambda lib, a, b: lib.cat([a, b.reshape(-1)[:0], a]), [((2, 3), (1,))]),
    _op("cat_promote", lambda lib, a: lib.cat([a, a.to(lib.float64)], 0), [((2, 3),)]),
    _op("stack", lambda lib, a, b: lib.stack([a, b], -1), [((2, 3), (2, 3))]),
    _op("hstack", lambda lib, a, b: lib.hstack([a, b]), [((3,), (2,)), ((2, 3), (2, 1))]),
    _op("vstack", lambda lib, a, b: lib.vstack([a, b]), [((3,), (3,)), ((2, 3), (1, 3))]),
    _op("dstack", lambda lib, a, b: lib.dstack([a, b]), [((3,), (3,)), ((2, 3), (2, 3))]),
    _op("split_int", lambda lib, a: lib.cat(lib.split(a, 2, 1), 1) * 1, [((3, 5),)]),
    _op("split_sizes", lambda lib, a: a.split([1, 4], 1)[1], [((3, 5),)]),
    _op("chunk", lambda lib, a: a.chunk(3, 0)[-1], [((7, 2),)]),
    _op("tensor_split", lambda lib, a: lib.tensor_split(a, 3, 1)[1], [((2, 7),)]),
    _op("tensor_split_idx", lambda lib, a: lib.tensor_split(a, [1, 4], 1)[2], [((2, 7),)]),
    # as_strided reads the storage: on a contiguous copy, as other layouts are rebuilt differently
    # (to_ember, the fuzzer) and their storage sizes differ.
    _op("as_strided", lambda lib, a: lib.as_strided(a.contiguous(), (3, 2), (1, 2), 1), [((3, 4),)]),
    _op("as_strided_overlap", lambda lib, a: a.contiguous().as_strided((3, 3), (1, 1)), [((3, 4),)]),
    _op("unfold", lambda lib, a: a.unfold(1, 2, 1), [((3, 4),), ((2, 3, 4),)], extra=_noncontig),
    _op("unfold_0d", lambda lib, a: a.unfold(0, 1, 1), [((),)]),
    _op("unbind", lambda lib, a: lib.unbind(a, 1)[2], [((3, 4),)]),
    _op("flip", lambda lib, a: lib.flip(a, (0, -1)), [((3, 4),), ((2, 3, 4),)], extra=_noncontig),
    _op("flip_0d", lambda lib, a: lib.flip(a, (0,)), [((),)]),
    _op("fliplr", lambda lib, a: lib.fliplr(a), [((3, 4),)]),
    _op("flipud", lambda lib, a: lib.flipud(a), [((3, 4),)]),
    _op("roll", lambda lib, a: lib.roll(a, (1, -2), (0, 1)), [((3, 4),)], extra=_noncontig),
    _op("roll_flat", lambda lib, a: lib.roll(a, 5), [((3, 4),)]),
    _op("repeat", lambda lib, a: a.repeat(2, 1, 3), [((3, 4),), ((4,),)]),
    _op("tile", lambda lib, a: lib.tile(a, (2,)), [((3, 4),)]),
    _op("repeat_interleave", lambda lib, a: lib.repeat_interleave(a, 2, dim=1), [((3, 4),)]),
    _op("repeat_interleave_t", lambda lib, a: a.repeat_interleave(L(lib, [1, 0, 3]), dim=0), [((3, 4),)]),
    _op("repeat_interleave_output_size",
        lambda lib, a: a.repeat_interleave(L(lib, [1, 0, 3]), dim=0, output_size=4), [((3, 4),)]),
    _op("repeat_interleave_int_output_size", lambda lib, a: lib.repeat_interleave(a, 2, dim=1, output_size=6),
        [((2, 3),)]),
    _op("repeat_interleave_flat", lambda lib, a: lib.repeat_interleave(a, 2), [((3, 2),)]),
    _op("broadcast_tensors", lambda lib, a, b: sum(lib.broadcast_tensors(a, b)), [((3, 1), (4,))]),
    _op("tril", lambda lib, a: lib.tril(a), [((4, 5),), ((2, 3, 3),)], extra=_noncontig),
    _op("tril_k", lambda lib, a: lib.tril(a, -1), [((4, 5),)]),
    _op("triu", lambda lib, a: lib.triu(a, 1), [((4, 5),), ((2, 3, 3),)], extra=_noncontig),
    _op("diag_vec", lambda lib, a: lib.diag(a, 1), [((4,),)]),
    _op("diag_mat", lambda lib, a: lib.diag(a, -1), [((4, 5),)], extra=_noncontig),
    _op("diagonal", lambda lib, a: lib.diagonal(a, 1, 0, 2) * 1, [((3, 2, 4),)]),
    _op("diag_embed", lambda lib, a: lib.diag_embed(a, -1, 0, 2), [((3, 2),)]),
    _op("trace", lambda lib, a: lib.trace(a), [((4, 3),)], dtypes=NUMC),
    _op("outer", lambda lib, a, b: lib.outer(a, b), [((3,), (4,))], dtypes=NUMC),
    _op("kron", lambda lib, a, b: lib.kron(a, b), [((2, 3), (3, 2)), ((2,), (2, 2))], dtypes=NUMC),
    _op("rot90", lambda lib, a: lib.rot90(a, 1, (0, 1)), [((3, 4),)]),
    _op("rot90_k3", lambda lib, a: lib.rot90(a, -1, (1, 2)), [((2, 3, 4),)]),
    _op("narrow_copy", lambda lib, a: lib.narrow_copy(a, 1, 1, 2), [((3, 4),)]),
    _op("cartesian_prod", lambda lib, a, b: lib.cartesian_prod(a, b), [((3,), (2,))]),
    _op("combinations", lambda lib, a: lib.combinations(a, 2), [((4,),)]),
    _op("combinations_rep", lambda lib, a: lib.combinations(a, 3, with_replacement=True), [((3,),)]),
    _op("meshgrid_ij", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")[1] * 2 + lib.meshgrid(a, b)[0], [((3,), (2,))]),
    _op("meshgrid_xy", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[0] * 2 + lib.meshgrid(a, b, indexing="xy")[1], [((3,), (2,))]),
    _op("masked_fill", lambda lib, a: lib.masked_fill(a, L(lib, [1, 0, 1, 0]).bool(), 0), [((3, 4),)]),
    _op("masked_fill_broadcast", lambda lib, a: a.masked_fill(L(lib, [[1], [0]]).bool(), 1), [((3,),)]),
    _op("masked_fill_tensor", lambda lib, a, v: lib.masked_fill(a, L(lib, [1, 0, 1]).bool(), v.sum()),
        [((2, 3), (2,))], dtypes=FLOATS),
    _op("index_select", lambda lib, a: lib.index_select(a, 1, L(lib, [3, 0, 3, 1])), [((3, 4),)],
        extra=_noncontig),
    _op("gather", lambda lib, a: lib.gather(a, 1, L(lib, [[0, 1, 1], [3, 0, 2]])), [((2, 4),)]),
    _op("gather_dim0", lambda lib, a: a.gather(0, L(lib, [[2, 1], [0, 0]])), [((3, 4),)]),
    _op("scatter", lambda lib, a, s: lib.scatter(a, 1, L(lib, [[0, 2], [1, 3]]), s), [((2, 4), (2, 2))]),
    _op("scatter_value", lambda lib, a: a.scatter(0, L(lib, [[1, 0, 2]]), 2), [((3, 3),)]),
    _op("scatter_add", lambda lib, a, s: lib.scatter_add(a, 1, L(lib, [[0, 0, 3], [1, 1, 1]]), s),
        [((2, 4), (2, 3))], dtypes=NUMC),
    _op("scatter_reduce_sum", lambda lib, a, s: a.scatter_reduce(0, L(lib, [0, 1, 0, 1, 2]), s, "sum"),
        [((3,), (5,))], dtypes=NUMC, grad_dtypes=("float64",)),  # torch: no complex autograd here
    _op("scatter_reduce_mean_noself",
        lambda lib, a, s: a.scatter_reduce(0, L(lib, [0, 1, 0, 1, 2]), s, "mean", include_self=False),
        [((4,), (5,))], dtypes=FLOATS + COMPLEX, grad_dtypes=("float64",)),
    _op("scatter_reduce_mean", lambda lib, a, s: a.scatter_reduce(1, L(lib, [[0, 2, 0], [1, 1, 3]]), s, "mean"),
        [((2, 4), (2, 3))], dtypes=FLOATS + COMPLEX, grad_dtypes=("float64",)),
    _op("scatter_reduce_amax",
        lambda lib, a, s: a.scatter_reduce(0, L(lib, [0, 1, 0, 1, 2]), s, "amax", include_self=False),
        [((4,), (5,))], dtypes=NUMC, grad_dtypes=("float64",)),  # complex: NotImplementedError as torch
    _op("scatter_reduce_amax_self", lambda lib, a, s: a.scatter_reduce(1, L(lib, [[0, 2, 0], [1, 1, 3]]), s, "amax"),
        [((2, 4), (2, 3))], dtypes=NUMERIC),
    _op("scatter_reduce_amin", lambda lib, a, s: a.scatter_reduce(0, L(lib, [0, 1, 0, 1, 2]), s, "amin"),
        [((4,), (5,))], dtypes=NUMC, grad_dtypes=("float64",)),
    _op("scatter_reduce_amin_noself",
        lambda lib, a, s: a.scatter_reduce(0, L(lib, [[0, 2], [2, 2], [0, 1]]), s, "amin", include_self=False),
        [((3, 2), (3, 2))], dtypes=NUMERIC),
    # Complex prod/mean: values only (torch has no reverse-mode derivative for complex scatter_reduce).
    _op("scatter_reduce_prod", lambda lib, a, s: a.scatter_reduce(0, L(lib, [0, 1, 0, 1, 2]), s, "prod"),
        [((4,), (5,))], dtypes=FLOATS + COMPLEX, grad_dtypes=("float64",)),
    _op("scatter_reduce_prod_noself",
        lambda lib, a, s: a.scatter_reduce(1, L(lib, [[0, 2, 0], [1, 1, 3]]), s, "prod", include_self=False),
        [((2, 4), (2, 3))], dtypes=NUMC, grad_dtypes=("float64",)),
    # Lone and repeated zeros in self and src: the prod gradient's special cases.
    _op("scatter_reduce_prod_zeros",
        lambda lib, a, s: (a * L(lib, [0, 1, 1, 0])).scatter_reduce(
            0, L(lib, [0, 1, 1, 2, 2, 3]), s * L(lib, [1, 0, 1, 0, 0, 1]), "prod"),
        [((4,), (6,))], dtypes=["float32", "float64", "complex128"], grad_dtypes=("float64",)),
    _op("scatter_multiply", lambda lib, a, s: a.scatter(1, L(lib, [[0, 2], [1, 1]]), s, reduce="multiply"),
        [((2, 4), (2, 2))], dtypes=NUMC, grad=False),
    _op("scatter_value_add", lambda lib, a: a.scatter(0, L(lib, [[1, 0, 1]]), 2, reduce="add"),
        [((3, 3),)], dtypes=NUMC, grad=False),
    _op("scatter_value_multiply", lambda lib, a: a.scatter(0, L(lib, [[1, 0, 1]]), 2, reduce="multiply"),
        [((3, 3),)], dtypes=NUMC, grad=False),
    _op("index_add", lambda lib, a, s: a.index_add(1, L(lib, [0, 2, 0]), s, alpha=2), [((2, 4), (2, 3))],
        dtypes=NUMC),
    _op("index_copy", lambda lib, a, s: a.index_copy(0, L(lib, [2, 0]), s), [((3, 2), (2, 2))]),
    _op("index_fill", lambda lib, a: a.index_fill(1, L(lib, [0, 2]), -1), [((2, 4),)], dtypes=NUMC),
    _op("index_put", lambda lib, a, v: a.index_put((L(lib, [0, 2]), L(lib, [1, 1])), v), [((3, 4), (2,))]),
    _op("index_put_acc", lambda lib, a, v: a.index_put((L(lib, [0, 0]),), v, accumulate=True),
        [((3, 4), (4,))], dtypes=NUMC),
    _op("take", lambda lib, a: lib.take(a, L(lib, [[0, 5], [-1, 2]])), [((3, 4),)], extra=_noncontig),
    _op("take_along_dim", lambda lib, a: lib.take_along_dim(a, L(lib, [[0], [2], [1]]), 1), [((3, 4),)]),
    _op("take_along_dim_flat", lambda lib, a: lib.take_along_dim(a, L(lib, [0, 7])), [((3, 4),)]),
    _op("put", lambda lib, a, s: a.put(L(lib, [0, 5, 11]), s), [((3, 4), (3,))]),
    _op("nonzero", lambda lib, a: lib.nonzero(a), [((3, 4),), ((),), ((0, 2),)], grad=False),
    _op("nonzero_tuple", lambda lib, a: lib.nonzero(a, as_tuple=True)[1], [((3, 4),)], grad=False),
    _op("where_cond", lambda lib, a: lib.stack(lib.where(a)), [((3, 4),), ((),), ((0, 2),), ((2, 1, 3),)],
        grad=False),
    _op("argwhere", lambda lib, a: lib.argwhere(a), [((2, 3, 2),)], grad=False),
    # The mask compares values, which complex does not support: gradients in float64 only.
    _op("masked_select", lambda lib, a: lib.masked_select(a, a > a.flatten()[0]), [((3, 4),)], dtypes=NUMC,
        grad_dtypes=("float64",)),
    _op("masked_select_bcast", lambda lib, a: a.masked_select(L(lib, [[1], [0], [1]]).bool()), [((4,),)]),
    _op("masked_scatter", lambda lib, a, s: a.masked_scatter(L(lib, [[1, 0, 1], [0, 1, 1]]).bool(), s),
        [((2, 3), (6,))]),
    _op("searchsorted", lambda lib, a: lib.searchsorted(L(lib, [1, 3, 5, 7]).to(a.dtype), a), [((2, 3),)],
        dtypes=NUMC, grad=False),
    _op("searchsorted_right", lambda lib, a: lib.searchsorted(L(lib, [1, 3, 3, 5]), a, right=True), [((5,),)],
        dtypes=["int64"],
        grad=False),
    _op("bucketize", lambda lib, a: lib.bucketize(a, L(lib, [-2, 0, 2]).to(a.dtype), right=True), [((3, 3),)],
        dtypes=NUMC, grad=False),
]
