"""torch.func's transforms: vmap, grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian.

vmap opens a level and wraps its inputs in BatchedTensors (batched.py, Note [vmap dispatch]).
The autograd transforms work on physical tensors (Note [Transforms under vmap]).
"""
import functools

import ember
from ember import _C
from ember._functorch import batched as _b
from ember._functorch.batched import BatchedTensor
from ember._functorch.pytree import broadcast_prefix, spec_str, tree_flatten, tree_unflatten

Tensor = _C.Tensor
_prof = _C._profiler
_installed = [False]


def _install():
    if _installed[0]:
        return
    _installed[0] = True
    _prof._set_function_mode_handler(_b._handle, BatchedTensor)
    rnd = []
    names = ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
             "multinomial", "normal", "poisson", "_nn_dropout", "_nn_alpha_dropout", "_nn_feature_dropout",
             "_nn_feature_alpha_dropout", "_standard_gamma", "_sample_dirichlet", "binomial", "rrelu", "rrelu_")
    for n in names:
        f = _C.__dict__.get(n)
        if f is not None and type(f) in _b._NB_TYPES:
            rnd.append((n, f))
    for n in ("uniform_", "normal_", "bernoulli_", "bernoulli", "random_", "exponential_", "geometric_", "cauchy_",
              "log_normal_", "multinomial"):
        f = Tensor.__dict__.get(n)
        if f is not None and type(f) in _b._NB_TYPES:
            rnd.append((n, f))
    _b.register_random(rnd)
    _prof._set_function_mode_always([f for _, f in rnd])


def _name(func):
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


# ---------------------------------------------------------------- vmap
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizing map: func over a dimension of its inputs, with batching rules (Note [vmap dispatch])."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _install()
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                             f"or a (potentially nested) tuple matching the structure of inputs, got: "
                             f"{type(in_dims)}.")
        if len(args) == 0:
            raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                             "are trying to vmap over a function with no inputs. The latter is unsupported.")
        flat, spec = tree_flatten(args)

        def struct_error():
            return ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                              f"with the structure of `inputs`. in_dims has structure "
                              f"{spec_str(tree_flatten(in_dims)[1])} but inputs has structure {spec_str(spec)}.")

        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise struct_error()
        dims = broadcast_prefix(in_dims, spec, struct_error)
        sizes = []
        for d, a in zip(dims, flat):
            if d is None:
                continue
            if not isinstance(d, int) or isinstance(d, bool):
                raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                                 "input but in_dim must be either an integer dimension or None.")
            if not (isinstance(a, Tensor) or type(a) is BatchedTensor):
                raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                                 f"input but the input is of type {type(a)}. We cannot vmap over non-Tensor "
                                 "arguments, please use None as the respective in_dim")
            n = a.dim()
            if not -n <= d < n:
                raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                                 f"input, but that input is a Tensor of dimensionality {n} so expected in_dim to "
                                 f"satisfy -{n} <= in_dim < {n}.")
            sizes.append(a.shape[d])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        B = sizes[0]
        if chunk_size is None or chunk_size >= B:
            return _vmap_level(func, flat, spec, dims, B, kwargs, out_dims, randomness)
        # chunks: each a vmap of its own, outputs concatenated along out_dims
        results, out_spec = [], None
        for start in range(0, B, chunk_size):
            n = min(chunk_size, B - start)
            cflat = [a if d is None else a.narrow(d, start, n) for d, a in zip(dims, flat)]
            out = _vmap_level(func, cflat, spec, dims, n, kwargs, out_dims, randomness)
            leaves, out_spec = tree_flatten(out)
            results.append(leaves)
        ods = _out_dims_list(func, out_dims, out_spec, len(results[0]))
        cat = []
        for j, od in enumerate(ods):
            col = [r[j] for r in results]
            cat.append(col[0] if od is None else ember.cat(col, od))
        return tree_unflatten(cat, out_spec)

    return wrapped


def _out_dims_list(func, out_dims, out_spec, n):
    def err():
        return ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                          f"the structure of `outputs`. out_dims has structure {spec_str(tree_flatten(out_dims)[1])} "
                          f"but outputs has structure {spec_str(out_spec)}.")

    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * n
    if not isinstance(out_dims, (tuple, list, dict)):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")
    if out_spec[0] == "leaf" and isinstance(out_dims, tuple) and len(out_dims) == 1:
        return list(out_dims)
    return broadcast_prefix(out_dims, out_spec, err)


def _vmap_level(func, flat, spec, dims, B, kwargs, out_dims, randomness):
    _b._counter[0] += 1
    level = _b._counter[0]
    _b._levels.append([level, B, randomness])
    if len(_b._levels) == 1:
        _prof._set_function_mode(True)
    try:
        wrapped = [a if d is None else BatchedTensor(a, d + a.dim() if d < 0 else d, level) for d, a in zip(dims, flat)]
        out = func(*tree_unflatten(wrapped, spec), **kwargs)
        leaves, out_spec = tree_flatten(out)
        ods = _out_dims_list(func, out_dims, out_spec, len(leaves))
        res = []
        for x, od in zip(leaves, ods):
            if od is None:
                if type(x) is BatchedTensor and x._level == level:
                    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                                     "out_dim is None")
                res.append(x)
                continue
            if not (isinstance(x, Tensor) or type(x) is BatchedTensor):
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                                 f"{type(x)}. Did you mean to set out_dims= to None for output?")
            if type(x) is BatchedTensor and x._level == level:
                v = x._value
                n = v.dim()
                if not -n <= od < n:
                    raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                                     f"{od})")
                res.append(v if x._bdim == (od % n) else v.movedim(x._bdim, od))
            else:  # not batched at this level: every entry is the same
                n = x.dim() + 1
                if not -n <= od < n:
                    raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                                     f"{od})")
                od = od % n
                shape = list(x.shape)
                shape.insert(od, B)
                res.append(x.unsqueeze(od).expand(*shape))
        return tree_unflatten(res, out_spec)
    finally:
        _b._levels.pop()
        if not _b._levels:
            _prof._set_function_mode(False)


# ---------------------------------------------------------------- physical views across levels
# Note [Transforms under vmap]: grad, vjp and jvp may run inside vmap. Their inputs are then
# BatchedTensors (or plain tensors used by every batch entry). The transform brings each input to
# one physical tensor with a leading dimension for every open vmap level (expanding inputs that a
# level does not batch), differentiates the physical computation, and wraps the results back.
# The entries of a vmapped computation do not interact, so the gradient of the sum of a batched
# output is, slice by slice, each entry's own gradient: per-sample gradients, not their sum.
def _open_levels():
    return [(lv[0], lv[1]) for lv in _b._levels]


def _to_phys(x, levels):
    """x as a plain tensor with a leading dim per level of `levels` (ascending), then its logical dims."""
    if not levels:
        if type(x) is BatchedTensor:
            raise RuntimeError("vmap: a BatchedTensor of a closed level escaped its vmap")
        return x
    top, size = levels[-1]
    if type(x) is BatchedTensor and x._level == top:
        inner = x._value if x._bdim == 0 else x._value.movedim(x._bdim, 0)
        return _to_phys(inner, levels[:-1])
    p = _to_phys(x, levels[:-1])
    k = len(levels) - 1
    shape = list(p.shape)
    shape.insert(k, size)
    return p.unsqueeze(k).expand(*shape)


def _own_levels(x):
    out = []
    while type(x) is BatchedTensor:
        out.append(x._level)
        x = x._value
    return sorted(out)


def _from_phys(p, levels):
    x = p
    for lv, _ in levels:
        x = BatchedTensor(x, 0, lv)
    return x


def _is_tensor(x):
    return isinstance(x, Tensor) or type(x) is BatchedTensor


_grad_depth = [0]
_jvp_depth = [0]  # open jvp calls: transforms inside keep their graphs (forward-over-reverse)


def _prepare(flat, levels):
    phys = []
    for x in flat:
        if not _is_tensor(x):
            raise RuntimeError(f"Expected input to be a Tensor (or a pytree of Tensors), got {type(x)}")
        p = _to_phys(x, levels)
        if p.requires_grad or _jvp_depth[0]:  # a fresh node; under jvp it keeps the primal's tangent
            p = p.view_as(p)
            phys.append(p if p.requires_grad else p.requires_grad_())
        else:
            phys.append(p.detach().requires_grad_())
    return phys


def _argnums_select(args, argnums, who):
    if isinstance(argnums, int):
        if not -len(args) <= argnums < len(args):
            raise RuntimeError(f"Got argnums={argnums}, but only {len(args)} positional inputs")
        return args[argnums]
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError(f"{who}: argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"{who}: argnums must be unique, got {argnums}")
        return tuple(_argnums_select(args, a, who) for a in argnums)
    raise RuntimeError(f"{who}: argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _argnums_replace(args, argnums, values):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = values
    else:
        for a, v in zip(argnums, values):
            args[a] = v
    return tuple(args)


def _detach_out(x, keep_graph):
    if keep_graph or not _is_tensor(x):
        return x
    return x.detach()


def _tree_detach(tree, keep_graph):
    flat, spec = tree_flatten(tree)
    return tree_unflatten([_detach_out(x, keep_graph) for x in flat], spec)


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of func w.r.t. args[argnums], func's value); func returns a scalar (or (scalar, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        levels = _open_levels()
        diff = _argnums_select(args, argnums, "grad_and_value(f)(*args)")
        flat, spec = tree_flatten(diff)
        outer = _grad_depth[0] > 0 or _jvp_depth[0] > 0
        _grad_depth[0] += 1
        try:
            with ember.enable_grad():
                phys = _prepare(flat, levels)
                keep = outer or any(_to_phys(x, levels).requires_grad for x in flat)
                new_args = _argnums_replace(args, argnums, tree_unflatten([_from_phys(p, levels) for p in phys],
                                                                          spec))
                out = func(*new_args, **kwargs)
                aux = None
                if has_aux:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                           "(output, aux) if has_aux is True")
                    out, aux = out
                if not _is_tensor(out):
                    raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                       f"{type(out)}")
                if out.dim() != 0:
                    raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                       f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                       "APIs instead?")
                po = _to_phys(out, [lv for lv in levels if lv[0] in _own_levels(out)])
                if po.requires_grad:
                    gs = ember.autograd.grad(po.sum(), phys, create_graph=keep, allow_unused=True)
                else:
                    gs = [None] * len(phys)
                gs = [ember.zeros_like(p) if g is None else g for g, p in zip(gs, phys)]
                grads = tree_unflatten([_from_phys(g, levels) for g in gs], spec)
                return grads, (_detach_out(out, keep) if aux is None else
                               (_detach_out(out, keep), _tree_detach(aux, keep)))
        finally:
            _grad_depth[0] -= 1

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Gradient of a scalar function w.r.t. args[argnums] (torch.func.grad)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = gv(*args, **kwargs)
        return (g, v[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the cotangents of the primals."""
    levels = _open_levels()
    flat, spec = tree_flatten(primals)
    outer = _grad_depth[0] > 0 or _jvp_depth[0] > 0
    _grad_depth[0] += 1
    try:
        with ember.enable_grad():
            phys = _prepare(flat, levels)
            keep = outer or any(_to_phys(x, levels).requires_grad for x in flat)
            out = func(*tree_unflatten([_from_phys(p, levels) for p in phys], spec))
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                                       "has_aux is True")
                out, aux = out
    finally:
        _grad_depth[0] -= 1
    oflat, ospec = tree_flatten(out)
    for o in oflat:
        if not _is_tensor(o):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output and "
                               f"returns a Tensor or a pytree of Tensors, got {type(o)}")
    pouts = [_to_phys(o, levels) for o in oflat]
    my_levels = {lv for lv, _ in levels}

    def vjp_fn(*cotangents, retain_graph=True, create_graph=None):
        cts = cotangents[0] if len(cotangents) == 1 and ospec[0] != "leaf" else \
            (cotangents[0] if len(cotangents) == 1 else cotangents)
        cflat, cspec = tree_flatten(cts)
        if cspec != ospec and not (ospec[0] == "leaf" and len(cflat) == 1):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec_str(cspec)}, primal output: "
                               f"{spec_str(ospec)}")
        # a level opened after vjp (jacrev's vmap over basis vectors): one backward per entry
        new = max((_b._level_of(c) for c in cflat if type(c) is BatchedTensor), default=0)
        if new and new not in my_levels:
            return _b._fallback("vjp_fn", lambda *c: vjp_fn(*c, retain_graph=retain_graph,
                                                             create_graph=create_graph),
                                (tree_unflatten(cflat, cspec),), {}, new)
        for c, o in zip(cflat, oflat):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {tuple(c.shape)} and output[0] "
                                   f"has a shape of {tuple(o.shape)}.")
        pcs = [_to_phys(c, levels) for c in cflat]
        cg = keep or bool(create_graph) or any(p.requires_grad for p in pcs)
        pairs = [(o, c) for o, c in zip(pouts, pcs) if o.requires_grad]
        if pairs:
            gs = ember.autograd.grad([o for o, _ in pairs], phys, [c for _, c in pairs], retain_graph=True,
                                     create_graph=cg, allow_unused=True)
        else:
            gs = [None] * len(phys)
        gs = [ember.zeros_like(p) if g is None else g for g, p in zip(gs, phys)]
        return tree_unflatten([_from_phys(g, levels) for g in gs], spec)

    out_ret = _tree_detach(out, keep)
    if has_aux:
        return out_ret, vjp_fn, _tree_detach(aux, keep)
    return out_ret, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the directional derivative along tangents) by forward-mode AD."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple.")
    pflat, pspec = tree_flatten(primals)
    tflat, tspec = tree_flatten(tangents)
    if pspec != tspec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
                           f"Got primals with structure {spec_str(pspec)} and tangents with structure "
                           f"{spec_str(tspec)}")
    for p, t in zip(pflat, tflat):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape, "
                               f"got {tuple(p.shape)} and {tuple(t.shape)}")
    levels = _open_levels()
    _jvp_depth[0] += 1
    try:
        return _jvp(func, pflat, pspec, tflat, levels, has_aux)
    finally:
        _jvp_depth[0] -= 1


def _jvp(func, pflat, pspec, tflat, levels, has_aux):
    fwd = ember.autograd.forward_ad
    keep = _grad_depth[0] > 0 or _jvp_depth[0] > 1 or any(_is_tensor(p) and p.requires_grad for p in pflat)
    with fwd.dual_level():
        duals = []
        for p, t in zip(pflat, tflat):
            pp, tp = _to_phys(p, levels).contiguous(), _to_phys(t, levels).contiguous()
            duals.append(_from_phys(fwd.make_dual(pp, tp.to(pp.dtype)), levels))
        out = func(*tree_unflatten(duals, pspec))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out, aux = out
        oflat, ospec = tree_flatten(out)
        po, to = [], []
        for o in oflat:
            if not _is_tensor(o):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            own = [lv for lv in levels if lv[0] in _own_levels(o)]
            ph = _to_phys(o, own)
            primal, tangent = fwd.unpack_dual(ph)
            if tangent is None:
                tangent = ember.zeros_like(primal)
            if not keep:
                primal, tangent = primal.detach(), tangent.detach()
            po.append(_from_phys(primal, own))
            to.append(_from_phys(tangent, own))
        if aux is not None:
            aflat, aspec = tree_flatten(aux)
            aux = tree_unflatten([fwd.unpack_dual(_to_phys(a, [lv for lv in levels if lv[0] in _own_levels(a)]))[0]
                                  if _is_tensor(a) else a for a in aflat], aspec)
            aux = tree_unflatten([_from_phys(a, [lv for lv in levels if lv[0] in _own_levels(x)]) if _is_tensor(a)
                                  else a for a, x in zip(tree_flatten(aux)[0], aflat)], aspec)
    res = (tree_unflatten(po, ospec), tree_unflatten(to, ospec))
    return res + (aux,) if has_aux else res


# ---------------------------------------------------------------- Jacobians
def _basis(flat_outs):
    """Rows of the identity over all outputs' elements, split per output (shape [N, *out.shape])."""
    sizes = [o.numel() for o in flat_outs]
    n = sum(sizes)
    ref = flat_outs[0]
    eye = ember.eye(n, dtype=ref.dtype)
    parts, start = [], 0
    for o, s in zip(flat_outs, sizes):
        parts.append(eye[:, start:start + s].reshape((n,) + tuple(o.shape)))
        start += s
    return parts, sizes


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """Jacobian by reverse mode: vjp once, then vmap of the vjp over the basis of the outputs."""
    @functools.wraps(func)
    def wrapper(*args):
        diff = _argnums_select(args, argnums, "jacrev")

        def f_diff(*d):
            return func(*_argnums_replace(args, argnums, d if isinstance(argnums, tuple) else d[0]))

        dflat = diff if isinstance(argnums, tuple) else (diff,)
        r = vjp(f_diff, *dflat, has_aux=has_aux)
        out, vjp_fn = r[0], r[1]
        oflat, ospec = tree_flatten(out)
        basis, sizes = _basis(oflat)
        cts = tree_unflatten(basis, ospec)
        rows = vmap(vjp_fn, chunk_size=chunk_size)(cts)  # tuple over inputs, each [N, *in.shape]
        # jac[out][in]: [*out.shape, *in.shape]
        jac_per_out = []
        start = 0
        for o, s in zip(oflat, sizes):
            per_in = []
            for row in tree_flatten(rows)[0]:
                blk = row[start:start + s]
                per_in.append(blk.reshape(tuple(o.shape) + tuple(row.shape[1:])))
            start += s
            rows_spec = tree_flatten(rows)[1]
            tree_in = tree_unflatten(per_in, rows_spec)
            jac_per_out.append(tree_in if isinstance(argnums, tuple) else tree_in[0])
        jac = tree_unflatten(jac_per_out, ospec)
        return (jac, r[2]) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Jacobian by forward mode: vmap of jvp over the basis of the inputs."""
    @functools.wraps(func)
    def wrapper(*args):
        diff = _argnums_select(args, argnums, "jacfwd")
        dflat = diff if isinstance(argnums, tuple) else (diff,)
        flat, spec = tree_flatten(dflat)
        basis, sizes = _basis(flat)

        def f_diff(*d):
            return func(*_argnums_replace(args, argnums, d if isinstance(argnums, tuple) else d[0]))

        def push(*ts):
            return jvp(f_diff, dflat, tree_unflatten(list(ts), spec), has_aux=has_aux)[1]

        tans = vmap(push, out_dims=-1, randomness=randomness)(*basis)
        res = f_diff(*dflat)
        out = res[0] if has_aux else res
        oflat, ospec = tree_flatten(out)
        tflat = tree_flatten(tans)[0]
        jac_per_out = []
        for o, t in zip(oflat, tflat):  # t: [*out.shape, N]
            per_in, start = [], 0
            for x, s in zip(flat, sizes):
                per_in.append(t[..., start:start + s].reshape(tuple(o.shape) + tuple(x.shape)))
                start += s
            tree_in = tree_unflatten(per_in, spec)
            jac_per_out.append(tree_in if isinstance(argnums, tuple) else tree_in[0])
        jac = tree_unflatten(jac_per_out, ospec)
        return (jac, res[1]) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """Second derivatives: jacfwd of jacrev."""
    return jacfwd(jacrev(func, argnums), argnums)
