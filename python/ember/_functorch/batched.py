"""vmap's BatchedTensor, the dispatcher and the batching rules.

Note [vmap dispatch]
--------------------
A BatchedTensor is a plain Python object holding a physical value (an ember Tensor, or for nested
vmap a BatchedTensor of a lower level), the physical dimension that is batched (`bdim`) and the
vmap level it belongs to. Its logical shape is the value's shape without `bdim`.

Every bound op (ember.X, Tensor methods and operator slots, _C._linalg) is called through the
trampoline of python/src/bind_profiler.cpp. While a vmap level is open the profiler state word has
kFunctionMode set, and the trampoline hands a call with a BatchedTensor argument to `_handle` before
nanobind parses the arguments (Note [Function mode]). BatchedTensor methods and operators call
`_handle` directly. `_handle` takes the highest level among the arguments, finds the op family's
rule by the bound name and lets the rule call the real op on the physical values, which carry the
batch as one more dimension: elementwise ops align ranks, dim-taking ops shift `dim`, views prepend
the batch dimension, matmul/linear/einsum add a batch dimension of their own, cat/stack expand
unbatched members. Values of lower levels are BatchedTensors themselves, so the rule's own calls
come back through `_handle` at the next level down.

Ops without a rule take the fallback (`_fallback`): the slow path, one call per batch entry on
`select`ed slices, results stacked. It is correct for any op whose per-sample call is; the ops it
served are counted in `fallback_counts` (the tests check the common families never use it).
"""
import functools

import ember
from ember import _C

Tensor = _C.Tensor
_prof = _C._profiler
_TENSOR_DICT = Tensor.__dict__

# Open vmap levels, innermost last: [level, batch size, randomness].
_levels = []
_counter = [0]
fallback_counts = {}


def _rule_error(msg):
    return RuntimeError(msg)


class BatchedTensor:
    """A logical tensor of one vmap level: `_value` with the batch dimension `_bdim`."""

    __slots__ = ("_value", "_bdim", "_level", "__weakref__")

    def __init__(self, value, bdim, level):
        self._value = value
        self._bdim = bdim
        self._level = level

    # isinstance(x, Tensor) holds, as for torch's BatchedTensor (a Tensor subclass): Python code
    # that checks for a Tensor before calling ops (ember.linalg, nn.Module) accepts it.
    @property
    def __class__(self):
        return Tensor

    # ---- metadata (logical) ----
    @property
    def shape(self):
        s = self._value.shape
        return ember.Size(tuple(s[: self._bdim]) + tuple(s[self._bdim + 1:]))

    def size(self, dim=None):
        s = self.shape
        if dim is None:
            return s
        n = len(s)
        if not -max(n, 1) <= dim < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                             f"but got {dim})")
        return s[dim] if n else 1

    def dim(self):
        return self._value.dim() - 1

    ndimension = dim

    @property
    def ndim(self):
        return self._value.dim() - 1

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def device(self):
        return self._value.device

    @property
    def layout(self):
        return self._value.layout

    @property
    def is_cuda(self):
        return False

    @property
    def requires_grad(self):
        return self._value.requires_grad

    @property
    def is_leaf(self):
        return self._value.is_leaf

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def data(self):
        return BatchedTensor(self._value.data, self._bdim, self._level)

    def is_floating_point(self):
        return self._value.is_floating_point()

    def is_complex(self):
        return self._value.is_complex()

    def element_size(self):
        return self._value.element_size()

    def is_contiguous(self, memory_format=None):
        return True

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n{self._value!r})"

    # ---- data-dependent uses: torch's errors ----
    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other operations.")

    def _control_flow(self, *a):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please shout over at "
                           "https://github.com/pytorch/functorch/issues/257 .")

    __bool__ = __int__ = __float__ = __index__ = __complex__ = _control_flow

    def tolist(self):
        raise RuntimeError("vmap: It looks like you're calling .tolist() on a Tensor; it is data-dependent and "
                           "not supported inside vmap.")

    def numpy(self):
        raise RuntimeError("vmap: .numpy() on a Tensor is not supported inside vmap.")

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    __hash__ = object.__hash__

    # ---- views spelled as properties ----
    @property
    def T(self):
        return self.permute(*reversed(range(self.dim())))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    @property
    def mH(self):
        return self.transpose(-2, -1).conj()

    H = mH

    @property
    def real(self):
        return ember.real(self)

    @property
    def imag(self):
        return ember.imag(self)

    def __getattr__(self, name):
        f = _TENSOR_DICT.get(name)
        if f is None or name.startswith("__"):
            raise AttributeError(f"'BatchedTensor' object has no attribute '{name}'")
        if type(f) in _NB_TYPES:
            return functools.partial(_handle_method, name, f, self)
        if callable(f) or hasattr(f, "__get__"):
            return f.__get__(self, BatchedTensor)
        raise AttributeError(name)


def _handle_method(name, f, self, *args, **kwargs):
    return _handle(name, f, (self,) + args, kwargs)


def _op_dunder(name):
    f = _TENSOR_DICT[name]

    def method(self, *args):
        return _handle(name, f, (self,) + args, {})

    method.__name__ = name
    return method


_NB_TYPES = (type(_C.add), type(_TENSOR_DICT["add"]))

for _n in ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
           "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__",
           "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__ipow__", "__matmul__", "__rmatmul__",
           "__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
           "__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__", "__iand__", "__ior__", "__ixor__",
           "__lshift__", "__rshift__", "__rlshift__", "__rrshift__", "__getitem__", "__setitem__"):
    if _n in _TENSOR_DICT:
        setattr(BatchedTensor, _n, _op_dunder(_n))


# ---------------------------------------------------------------- helpers
def is_batched(x):
    return type(x) is BatchedTensor


def _tensorlike(x):
    return isinstance(x, Tensor) or type(x) is BatchedTensor


def _level_of(x):
    if type(x) is BatchedTensor:
        return x._level
    if type(x) in (list, tuple):
        return max((e._level for e in x if type(e) is BatchedTensor), default=0)
    return 0


def _max_level(args, kwargs):
    m = 0
    for a in args:
        m = max(m, _level_of(a))
    for a in kwargs.values():
        m = max(m, _level_of(a))
    return m


def _at(x, L):
    return type(x) is BatchedTensor and x._level == L


def _front(x):
    """The physical value of a level's BatchedTensor with the batch dimension first."""
    v = x._value
    return v if x._bdim == 0 else v.movedim(x._bdim, 0)


def _batch_size(args, kwargs, L):
    for a in list(args) + list(kwargs.values()):
        if _at(a, L):
            return a._value.shape[a._bdim]
        if type(a) in (list, tuple):
            for e in a:
                if _at(e, L):
                    return e._value.shape[e._bdim]
    for lv in _levels:
        if lv[0] == L:
            return lv[1]
    raise RuntimeError("vmap: no batch size for this level")


def _wrap(out, L, bdim=0):
    if isinstance(out, Tensor) or type(out) is BatchedTensor:
        return BatchedTensor(out, bdim, L)
    if isinstance(out, tuple):
        vals = [_wrap(o, L, bdim) for o in out]
        return type(out)(vals) if type(out) is not tuple else tuple(vals)
    if isinstance(out, list):
        return [_wrap(o, L, bdim) for o in out]
    return out


def _norm_dim(d, n):
    m = max(n, 1)
    if not -m <= d < m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d + m if d < 0 else d


def _pad(v, k):
    """Insert k size-1 dims right after the (front) batch dim."""
    for _ in range(k):
        v = v.unsqueeze(1)
    return v


def leading_batch(fn, x, *args, **kwargs):
    """fn(x) for an op that takes any number of leading batch dims (Python composites with
    data-dependent steps, e.g. linalg.matrix_exp): the vmap batch becomes one more of them."""
    return BatchedTensor(fn(_front(x), *args, **kwargs), 0, x._level)


def _call_raw(func, args, kwargs):
    """Call with function mode off (random ops, which the trampoline would hand back to us)."""
    _prof._set_function_mode(False)
    try:
        return func(*args, **kwargs)
    finally:
        _prof._set_function_mode(True)


# ---------------------------------------------------------------- the dispatcher
def _handle(name, func, args, kwargs):
    L = _max_level(args, kwargs)
    if func in _RANDOM_FUNCS or name in _RANDOM_NAMES:
        return _random_rule(name, func, args, kwargs, L)
    if L == 0:
        return func(*args, **kwargs)
    rule = _RULES.get(name)
    if rule is None:
        if name.endswith("_") and not name.endswith("__") and name[:-1] in _ELEMENTWISE:
            rule = _inplace_elementwise
        else:
            return _fallback(name, func, args, kwargs, L)
    return rule(name, func, args, kwargs, L)


class _Unsupported(Exception):
    pass


def _inplace_into_unbatched(name):
    """torch's error for an in-place op that would write batched values into an unbatched self."""
    return RuntimeError(f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
                        "`other` in extra_args that has more elements than `self`. This happened due to `other` "
                        "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
                        f"out-of-place operators instead of {name}.")


def _fallback(name, func, args, kwargs, L):
    """The slow path: one call per batch entry on slices, results stacked along dim 0."""
    fallback_counts[name] = fallback_counts.get(name, 0) + 1
    B = _batch_size(args, kwargs, L)
    inplace = (name.endswith("_") and not name.endswith("__")) or name in ("__setitem__",) or \
        (name.startswith("__i") and name.endswith("__") and name not in ("__int__", "__index__", "__invert__"))
    if inplace and args and not _at(args[0], L):
        raise _inplace_into_unbatched(name)

    def sl(a, i):
        if _at(a, L):
            return a._value.select(a._bdim, i)
        if type(a) in (list, tuple):
            return type(a)(sl(e, i) for e in a)
        return a

    outs = []
    for i in range(B):
        outs.append(func(*[sl(a, i) for a in args], **{k: sl(v, i) for k, v in kwargs.items()}))
    if inplace:
        return args[0]
    return _stack_outputs(outs, L, name)


def _stack_outputs(outs, L, name):
    first = outs[0]
    if isinstance(first, Tensor) or type(first) is BatchedTensor:
        return BatchedTensor(ember.stack(outs), 0, L)
    if isinstance(first, (tuple, list)):
        cols = [_stack_outputs([o[j] for o in outs], L, name) for j in range(len(first))]
        if isinstance(first, tuple):
            return type(first)(cols) if type(first) is not tuple else tuple(cols)
        return cols
    if all(o == first for o in outs):
        return first
    raise RuntimeError(f"vmap: {name} returned a non-Tensor value that differs across the batch; "
                       "that is data-dependent and not supported")


# ---------------------------------------------------------------- elementwise
def _elementwise(name, func, args, kwargs, L):
    tensors = [a for a in args if _tensorlike(a)] + [a for a in kwargs.values() if _tensorlike(a)]
    if len(tensors) == 1:  # unary (with scalars): the batch dim stays where it is
        t = tensors[0]
        return _wrap(func(*[t._value if a is t else a for a in args],
                          **{k: (t._value if a is t else a) for k, a in kwargs.items()}), L, t._bdim)
    r = max(t.dim() for t in tensors)

    def conv(a):
        if _at(a, L):
            return _pad(_front(a), r - a.dim())
        return a

    return _wrap(func(*[conv(a) for a in args], **{k: conv(a) for k, a in kwargs.items()}), L)


def _inplace_elementwise(name, func, args, kwargs, L):
    self = args[0]
    if not _at(self, L):
        return _fallback(name, func, args, kwargs, L)  # raises vmap's in-place error
    tensors = [a for a in args[1:] if _tensorlike(a)] + [a for a in kwargs.values() if _tensorlike(a)]
    if not tensors:
        func(self._value, *args[1:], **kwargs)
        return self
    r = self.dim()
    if any(t.dim() > r for t in tensors):
        return _fallback(name, func, args, kwargs, L)

    def conv(a):
        if _at(a, L):
            return _pad(_front(a), r - a.dim())
        return a

    func(_front(self), *[conv(a) for a in args[1:]], **{k: conv(a) for k, a in kwargs.items()})
    return self


_UNARY = """abs absolute neg negative sign sgn square positive exp exp2 expm1 log log2 log10 log1p sqrt rsqrt
reciprocal sin cos tan asin acos atan arcsin arccos arctan sinh cosh tanh asinh acosh atanh arcsinh arccosh arctanh
sigmoid logit erf erfc erfinv lgamma digamma polygamma mvlgamma i0 _bessel sinc deg2rad rad2deg floor ceil trunc fix frac
round nan_to_num isnan isinf isfinite isposinf isneginf isreal signbit logical_not bitwise_not relu relu6 selu celu
elu leaky_relu gelu silu mish softplus softsign hardtanh hardsigmoid hardswish logsigmoid threshold tanhshrink
hardshrink softshrink rrelu conj conj_physical resolve_conj resolve_neg angle real imag view_as_real view_as_complex
clone detach contiguous to type float double half bfloat16 int long short char byte bool cpu type_as
zeros_like ones_like empty_like full_like requires_grad_ detach_ zero_ fill_ xlogy special_expit
__neg__ __pos__ __abs__ __invert__ _nn_relu _nn_gelu _nn_silu _nn_elu _nn_leaky_relu _nn_hardtanh _nn_softplus
_nn_threshold _nn_hardsigmoid _nn_hardswish _nn_mish _nn_celu _nn_selu _nn_relu6 _nn_logsigmoid log_sigmoid""".split()
_BINARY = """add sub subtract rsub mul multiply div divide true_divide floor_divide remainder fmod pow float_power
atan2 arctan2 maximum minimum fmax fmin hypot copysign nextafter ldexp logaddexp logaddexp2 heaviside
eq ne lt le gt ge greater less greater_equal less_equal not_equal equal_elementwise
logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift
isclose igamma igammac gcd lcm xlogy lerp addcmul addcdiv clamp clip clamp_min clamp_max where
polar complex prelu
__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__
__mod__ __rmod__ __pow__ __rpow__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __and__ __or__ __xor__ __rand__
__ror__ __rxor__ __lshift__ __rshift__ __rlshift__ __rrshift__""".split()
_ELEMENTWISE = set(_UNARY) | set(_BINARY)
_INPLACE_DUNDERS = "__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__ __ixor__"

_RULES = {n: _elementwise for n in _ELEMENTWISE}
_ELEMENTWISE.add("masked_fill")
for _n in _INPLACE_DUNDERS.split():
    _RULES[_n] = _inplace_elementwise
for _n in ("zero_", "fill_", "requires_grad_", "detach_", "copy_", "clamp_", "clip_", "masked_fill_"):
    _RULES[_n] = _inplace_elementwise
for _n in ("zero_", "requires_grad_", "detach_"):
    _RULES[_n] = lambda name, func, args, kwargs, L: (func(args[0]._value, *args[1:], **kwargs), args[0])[1]


def _rule(*names):
    def deco(fn):
        for n in names:
            _RULES[n] = fn
        return fn
    return deco


# ---------------------------------------------------------------- reductions and dim-taking ops
_ALL = object()


def _get_arg(args, kwargs, pos, kw, default):
    if kw in kwargs:
        return kwargs[kw], "kw"
    if len(args) > pos:
        return args[pos], "pos"
    return default, None


def _set_arg(args, kwargs, pos, kw, where, value):
    if where == "kw" or (where is None and len(args) < pos):
        kwargs[kw] = value
    elif where == "pos":
        args[pos] = value
    else:
        args.append(value)


def _only_self_batched(args, kwargs, L):
    return _at(args[0], L) and not any(_level_of(a) == L for a in list(args[1:]) + list(kwargs.values()))


def _reduction(pos, kw="dim", single=False):
    """sum/mean/amax/...: dim None (or absent) reduces every logical dim via a flattened view;
    `single`: that full reduction returns one tensor (max/min/median) where dim= gives a tuple."""
    def rule(name, func, args, kwargs, L):
        x = args[0]
        if single and (len(args) > 1 and _tensorlike(args[1]) or _tensorlike(kwargs.get("other"))):
            return _elementwise(name, func, args, kwargs, L)  # max(a, b): elementwise
        if not _only_self_batched(args, kwargs, L):
            return _fallback(name, func, args, kwargs, L)
        args, kwargs = list(args), dict(kwargs)
        d, where = _get_arg(args, kwargs, pos, kw, None)
        if isinstance(d, bool) or (isinstance(d, (list, tuple)) and len(d) == 0):
            return _fallback(name, func, args, kwargs, L)
        r = x.dim()
        v = _front(x)
        if r == 0 and d is not None:  # dim 0 or -1 of a 0-d tensor: reduce a size-1 dim; the result stays 0-d
            for e in (d if isinstance(d, (list, tuple)) else (d,)):
                _norm_dim(e, 0)
            _set_arg(args, kwargs, pos, kw, where, 1)
            if len(args) > pos + 1 and isinstance(args[pos + 1], bool):
                args[pos + 1] = False
            elif "keepdim" in kwargs:
                kwargs["keepdim"] = False
            args[0] = v.unsqueeze(1)
            return _wrap(func(*args, **kwargs), L)
        if d is None:
            keep = kwargs.get("keepdim", args[pos + 1] if len(args) > pos + 1 and isinstance(args[pos + 1], bool)
                              else False)
            flat = v.reshape(v.shape[0], -1)
            if where is None and len(args) < pos:
                return _fallback(name, func, args, kwargs, L)
            _set_arg(args, kwargs, pos, kw, where, 1)
            args[0] = flat
            out = func(*args, **kwargs)
            if single and isinstance(out, tuple):
                out = out[0]
            if keep:
                out = _wrap(out, L)
                return type(out)(o.reshape(*([1] * r)) for o in out) if isinstance(out, tuple) \
                    else out.reshape(*([1] * r))
            return _wrap(out, L)
        if isinstance(d, (list, tuple)):
            nd = tuple(_norm_dim(e, r) + 1 for e in d)
        else:
            nd = _norm_dim(d, r) + 1
        _set_arg(args, kwargs, pos, kw, where, nd)
        args[0] = v
        return _wrap(func(*args, **kwargs), L)
    return rule


for _n in ("sum", "mean", "amax", "amin", "all", "any", "nansum", "nanmean", "count_nonzero", "logsumexp",
           "var", "std", "var_mean", "std_mean", "argmax", "argmin", "prod"):
    _RULES[_n] = _reduction(1)
for _n in ("max", "min", "median", "nanmedian"):
    _RULES[_n] = _reduction(1, single=True)
_RULES["norm"] = _reduction(2)
_RULES["vector_norm"] = _reduction(2)
_RULES["linalg_vector_norm"] = _reduction(2)


def _dim_op(*specs, fallback_0d=True, zero_d_as_1d=False):
    """Ops whose dims (each spec: (position, keyword, default, extra rank)) are shifted by one.
    zero_d_as_1d: ops that give a 0-d input's shape back (softmax, cumsum, sort, ...) run a 0-d sample as
    one of size 1 (dim 0 or -1 becomes 1) and drop that dim from the results."""
    def rule(name, func, args, kwargs, L):
        x = args[0]
        if zero_d_as_1d and x.dim() == 0 and _only_self_batched(args, kwargs, L):
            return _zero_d_as_1d(specs, name, func, args, kwargs, L)
        if not _only_self_batched(args, kwargs, L) or (fallback_0d and x.dim() == 0):
            return _fallback(name, func, args, kwargs, L)
        args, kwargs = list(args), dict(kwargs)
        r = x.dim()
        for pos, kw, default, extra in specs:
            d, where = _get_arg(args, kwargs, pos, kw, default)
            if d is None or isinstance(d, bool):
                if default is None and where is None:
                    continue
                return _fallback(name, func, args, kwargs, L)
            if isinstance(d, (list, tuple)):
                nd = type(d)(_norm_dim(e, r + extra) + 1 for e in d)
            else:
                nd = _norm_dim(d, r + extra) + 1
            if where is None:
                kwargs[kw] = nd
            else:
                _set_arg(args, kwargs, pos, kw, where, nd)
        args[0] = _front(x)
        return _wrap(func(*args, **kwargs), L)
    return rule


def _zero_d_as_1d(specs, name, func, args, kwargs, L):
    args, kwargs = list(args), dict(kwargs)
    for pos, kw, default, extra in specs:
        d, where = _get_arg(args, kwargs, pos, kw, default)
        if d is _ALL or d is None or isinstance(d, bool):
            return _fallback(name, func, args, kwargs, L)  # the op's own error
        if isinstance(d, (list, tuple)):
            nd = type(d)(_norm_dim(e, 0) + 1 for e in d)
        else:
            nd = _norm_dim(d, 0) + 1
        if where is None:
            kwargs[kw] = nd
        else:
            _set_arg(args, kwargs, pos, kw, where, nd)
    args[0] = _front(args[0]).unsqueeze(1)
    out = func(*args, **kwargs)

    def drop(o):  # keepdim leaves the size-1 dim, a reduction over it does not
        return o.squeeze(1) if o.dim() == 2 else o
    if isinstance(out, tuple):
        vals = [drop(o) for o in out]
        return _wrap(type(out)(vals) if type(out) is not tuple else tuple(vals), L)
    return _wrap(drop(out), L)


_SHAPE_KEEPING = {"softmax", "log_softmax", "_softmax", "_log_softmax", "softmin", "cumsum", "cumprod", "cummax",
                  "cummin", "logcumsumexp"}
for _n in ("softmax", "log_softmax", "_softmax", "_log_softmax", "softmin", "cumsum", "cumprod", "cummax", "cummin",
           "logcumsumexp", "unbind", "select", "narrow", "narrow_copy", "unflatten", "glu", "index_select"):
    _RULES[_n] = _dim_op((1, "dim", 0 if _n == "unbind" else (-1 if _n == "glu" else _ALL), 0),
                         zero_d_as_1d=_n in _SHAPE_KEEPING)
for _n in ("sort", "argsort", "mode"):
    _RULES[_n] = _dim_op((1, "dim", -1, 0), zero_d_as_1d=True)
_RULES["topk"] = _dim_op((2, "dim", -1, 0))  # a 0-d sample: topk(k=0) keeps it 0-d, torch.vmap asserts
_RULES["kthvalue"] = _dim_op((2, "dim", -1, 0), zero_d_as_1d=True)
for _n in ("split", "chunk", "tensor_split", "split_with_sizes"):
    _RULES[_n] = _dim_op((2, "dim", 0, 0))
_RULES["unsqueeze"] = _dim_op((1, "dim", _ALL, 1), fallback_0d=False)
_RULES["transpose"] = _RULES["swapaxes"] = _RULES["swapdims"] = _dim_op((1, "dim0", _ALL, 0), (2, "dim1", _ALL, 0))
_RULES["movedim"] = _RULES["moveaxis"] = _dim_op((1, "source", _ALL, 0), (2, "destination", _ALL, 0))
_RULES["diagonal"] = _dim_op((2, "dim1", 0, 0), (3, "dim2", 1, 0))
_RULES["flip"] = _dim_op((1, "dims", _ALL, 0), zero_d_as_1d=True)
_RULES["unfold"] = _dim_op((1, "dimension", _ALL, 0))


def _dynamic_shape_rule(name, func, args, kwargs, L):
    if name == "where" and len(args) + len(kwargs) > 1:
        return _elementwise(name, func, args, kwargs, L)
    raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap "
                       f"over aten::{name}. Please file an issue at https://github.com/pytorch/pytorch/issues if you "
                       "need this feature")


for _n in ("where", "nonzero", "unique_consecutive"):  # where(cond) alone is nonzero(cond, as_tuple=True)
    _RULES[_n] = _dynamic_shape_rule


def _unique_rule(name, func, args, kwargs, L):
    dim = kwargs.get("dim", args[4] if len(args) > 4 else None)
    return _dynamic_shape_rule("_unique" if dim is None else "unique_dim", func, args, kwargs, L)


def _masked_select_rule(name, func, args, kwargs, L):
    mask = kwargs.get("mask", args[1] if len(args) > 1 else None)
    if _level_of(mask) == L:  # each entry would select a different number of elements
        raise RuntimeError("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
                           "this because for each batch this would return a differently shaped Tensor. Please file an "
                           "issue at https://github.com/pytorch/pytorch/issues if you need this feature.")
    return _fallback(name, func, args, kwargs, L)  # only self batched: the same count per entry


_RULES["unique"] = _unique_rule
_RULES["masked_select"] = _masked_select_rule
_RULES["rot90"] = _dim_op((2, "dims", [0, 1], 0))
_RULES["diag_embed"] = _dim_op((2, "dim1", -2, 1), (3, "dim2", -1, 1))
for _n in ("_fft_c2c", "_fft_r2c", "_fft_c2r"):  # dims arrive normalized, as a list
    _RULES[_n] = _dim_op((1, "dim", _ALL, 0))
_roll_dims = _dim_op((2, "dims", _ALL, 0))


@_rule("roll")
def _roll_rule(name, func, args, kwargs, L):
    x = args[0]
    dims, _ = _get_arg(args, kwargs, 2, "dims", None)
    if dims is not None and dims != () and dims != []:
        return _roll_dims(name, func, args, kwargs, L)
    if not _only_self_batched(args, kwargs, L):
        return _fallback(name, func, args, kwargs, L)
    shifts, _ = _get_arg(args, kwargs, 1, "shifts", None)
    v = _front(x)
    # no dims: the roll runs over each entry's flattened elements
    return BatchedTensor(func(v.reshape(v.shape[0], -1), shifts, 1).reshape(v.shape), 0, L)


@_rule("flatten")
def _flatten_rule(name, func, args, kwargs, L):
    x = args[0]
    if not _only_self_batched(args, kwargs, L):
        return _fallback(name, func, args, kwargs, L)
    r = x.dim()
    s, _ = _get_arg(args, kwargs, 1, "start_dim", 0)
    e, _ = _get_arg(args, kwargs, 2, "end_dim", -1)
    v = _front(x)
    if r == 0:
        return BatchedTensor(v.reshape(v.shape[0], 1), 0, L)
    return BatchedTensor(v.flatten(_norm_dim(s, r) + 1, _norm_dim(e, r) + 1), 0, L)


@_rule("squeeze")
def _squeeze_rule(name, func, args, kwargs, L):
    x = args[0]
    if not _only_self_batched(args, kwargs, L):
        return _fallback(name, func, args, kwargs, L)
    d, _ = _get_arg(args, kwargs, 1, "dim", None)
    r = x.dim()
    shape = x.shape
    if d is None:
        dims = tuple(i for i in range(r) if shape[i] == 1)
    else:
        dims = tuple(d) if isinstance(d, (list, tuple)) else (d,)
        dims = tuple(_norm_dim(i, r) for i in dims if r > 0)
        dims = tuple(i for i in dims if shape[i] == 1)
    v = _front(x)
    for i in sorted(dims, reverse=True):
        v = v.squeeze(i + 1)
    return BatchedTensor(v, 0, L)


@_rule("t", "adjoint")
def _t_rule(name, func, args, kwargs, L):
    x = args[0]
    if x.dim() < 2:
        if name == "t":
            return x
        return _fallback(name, func, args, kwargs, L)
    if name == "t" and x.dim() > 2:
        return _fallback(name, func, args, kwargs, L)  # raises as the op does
    out = x.transpose(-2, -1)
    return out.conj() if name == "adjoint" and x.is_complex() else out


@_rule("permute")
def _permute_rule(name, func, args, kwargs, L):
    x = args[0]
    if not _only_self_batched(args, kwargs, L):
        return _fallback(name, func, args, kwargs, L)
    dims = args[1:] if len(args) > 1 else (kwargs.get("dims"),)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    r = x.dim()
    if len(dims) != r:
        return _fallback(name, func, args, kwargs, L)
    return BatchedTensor(_front(x).permute(0, *[_norm_dim(d, r) + 1 for d in dims]), 0, L)


def _shape_args(args, kwargs, kw="shape"):
    s = args[1:] if len(args) > 1 else (kwargs.get(kw, kwargs.get("size")),)
    if len(s) == 1 and isinstance(s[0], (list, tuple)):
        s = s[0]
    return tuple(s)


@_rule("view", "reshape")
def _reshape_rule(name, func, args, kwargs, L):
    x = args[0]
    if len(args) == 2 and isinstance(args[1], ember.dtype) and not kwargs and name == "view" and x.dim() > 0:
        # view(dtype) reinterprets along the last dim only (its size changes with the element size)
        return BatchedTensor(func(_front(x), args[1]), 0, L)
    if not _only_self_batched(args, kwargs, L) or (len(args) == 2 and not isinstance(args[1], (int, list, tuple))):
        return _fallback(name, func, args, kwargs, L)  # view(dtype) of a 0-d tensor
    shape = _shape_args(args, kwargs)
    v = x._value
    B = v.shape[x._bdim]
    if x._bdim == 0:
        try:
            return BatchedTensor(func(v, (B,) + shape), 0, L)
        except RuntimeError:
            if name == "view":
                raise
    return BatchedTensor(_front(x).reshape((B,) + shape), 0, L)


@_rule("view_as", "reshape_as", "expand_as")
def _as_rule(name, func, args, kwargs, L):
    x, other = args[0], args[1]
    target = {"view_as": "view", "reshape_as": "reshape", "expand_as": "expand"}[name]
    return getattr(x, target)(tuple(other.shape)) if type(x) is BatchedTensor else \
        getattr(ember.Tensor, target)(x, tuple(other.shape))


@_rule("expand", "broadcast_to")
def _expand_rule(name, func, args, kwargs, L):
    x = args[0]
    if not _only_self_batched(args, kwargs, L):
        return _fallback(name, func, args, kwargs, L)
    shape = _shape_args(args, kwargs, "size")
    r = x.dim()
    if len(shape) < r:
        return _fallback(name, func, args, kwargs, L)
    v = _pad(_front(x), len(shape) - r)
    return BatchedTensor(v.expand((v.shape[0],) + tuple(shape)), 0, L)


@_rule("ravel")
def _ravel_rule(name, func, args, kwargs, L):
    v = _front(args[0])
    return BatchedTensor(v.reshape(v.shape[0], -1), 0, L)


def _basic_index(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool) for i in items)


@_rule("__getitem__")
def _getitem_rule(name, func, args, kwargs, L):
    x, idx = args
    if not _at(x, L) or not _basic_index(idx) or x.dim() == 0 and idx is not Ellipsis and idx is not None:
        return _fallback(name, func, args, kwargs, L)
    items = idx if isinstance(idx, tuple) else (idx,)
    return BatchedTensor(_front(x)[(slice(None),) + items], 0, L)


@_rule("__setitem__")
def _setitem_rule(name, func, args, kwargs, L):
    x, idx, val = args
    if not _at(x, L):
        return _fallback(name, func, args, kwargs, L)
    if not _basic_index(idx):
        return _fallback(name, func, args, kwargs, L)
    items = idx if isinstance(idx, tuple) else (idx,)
    dst = _front(x)[(slice(None),) + items]
    if _at(val, L):
        target_r = dst.dim() - 1
        val = _pad(_front(val), target_r - val.dim())
    dst.copy_(val) if _tensorlike(val) else dst.fill_(val)
    return None


@_rule("copy_")
def _copy_rule(name, func, args, kwargs, L):
    x, src = args[0], args[1]
    if not _at(x, L):
        return _fallback(name, func, args, kwargs, L)
    v = _front(x)
    if _at(src, L):
        src = _pad(_front(src), x.dim() - src.dim())
    v.copy_(src, *args[2:], **kwargs)
    return x


@_rule("masked_fill")
def _masked_fill_rule(name, func, args, kwargs, L):
    x, mask = args[0], args[1]
    value = args[2] if len(args) > 2 else kwargs.get("value")
    if _at(value, L):  # a batched 0-d value: where() broadcasts it per entry
        return ember.where(mask, value.to(x.dtype), x)
    return _elementwise(name, func, args, kwargs, L)


# ---------------------------------------------------------------- gather/scatter style (index tensors)
def _index_op(tensor_pos, dim_pos=1):
    def rule(name, func, args, kwargs, L):
        x = args[0]
        r = x.dim()
        if r == 0 or any(_level_of(v) == L for v in kwargs.values()):
            return _fallback(name, func, args, kwargs, L)
        if len(args) <= dim_pos or not isinstance(args[dim_pos], int) or isinstance(args[dim_pos], bool):
            return _fallback(name, func, args, kwargs, L)
        B = _batch_size(args, kwargs, L)
        args = list(args)
        for i in [0] + list(tensor_pos):
            if i >= len(args) or not _tensorlike(args[i]):
                continue
            a = args[i]
            if _at(a, L):
                args[i] = _front(a)
            else:
                args[i] = a.unsqueeze(0).expand((B,) + tuple(a.shape))
        d = args[dim_pos]
        if not isinstance(d, int):
            return _fallback(name, func, args, kwargs, L)
        args[dim_pos] = _norm_dim(d, r) + 1
        out = func(*args, **kwargs)
        if name.endswith("_") and _at(x, L):
            return x
        if name.endswith("_"):
            return _fallback(name, func, args, kwargs, L)
        return _wrap(out, L)
    return rule


_RULES["gather"] = _index_op((2,))
_RULES["take_along_dim"] = _index_op((1,), dim_pos=2)
for _n in ("scatter", "scatter_add", "scatter_reduce", "scatter_", "scatter_add_", "scatter_reduce_"):
    _RULES[_n] = _index_op((2, 3))


# ---------------------------------------------------------------- cat / stack
@_rule("cat", "concat", "concatenate", "stack")
def _cat_rule(name, func, args, kwargs, L):
    tensors, where = _get_arg(args, kwargs, 0, "tensors", None)
    d, dwhere = _get_arg(args, kwargs, 1, "dim", 0)
    if not isinstance(tensors, (list, tuple)) or not tensors or not isinstance(d, int):
        return _fallback(name, func, args, kwargs, L)
    B = _batch_size(args, kwargs, L)
    if name != "stack" and any(t.dim() == 1 and t.shape[0] == 0 for t in tensors):
        return _fallback(name, func, args, kwargs, L)  # legacy empty members
    live = tensors
    r = live[0].dim() if live else tensors[0].dim()
    nd = _norm_dim(d, r + (1 if name == "stack" else 0)) + 1
    phys = []
    for t in tensors:
        if _at(t, L):
            phys.append(_front(t))
        elif name != "stack" and t.dim() == 1 and t.shape[0] == 0:
            continue
        else:
            phys.append(t.unsqueeze(0).expand((B,) + tuple(t.shape)))
    kw = {k: v for k, v in kwargs.items() if k not in ("tensors", "dim")}
    return BatchedTensor(func(phys, nd, **kw), 0, L)


# ---------------------------------------------------------------- matmul family
def _mat_phys(x, L):
    """(physical with a leading batch dim of B or 1, logical rank)."""
    if _at(x, L):
        return _front(x), x.dim()
    return x.unsqueeze(0), x.dim()


def _matmul_impl(a, b, L):
    pa, ra = _mat_phys(a, L)
    pb, rb = _mat_phys(b, L)
    if ra == 0 or rb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {ra}D and {rb}D")
    if ra == 1 and rb == 1:
        return BatchedTensor((pa * pb).sum(-1), 0, L)
    if _at(a, L) and not _at(b, L) and rb == 2:
        return BatchedTensor(ember.matmul(pa, b), 0, L)  # [B, ..., n, k] @ [k, m]: one GEMM
    if ra == 1:
        pa = pa.unsqueeze(-2)
    if rb == 1:
        pb = pb.unsqueeze(-1)
    ka, kb = pa.dim() - 1, pb.dim() - 1
    k = max(ka, kb)
    pa, pb = _pad(pa, k - ka), _pad(pb, k - kb)
    out = ember.matmul(pa, pb)
    if ra == 1:
        out = out.squeeze(-2)
    if rb == 1:
        out = out.squeeze(-1)
    return BatchedTensor(out, 0, L)


@_rule("matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "mv", "dot", "inner_1d")
def _matmul_rule(name, func, args, kwargs, L):
    a, b = args[0], args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("mat2", kwargs.get("vec")))
    if name == "__rmatmul__":
        a, b = b, a
    need = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1)}.get(name)
    if need and (a.dim(), b.dim()) != need:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    if name == "dot" and a.shape != b.shape:
        return _fallback(name, func, args, kwargs, L)
    return _matmul_impl(a, b, L)


@_rule("vdot")
def _vdot_rule(name, func, args, kwargs, L):
    return _matmul_impl(args[0].conj(), args[1], L)


@_rule("outer", "ger")
def _outer_rule(name, func, args, kwargs, L):
    a, b = args[0], args[1]
    return a.unsqueeze(-1) * b.unsqueeze(-2) if a.dim() == 1 and b.dim() == 1 else \
        _fallback(name, func, args, kwargs, L)


class _LinearShared(ember.autograd.Function):
    """linear(x, W, b) where W (and b) are batched only by expansion (batch stride 0), as grad makes
    them under vmap: the forward is one GEMM with the shared weight, the backward still gives each
    batch entry its own weight gradient (the per-sample gradient)."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        ctx.has_b = b is not None
        w0 = w[0]
        out = ember.matmul(x, w0.transpose(-2, -1))
        if b is not None:
            out = out + (b[0] if b.stride(0) == 0 else b.unsqueeze(-2) if x.dim() > 2 else b)
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = ember.matmul(g, w[0]) if ctx.needs_input_grad[0] else None
        gw = gb = None
        if ctx.needs_input_grad[1]:
            if x.dim() == 2:  # [B, in], g [B, out]
                gw = g.unsqueeze(-1) * x.unsqueeze(-2)
            else:
                gw = ember.matmul(g.transpose(-2, -1), x)
        if ctx.has_b and ctx.needs_input_grad[2]:
            gb = g if g.dim() == 2 else g.sum(-2)
        return gx, gw, gb


@_rule("linear")
def _linear_rule(name, func, args, kwargs, L):
    x = args[0]
    w = args[1] if len(args) > 1 else kwargs.get("weight")
    b = args[2] if len(args) > 2 else kwargs.get("bias")
    if not _at(w, L) and (b is None or not _at(b, L)):
        if _at(x, L):
            return BatchedTensor(func(_front(x), w, b), 0, L)
    if _at(x, L) and _at(w, L) and w.dim() == 2 and x.dim() in (1, 2) and (b is None or _at(b, L) and b.dim() == 1):
        pw = _front(w)
        pb = _front(b) if b is not None else None
        if pw.stride(0) == 0 and (pb is None or pb.stride(0) == 0) and isinstance(pw, Tensor):
            return BatchedTensor(_LinearShared.apply(_front(x), pw, pb), 0, L)
    out = ember.matmul(x, w.transpose(-2, -1)) if w.dim() == 2 else ember.matmul(x, w)
    return out + b if b is not None else out


def _einsum_explicit(eq, n_ops, ranks):
    lhs = eq.replace(" ", "")
    if "->" in lhs:
        return lhs
    letters = [c for c in lhs if c.isalpha()]
    once = sorted(c for c in set(letters) if letters.count(c) == 1)
    return lhs + "->" + ("..." if "..." in lhs else "") + "".join(once)


@_rule("einsum")
def _einsum_rule(name, func, args, kwargs, L):
    eq = args[0]
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    if not isinstance(eq, str) or kwargs:
        return _fallback(name, func, args, kwargs, L)
    eq = _einsum_explicit(eq, len(ops), None)
    lhs, rhs = eq.split("->")
    terms = lhs.split(",")
    free = [c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in eq][0]
    new_terms, phys = [], []
    for t, o in zip(terms, ops):
        if _at(o, L):
            new_terms.append(free + t)
            phys.append(_front(o))
        else:
            new_terms.append(t)
            phys.append(o)
    return BatchedTensor(func(",".join(new_terms) + "->" + free + rhs, *phys), 0, L)


# ---------------------------------------------------------------- nn
@_rule("_nn_cross_entropy", "_nn_nll_loss")
def _class_loss_rule(name, func, args, kwargs, L):
    """One sample of [C] or [N, C] scores with class indices: the physical batch is flattened into
    the loss's own batch with reduction 'none', then each entry reduced as the op would."""
    inp, target = args[0], args[1]
    rest = list(args[2:])
    weight = rest[0] if rest else None
    reduction = rest[1] if len(rest) > 1 else "mean"
    ignore = rest[2] if len(rest) > 2 else -100
    two = inp.dim() == 2
    if not _at(inp, L) or _level_of(weight) == L or kwargs or len(rest) < 2 or target.is_floating_point() or \
            not ((inp.dim() == 1 and target.dim() == 0) or (two and target.dim() == 1)):
        return _fallback(name, func, args, kwargs, L)
    B = _batch_size(args, kwargs, L)
    pi = _front(inp)
    pt = _front(target) if _at(target, L) else target.unsqueeze(0).expand((B,) + tuple(target.shape))
    C = pi.shape[-1]
    if two:
        N = pi.shape[1]
        pi, pt = pi.reshape(B * N, C), pt.reshape(B * N)
    rest[1] = "none"
    out = func(pi, pt, *rest)
    if two:
        out, pt = out.reshape(B, N), pt.reshape(B, N)
    if reduction == "none":
        return BatchedTensor(out, 0, L)
    if reduction == "sum":
        return BatchedTensor(out.sum(-1) if two else out, 0, L)
    valid = (pt != ignore).to(out.dtype)
    w = weight[pt.clamp(0, C - 1)].to(out.dtype) * valid if weight is not None else valid
    return BatchedTensor(out.sum(-1) / w.sum(-1) if two else out / w, 0, L)


@_rule("layer_norm", "_nn_layer_norm")
def _layer_norm_rule(name, func, args, kwargs, L):
    x = args[0]
    rest = list(args[1:])
    w = rest[1] if len(rest) > 1 else kwargs.get("weight")
    b = rest[2] if len(rest) > 2 else kwargs.get("bias")
    if not _at(x, L) or _level_of(w) == L or _level_of(b) == L:
        return _fallback(name, func, args, kwargs, L)
    return BatchedTensor(func(_front(x), *rest, **kwargs), 0, L)


@_rule("embedding", "_nn_embedding")
def _embedding_rule(name, func, args, kwargs, L):
    idx, w = args[0], args[1]
    if _level_of(w) == L or not _at(idx, L):
        return _fallback(name, func, args, kwargs, L)
    return BatchedTensor(func(_front(idx), w, *args[2:], **kwargs), 0, L)


@_rule("conv1d", "conv2d", "conv3d")
def _conv_rule(name, func, args, kwargs, L):
    x, w = args[0], args[1]
    rest = list(args[2:])
    b = rest[0] if rest else kwargs.get("bias")
    nsp = int(name[4])
    if _at(x, L) and not _at(w, L) and _level_of(b) != L:
        v = _front(x)
        if x.dim() == nsp + 1:  # unbatched sample: the vmap batch is the conv batch
            return BatchedTensor(func(v, w, *rest, **kwargs), 0, L)
        B, N = v.shape[0], v.shape[1]
        out = func(v.reshape((B * N,) + tuple(v.shape[2:])), w, *rest, **kwargs)
        return BatchedTensor(out.reshape((B, N) + tuple(out.shape[1:])), 0, L)
    return _fallback(name, func, args, kwargs, L)


# ---------------------------------------------------------------- random ops (randomness=)
_RANDOM_NAMES = set()
_RANDOM_FUNCS = set()
_RANDOM_LIKE = {"rand_like", "randn_like", "randint_like", "bernoulli", "bernoulli_", "uniform_", "normal_",
                "random_", "exponential_", "geometric_", "cauchy_", "log_normal_", "_nn_dropout",
                "_nn_alpha_dropout", "_nn_feature_dropout", "_nn_feature_alpha_dropout", "dropout", "dropout_",
                "poisson", "rrelu", "rrelu_"}


def register_random(names_and_funcs):
    for n, f in names_and_funcs:
        _RANDOM_NAMES.add(n)
        _RANDOM_FUNCS.add(f)


_rand_exclude = []  # levels being handled by an outer random rule


def _random_rule(name, func, args, kwargs, L):
    active = [lv for lv in _levels if lv[0] not in _rand_exclude]
    top = active[-1] if active else None
    if top is None or (L and L < top[0] and False):
        if L:
            return _fallback_plain(name, func, args, kwargs, L)
        return _call_raw(func, args, kwargs)
    level, B, mode = top
    if L > level:  # batched at a level that is no longer open
        return _fallback_plain(name, func, args, kwargs, L)
    if mode == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                           "out of vmap")
    _rand_exclude.append(level)
    try:
        batched = L == level
        if mode == "different":
            if batched and name in _RANDOM_LIKE and _only_self_batched(args, kwargs, L) and _at(args[0], L):
                x = args[0]
                out = func(x._value, *args[1:], **kwargs)
                return x if name.endswith("_") and name != "_nn_dropout" and out is x._value else \
                    _wrap(out, L, x._bdim)
            # each entry draws on its own: one call per entry
            outs = []
            for i in range(B):
                outs.append(func(*[_slice(a, L, i) for a in args], **{k: _slice(v, L, i) for k, v in kwargs.items()}))
            if name.endswith("_") and batched and _at(args[0], L):
                return args[0]
            return _stack_outputs(outs, level, name)
        # same: every entry draws the same numbers
        if not batched:
            return func(*args, **kwargs)
        state = ember.get_rng_state()
        outs = []
        for i in range(B):
            ember.set_rng_state(state)
            outs.append(func(*[_slice(a, L, i) for a in args], **{k: _slice(v, L, i) for k, v in kwargs.items()}))
        if name.endswith("_") and _at(args[0], L):
            return args[0]
        return _stack_outputs(outs, level, name)
    finally:
        _rand_exclude.pop()


def _slice(a, L, i):
    if _at(a, L):
        return a._value.select(a._bdim, i)
    if type(a) in (list, tuple):
        return type(a)(_slice(e, L, i) for e in a)
    return a


def _fallback_plain(name, func, args, kwargs, L):
    return _fallback(name, func, args, kwargs, L)


# ---------------------------------------------------------------- more families written with the rules above
_RULES["_linalg_vector_norm"] = _reduction(2)
_RULES["_linalg_matrix_norm"] = _dim_op((2, "dim", (-2, -1), 0))


@_rule("aminmax")
def _aminmax_rule(name, func, args, kwargs, L):
    x = args[0]
    if len(args) != 1 or not _only_self_batched(args, kwargs, L) or kwargs.get("out") is not None:
        return _fallback(name, func, args, kwargs, L)
    d, keep = kwargs.get("dim"), kwargs.get("keepdim", False)
    v, r = _front(x), x.dim()
    if d is None or r == 0:
        if d is not None:
            _norm_dim(d, 0)  # a 0-d tensor takes dim 0 or -1
        out = _wrap(func(v.reshape(v.shape[0], -1), dim=1), L)
        return type(out)(o.reshape(*([1] * r)) for o in out) if keep and d is None else out
    return _wrap(func(v, dim=_norm_dim(d, r) + 1, keepdim=keep), L)


@_rule("hstack", "vstack", "dstack", "column_stack", "row_stack")
def _stack_family_rule(name, func, args, kwargs, L):
    """Each is a cat of reshaped members; the reshapes and cat have rules of their own."""
    ts = args[0] if len(args) == 1 else None
    if kwargs or type(ts) not in (list, tuple) or not ts or not all(_tensorlike(t) for t in ts):
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    if name == "hstack":
        ts = [t if t.dim() else t.reshape(1) for t in ts]
        return ember.cat(ts, 0 if ts[0].dim() == 1 else 1)
    if name in ("vstack", "row_stack"):
        return ember.cat([t.reshape(1, -1) if t.dim() < 2 else t for t in ts], 0)
    if name == "column_stack":
        return ember.cat([t.reshape(-1, 1) if t.dim() < 2 else t for t in ts], 1)
    shaped = [t.reshape(1, 1, 1) if t.dim() == 0 else t.reshape(1, -1, 1) if t.dim() == 1 else
              t.unsqueeze(-1) if t.dim() == 2 else t for t in ts]
    return ember.cat(shaped, 2)


_ADD_PRODUCTS = {"addmm": (2, 2, lambda a, b: ember.matmul(a, b)), "addmv": (2, 1, lambda a, b: ember.matmul(a, b)),
                 "baddbmm": (3, 3, lambda a, b: ember.matmul(a, b)),
                 "addbmm": (3, 3, lambda a, b: ember.matmul(a, b).sum(0))}


@_rule(*_ADD_PRODUCTS)
def _add_product_rule(name, func, args, kwargs, L):
    """beta * input + alpha * (product), the product and the sum through their own rules; beta = 0 ignores
    input (nan and inf included), as the op does."""
    ra, rb, prod = _ADD_PRODUCTS[name]
    if len(args) != 3 or set(kwargs) - {"beta", "alpha"} or not all(_tensorlike(a) for a in args) \
            or args[1].dim() != ra or args[2].dim() != rb:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    p = prod(args[1], args[2])
    if alpha != 1:
        p = p * alpha
    if beta == 0:
        return p
    return p + (args[0] if beta == 1 else args[0] * beta)


@_rule("linalg_cross")
def _cross_rule(name, func, args, kwargs, L):
    if len(args) < 2 or not all(_tensorlike(a) for a in args[:2]) or set(kwargs) - {"dim"}:
        return _fallback(name, func, args, kwargs, L)
    d = kwargs.get("dim", args[2] if len(args) > 2 else -1)
    r = max(args[0].dim(), args[1].dim())
    if r == 0:
        return _fallback(name, func, args, kwargs, L)
    nd = _norm_dim(d, r) + 1

    def conv(a):  # both to rank r + 1 (the op wants equal ranks), the batch first
        return _pad(_front(a), r - a.dim()) if _at(a, L) else a.reshape((1,) * (r + 1 - a.dim()) + tuple(a.shape))
    return _wrap(func(conv(args[0]), conv(args[1]), nd), L)


@_rule("diag")
def _diag_rule(name, func, args, kwargs, L):
    x = args[0]
    if not _only_self_batched(args, kwargs, L) or kwargs or x.dim() not in (1, 2):
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    k = args[1] if len(args) > 1 else 0
    v = _front(x)
    return _wrap(ember.diag_embed(v, k) if x.dim() == 1 else v.diagonal(k, 1, 2).clone(), L)


@_rule("quantile", "nanquantile")
def _quantile_rule(name, func, args, kwargs, L):
    """q stays unbatched; a 1-D q puts its dim first in the result, before the batch."""
    x = args[0]
    if not _only_self_batched(args, kwargs, L) or kwargs.get("out") is not None or x.dim() == 0:
        return _fallback(name, func, args, kwargs, L)
    args, kwargs = list(args), dict(kwargs)
    q = args[1] if len(args) > 1 else kwargs.get("q")
    d, where = _get_arg(args, kwargs, 2, "dim", None)
    keep, kwhere = _get_arg(args, kwargs, 3, "keepdim", False)
    v, r = _front(x), x.dim()
    if d is None:
        _set_arg(args, kwargs, 2, "dim", where, 1)
        if kwhere is not None:
            _set_arg(args, kwargs, 3, "keepdim", kwhere, False)
        args[0] = v.reshape(v.shape[0], -1)
    else:
        _set_arg(args, kwargs, 2, "dim", where, _norm_dim(d, r) + 1)
        args[0] = v
    out = func(*args, **kwargs)
    vector_q = isinstance(q, Tensor) and q.dim() == 1
    out = BatchedTensor(out, 1 if vector_q else 0, L)
    if d is None and keep:
        out = out.reshape(*((out.shape[0],) if vector_q else ()), *([1] * r))
    return out


@_rule("index_add", "index_copy")
def _index_add_copy_rule(name, func, args, kwargs, L):
    """Out of place, with index unbatched: self and source both get the batch first (an unbatched one is
    expanded), dim shifts by one."""
    if len(args) != 4 or set(kwargs) - {"alpha"} or _level_of(args[2]) == L or not _tensorlike(args[3]) \
            or args[0].dim() == 0 or args[0].dim() != args[3].dim():
        return _fallback(name, func, args, kwargs, L)
    B = _batch_size(args, kwargs, L)

    def front(a):
        return _front(a) if _at(a, L) else a.unsqueeze(0).expand(B, *a.shape)
    return _wrap(func(front(args[0]), _norm_dim(args[1], args[0].dim()) + 1, args[2], front(args[3]), **kwargs), L)


_RULES["index_fill"] = _dim_op((1, "dim", _ALL, 0))

@_rule("atleast_1d", "atleast_2d", "atleast_3d")
def _atleast_rule(name, func, args, kwargs, L):
    x = args[0]
    if len(args) != 1 or kwargs or not _at(x, L):
        return _fallback(name, func, args, kwargs, L)
    n, r = int(name[-2]), x.dim()
    if r >= n:
        return x
    shape = tuple(x.shape)
    # torch's layouts: a vector becomes a row (1, n) and, in 3-D, (1, n, 1); a matrix gets a trailing 1
    new = {1: (1,), 2: (1,) + shape if r else (1, 1), 3: (1, 1, 1) if r == 0 else (1,) + shape + (1,) if r == 1
           else shape + (1,)}[n]
    return x.reshape(new)


@_rule("meshgrid")
def _meshgrid_rule(name, func, args, kwargs, L):
    ts = list(args[0]) if len(args) == 1 and type(args[0]) in (list, tuple) else list(args)
    if set(kwargs) - {"indexing"} or not ts or not all(_tensorlike(t) and t.dim() <= 1 for t in ts):
        return _fallback(name, func, args, kwargs, L)  # the op's own error or warning
    indexing = kwargs.get("indexing") or "ij"
    if indexing not in ("ij", "xy"):
        return _fallback(name, func, args, kwargs, L)
    swap = indexing == "xy" and len(ts) >= 2
    order = [1, 0] + list(range(2, len(ts))) if swap else list(range(len(ts)))
    sizes = [ts[i].numel() for i in order]
    outs = []
    for i, t in enumerate(ts):
        pos = order.index(i)
        shape = [1] * len(ts)
        shape[pos] = -1
        outs.append(t.reshape(shape).expand(*sizes))
    return tuple(outs)


@_rule("cartesian_prod")
def _cartesian_prod_rule(name, func, args, kwargs, L):
    if kwargs or not args or not all(_tensorlike(t) and t.dim() == 1 for t in args):
        return _fallback(name, func, args, kwargs, L)
    if len(args) == 1:
        return args[0] if _at(args[0], L) else _fallback(name, func, args, kwargs, L)
    grids = ember.meshgrid(*args, indexing="ij")
    return ember.stack([g.reshape(-1) for g in grids], 1)


@_rule("linalg_solve")
def _solve_rule(name, func, args, kwargs, L):
    """A (*, n, n) with B a matrix (*, n, k) or, when it is 1-D or A's batch shape plus n, a vector (torch's
    rule, on logical shapes): batch dims broadcast as elementwise operands do."""
    left = kwargs.get("left", args[2] if len(args) > 2 else True)
    if len(args) < 2 or set(kwargs) - {"left"} or left is not True or not all(_tensorlike(a) for a in args[:2]):
        return _fallback(name, func, args, kwargs, L)
    A, Bv = args[0], args[1]
    if A.dim() < 2 or Bv.dim() == 0:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    vector = Bv.dim() == 1 or (Bv.dim() == A.dim() - 1 and tuple(Bv.shape) == tuple(A.shape[:-1]))
    if vector:
        return ember.linalg.solve(A, Bv.unsqueeze(-1)).squeeze(-1)
    return _elementwise(name, func, (A, Bv), {}, L)

def _same_batch_rule(core_ranks):
    """Ops on several inputs with fixed core ranks (LU (n, n), pivots (n,), B (n, k), ...) and equal batch
    dims: the vmap batch goes first in every input, unbatched ones expanded to it."""
    def rule(name, func, args, kwargs, L):
        ts = args[:len(core_ranks)]
        if len(ts) != len(core_ranks) or not all(_tensorlike(t) for t in ts) \
                or any(_level_of(v) == L for v in list(args[len(core_ranks):]) + list(kwargs.values())):
            return _fallback(name, func, args, kwargs, L)
        batches = {tuple(t.shape[:t.dim() - c]) for t, c in zip(ts, core_ranks) if t.dim() >= c}
        if len(batches) != 1 or any(t.dim() < c for t, c in zip(ts, core_ranks)):
            return _fallback(name, func, args, kwargs, L)  # broadcasting or the op's own error
        B = _batch_size(args, kwargs, L)
        phys = [_front(t) if _at(t, L) else t.unsqueeze(0).expand(B, *t.shape) for t in ts]
        return _wrap(func(*phys, *args[len(core_ranks):], **kwargs), L)
    return rule


_RULES["linalg_orgqr_values"] = _same_batch_rule((2, 1))
_RULES["linalg_lu_solve"] = _same_batch_rule((2, 1, 2))


@_rule("repeat_interleave")
def _repeat_interleave_rule(name, func, args, kwargs, L):
    x = args[0]
    if len(args) < 2 or not _only_self_batched(args, kwargs, L) or set(kwargs) - {"dim", "output_size"}:
        return _fallback(name, func, args, kwargs, L)  # repeat_interleave(repeats) has a data-dependent size
    args, kwargs = list(args), dict(kwargs)
    d, where = _get_arg(args, kwargs, 2, "dim", None)
    v = _front(x)
    if d is None:  # repeats the flattened input
        args[0] = v.reshape(v.shape[0], -1)
        _set_arg(args, kwargs, 2, "dim", where, 1)
    else:
        args[0] = v
        _set_arg(args, kwargs, 2, "dim", where, _norm_dim(d, x.dim()) + 1)
    return _wrap(func(*args, **kwargs), L)


@_rule("take")
def _take_rule(name, func, args, kwargs, L):
    """input.flatten()[index]: gathers along the flattened logical dims."""
    if len(args) != 2 or kwargs or not all(_tensorlike(a) for a in args):
        return _fallback(name, func, args, kwargs, L)
    x, idx = args
    B = _batch_size(args, kwargs, L)
    flat = _front(x).reshape(B, -1) if _at(x, L) else x.reshape(1, -1).expand(B, x.numel())
    i = _front(idx) if _at(idx, L) else idx.unsqueeze(0).expand(B, *idx.shape)
    n = flat.shape[1]
    i = i.reshape(B, -1)
    if type(i) is BatchedTensor or type(flat) is BatchedTensor:  # nested levels: bounds are data-dependent there
        return _fallback(name, func, args, kwargs, L)
    if i.numel() and (int(i.max()) >= n or int(i.min()) < -n):
        return _fallback(name, func, args, kwargs, L)  # the op's out-of-range error
    i = ember.where(i < 0, i + n, i)
    return BatchedTensor(flat.gather(1, i).reshape(B, *idx.shape), 0, L)


@_rule("tensordot")
def _tensordot_rule(name, func, args, kwargs, L):
    """tensordot as permute, reshape and matmul of the logical tensors (each with its own rule)."""
    a, b = args[0], args[1]
    dims = kwargs.get("dims", args[2] if len(args) > 2 else 2)
    if len(args) > 3 or set(kwargs) - {"dims"} or not (_tensorlike(a) and _tensorlike(b)):
        return _fallback(name, func, args, kwargs, L)
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0 or dims > min(a.dim(), b.dim()):
            return _fallback(name, func, args, kwargs, L)
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2 and all(isinstance(d, (list, tuple, int)) for d in dims):
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            return _fallback(name, func, args, kwargs, L)
        try:
            da, db = [_norm_dim(d, a.dim()) for d in da], [_norm_dim(d, b.dim()) for d in db]
        except IndexError:
            return _fallback(name, func, args, kwargs, L)
    else:
        return _fallback(name, func, args, kwargs, L)
    if any(a.shape[i] != b.shape[j] for i, j in zip(da, db)) or len(set(da)) != len(da) or len(set(db)) != len(db):
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    fa = [i for i in range(a.dim()) if i not in da]
    fb = [j for j in range(b.dim()) if j not in db]
    k = 1
    for i in da:
        k *= a.shape[i]
    sa, sb = [a.shape[i] for i in fa], [b.shape[j] for j in fb]
    ma = a.permute(*(fa + da)).reshape(-1, k) if a.dim() else a.reshape(1, 1)
    mb = b.permute(*(db + fb)).reshape(k, -1) if b.dim() else b.reshape(1, 1)
    return ember.matmul(ma, mb).reshape(tuple(sa + sb))


@_rule("bucketize")
def _bucketize_rule(name, func, args, kwargs, L):
    x, bounds = args[0], args[1] if len(args) > 1 else kwargs.get("boundaries")
    if not _at(x, L) or _level_of(bounds) == L or len(args) > 2 or set(kwargs) - {"out_int32", "right"}:
        return _fallback(name, func, args, kwargs, L)
    return _wrap(func(x._value, bounds, **kwargs), L, x._bdim)  # elementwise in input


@_rule("searchsorted")
def _searchsorted_rule(name, func, args, kwargs, L):
    if len(args) != 2 or set(kwargs) - {"out_int32", "right", "side"} or not all(_tensorlike(a) for a in args):
        return _fallback(name, func, args, kwargs, L)
    seq, vals = args
    if not _at(seq, L):
        if seq.dim() != 1:
            return _fallback(name, func, args, kwargs, L)
        return _wrap(func(seq, vals._value, **kwargs), L, vals._bdim)  # one sequence: elementwise in values
    if seq.dim() != 1 or vals.dim() != 1:
        return _fallback(name, func, args, kwargs, L)
    B = _batch_size(args, kwargs, L)
    v = _front(vals) if _at(vals, L) else vals.unsqueeze(0).expand(B, *vals.shape)
    return _wrap(func(_front(seq), v.contiguous(), **kwargs), L)


@_rule("linalg_norm")
def _linalg_norm_rule(name, func, args, kwargs, L):
    """linalg.norm(A, ord, dim, keepdim): the dims it reduces, made explicit from the logical rank."""
    x = args[0]
    if not _only_self_batched(args, kwargs, L) or set(kwargs) - {"ord", "dim", "keepdim"} or len(args) > 4:
        return _fallback(name, func, args, kwargs, L)
    ord_ = kwargs.get("ord", args[1] if len(args) > 1 else None)
    d = kwargs.get("dim", args[2] if len(args) > 2 else None)
    keep = kwargs.get("keepdim", args[3] if len(args) > 3 else False)
    v, r = _front(x), x.dim()
    if d is None:
        if ord_ is None:  # the 2-norm of all elements
            out = _wrap(func(v.reshape(v.shape[0], -1), None, 1, False), L)
            return out.reshape(*([1] * r)) if keep else out
        if r not in (1, 2):
            return _fallback(name, func, args, kwargs, L)  # the op's own error
        d = 0 if r == 1 else (0, 1)
    try:
        nd = tuple(_norm_dim(e, r) + 1 for e in d) if isinstance(d, (list, tuple)) else _norm_dim(d, r) + 1
    except (IndexError, TypeError):
        return _fallback(name, func, args, kwargs, L)
    return _wrap(func(v, ord_, nd, keep), L)

# ---------------------------------------------------------------- metadata and broadcasting
def _stand_in(a):
    """An empty tensor that promotes as the logical `a` does (dtype, and 0-d or not)."""
    if type(a) is BatchedTensor:
        return ember.empty(() if a.dim() == 0 else (0,), dtype=a.dtype)
    if type(a) in (list, tuple):
        return type(a)(_stand_in(e) for e in a)
    return a


@_rule("result_type", "promote_types", "can_cast")
def _metadata_rule(name, func, args, kwargs, L):
    return func(*[_stand_in(a) for a in args], **{k: _stand_in(v) for k, v in kwargs.items()})


@_rule("broadcast_tensors")
def _broadcast_tensors_rule(name, func, args, kwargs, L):
    ts = list(args[0]) if len(args) == 1 and type(args[0]) in (list, tuple) else list(args)
    if kwargs or not all(_tensorlike(t) for t in ts):
        return _fallback(name, func, args, kwargs, L)
    r = max(t.dim() for t in ts)
    # every member to rank r + 1 with the batch first; unbatched ones get a size-1 batch dim
    phys = [_pad(_front(t), r - t.dim()) if _at(t, L) else t.reshape((1,) * (r + 1 - t.dim()) + tuple(t.shape))
            for t in ts]
    return tuple(BatchedTensor(o, 0, L) for o in func(*phys))


def elementwise(fn):
    """For Python compositions that are elementwise in their tensor arguments (with broadcasting) but
    take data-dependent steps (.item()): under vmap they run once on the physical values, the batch
    dims moved to the front and ranks aligned, instead of failing or looping per sample."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        L = _max_level(args, kwargs)
        if L == 0 or kwargs.get("out") is not None:
            return fn(*args, **kwargs)
        return _elementwise(fn.__name__, wrapper, args, kwargs, L)
    return wrapper


# ---------------------------------------------------------------- ops over the last two dims, any batch
def _matrix_batch_rule(name, func, args, kwargs, L):
    """linalg ops on (*, m, n): the vmap batch becomes one more leading batch dim."""
    x = args[0]
    if not _only_self_batched(args, kwargs, L) or x.dim() < 2:
        return _fallback(name, func, args, kwargs, L)  # the op's own error for fewer than 2 dims
    return _wrap(func(_front(x), *args[1:], **kwargs), L)


for _n in ("linalg_inv", "linalg_det", "linalg_slogdet", "linalg_cholesky", "linalg_qr", "linalg_svd",
           "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh", "linalg_pinv", "linalg_matrix_rank",
           "linalg_matrix_power", "inverse", "det", "slogdet", "logdet", "cholesky", "qr", "svd", "pinverse",
           "matrix_power", "matrix_exp", "tril", "triu", "linalg_lu_factor_ex", "linalg_eigvals", "linalg_eig",
           "linalg_geqrf"):
    _RULES[_n] = _matrix_batch_rule


@_rule("linalg_solve_triangular")
def _solve_triangular_rule(name, func, args, kwargs, L):
    """A (*, n, n) and B (*, n, k) broadcast their batch dims: both get the vmap batch first and the
    same rank, as elementwise operands do."""
    if len(args) != 2 or any(_level_of(v) == L for v in kwargs.values()) or not all(_tensorlike(a) for a in args) \
            or min(a.dim() for a in args) < 2:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    return _elementwise(name, func, args, kwargs, L)


@_rule("trace")
def _trace_rule(name, func, args, kwargs, L):
    x = args[0]
    if len(args) != 1 or kwargs or x.dim() != 2:
        return _fallback(name, func, args, kwargs, L)
    return _wrap(_front(x).diagonal(0, 1, 2).sum(-1), L)


@_rule("fliplr", "flipud")
def _flip_lr_ud_rule(name, func, args, kwargs, L):
    x = args[0]
    need = 2 if name == "fliplr" else 1
    if len(args) != 1 or kwargs or x.dim() < need:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    return _wrap(_front(x).flip(2 if name == "fliplr" else 1), L)


@_rule("msort")
def _msort_rule(name, func, args, kwargs, L):
    x = args[0]
    if len(args) != 1 or kwargs or x.dim() == 0:
        return _fallback(name, func, args, kwargs, L)
    return _wrap(_front(x).sort(dim=1).values, L)


@_rule("repeat", "tile")
def _repeat_rule(name, func, args, kwargs, L):
    x = args[0]
    if not _only_self_batched(args, kwargs, L) or kwargs:
        return _fallback(name, func, args, kwargs, L)
    reps = tuple(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else tuple(args[1:])
    if not all(isinstance(r, int) for r in reps) or (name == "repeat" and len(reps) < x.dim()):
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    reps = (1,) * (x.dim() - len(reps)) + reps  # tile pads the repeats with leading ones
    return _wrap(_pad(_front(x), len(reps) - x.dim()).repeat((1,) + reps), L)


# ---------------------------------------------------------------- indexed writes, kron, combinations, lstsq
def _batch_rows(B, like, k=0):
    """arange(B) shaped (B, 1, ..., 1) with k trailing ones: as the first index tensor it sends each batch
    entry's writes to its own slice."""
    return ember.arange(B, device=like.device).reshape((B,) + (1,) * k)


def _mask_dynamic_shape_error():
    return RuntimeError("vmap: We do not support batching operators that can support dynamic shape. Attempting to "
                        "batch over indexing with a boolean mask.")


@_rule("index_put", "index_put_")
def _index_put_rule(name, func, args, kwargs, L):
    """self[indices] = values (+= with accumulate) for the whole batch in one call: an arange over the
    batch joins the indices as the first index tensor."""
    if len(args) > 4 or set(kwargs) - {"indices", "values", "accumulate"}:
        return _fallback(name, func, args, kwargs, L)
    x = args[0]
    indices, _ = _get_arg(args, kwargs, 1, "indices", None)
    values, _ = _get_arg(args, kwargs, 2, "values", None)
    accumulate, _ = _get_arg(args, kwargs, 3, "accumulate", False)
    inplace = name.endswith("_")
    if inplace and not _at(x, L):
        raise _inplace_into_unbatched(name)
    # ember takes None as a full slice (torch refuses it): the per-sample path keeps ember's meaning
    if type(indices) not in (list, tuple) or not indices or not _tensorlike(values) or _level_of(accumulate) \
            or not all(_tensorlike(i) for i in indices):
        return _fallback(name, func, args, kwargs, L)
    # an unbatched mask is the same positions for every entry: its nonzero() index tensors
    index_tensors, pos = [], 0
    for i in indices:
        if i.dtype in (ember.bool, ember.uint8):
            if _at(i, L):
                raise _mask_dynamic_shape_error()
            if i.dim() == 0 or tuple(i.shape) != tuple(x.shape[pos:pos + i.dim()]):
                return _fallback(name, func, args, kwargs, L)  # the op's own error
            index_tensors.extend(i.nonzero().unbind(1))
            pos += i.dim()
        else:
            index_tensors.append(i)
            pos += 1
    if pos > x.dim():
        return _fallback(name, func, args, kwargs, L)  # too many indices: the op's own error
    try:
        bshape = tuple(ember.broadcast_shapes(*[tuple(i.shape) for i in index_tensors]))
    except RuntimeError:
        return _fallback(name, func, args, kwargs, L)  # indices that do not broadcast: the op's own error
    B = _batch_size(args, kwargs, L)
    k = len(bshape)
    phys_indices = [_batch_rows(B, x, k)] + [_pad(_front(i), k - i.dim()) if _at(i, L) else i for i in index_tensors]
    # values broadcast against (batch, *index shape, *dims not indexed); an unbatched one gets a size-1 batch
    # dim, so a value of too high a rank fails as under torch.vmap instead of broadcasting into the batch
    indexed_rank = k + x.dim() - pos
    if _at(values, L):
        pv = _pad(_front(values), indexed_rank - values.dim())
    else:
        pv = values.reshape((1,) * max(indexed_rank + 1 - values.dim(), 1) + tuple(values.shape))
    px = _front(x) if _at(x, L) else x.unsqueeze(0).expand((B,) + tuple(x.shape))
    out = func(px, tuple(phys_indices), pv, accumulate)
    return x if inplace else BatchedTensor(out, 0, L)


@_rule("put", "put_")
def _put_rule(name, func, args, kwargs, L):
    """put indexes self's flattened elements: on the (B, numel) view it is index_put with an arange over
    the batch as row index, which also bounds-checks each entry's indices within its own row."""
    if len(args) > 4 or set(kwargs) - {"index", "source", "accumulate"}:
        return _fallback(name, func, args, kwargs, L)
    x = args[0]
    index, _ = _get_arg(args, kwargs, 1, "index", None)
    source, _ = _get_arg(args, kwargs, 2, "source", None)
    accumulate, _ = _get_arg(args, kwargs, 3, "accumulate", False)
    inplace = name.endswith("_")
    if inplace and not _at(x, L):
        raise _inplace_into_unbatched(name)
    if not (_tensorlike(index) and _tensorlike(source)) or _level_of(accumulate) or index.dtype != ember.int64 \
            or source.dtype != x.dtype:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    m = index.numel()
    if source.numel() != m:  # torch.vmap's error type (ember's put raises RuntimeError here)
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {m}")
    B = _batch_size(args, kwargs, L)
    n = x.numel()

    def rows(t, width):  # (B, width) batched, (1, width) unbatched (broadcast over the batch)
        return _front(t).reshape(B, width) if _at(t, L) else t.reshape(1, width)
    flat = rows(x, n) if _at(x, L) else x.reshape(1, n).expand(B, n)
    out = flat.index_put((_batch_rows(B, flat, 1), rows(index, m)), rows(source, m), accumulate)
    out = out.reshape((B,) + tuple(x.shape))
    if inplace:  # the flattened view may be a copy (a moved batch dim): write the result back
        _front(x).copy_(out)
        return x
    return BatchedTensor(out, 0, L)


@_rule("masked_scatter", "masked_scatter_")
def _masked_scatter_rule(name, func, args, kwargs, L):
    """Position j of the flattened (broadcast) mask takes the source element numbered by the count of
    Trues before it: a cumsum of the mask gives every position's source index at once, a gather fetches
    them and where() keeps self where the mask is False. Each step has its own batching rule."""
    if len(args) > 3 or set(kwargs) - {"mask", "source"}:
        return _fallback(name, func, args, kwargs, L)
    x = args[0]
    mask, _ = _get_arg(args, kwargs, 1, "mask", None)
    source, _ = _get_arg(args, kwargs, 2, "source", None)
    inplace = name.endswith("_")
    if inplace and not _at(x, L):
        raise _inplace_into_unbatched(name)
    # an empty source fits only an all-False mask, a data-dependent check: the per-sample path makes it
    if not (_tensorlike(mask) and _tensorlike(source)) or mask.dtype != ember.bool or source.dtype != x.dtype \
            or source.numel() == 0:
        return _fallback(name, func, args, kwargs, L)
    try:
        shape = tuple(ember.broadcast_shapes(tuple(x.shape), tuple(mask.shape)))
    except RuntimeError:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    if inplace and shape != tuple(x.shape):
        return _fallback(name, func, args, kwargs, L)  # in place, self does not broadcast: the op's error
    flat_mask = mask.expand(shape).reshape(-1)
    # a False position's index is never used; clamped it stays in range. A source too short for the
    # mask's Trues makes the gather raise (RuntimeError, as masked_scatter's own check).
    source_index = (flat_mask.long().cumsum(0) - 1).clamp(min=0)
    out = ember.where(mask, source.reshape(-1).gather(0, source_index).reshape(shape), x)
    if inplace:
        x.copy_(out)
        return x
    return out


@_rule("kron")
def _kron_rule(name, func, args, kwargs, L):
    """kron as one broadcast product: both operands padded to a common rank r, a viewed as
    (a1, 1, a2, 1, ...) and b as (1, b1, 1, b2, ...); the product's pairs of dims merge into a1*b1, ..."""
    if len(args) != 2 or kwargs or not all(_tensorlike(a) for a in args):
        return _fallback(name, func, args, kwargs, L)
    r = max(a.dim() for a in args)
    shapes = [(1,) * (r - a.dim()) + tuple(a.shape) for a in args]

    def interleaved(t, shape, first):
        dims = []
        for s in shape:
            dims += [s, 1] if first else [1, s]
        phys = _front(t) if _at(t, L) else t.unsqueeze(0)
        return phys.reshape((phys.shape[0],) + tuple(dims))
    prod = interleaved(args[0], shapes[0], True) * interleaved(args[1], shapes[1], False)
    return BatchedTensor(prod.reshape((prod.shape[0],) + tuple(p * q for p, q in zip(*shapes))), 0, L)


@_rule("combinations")
def _combinations_rule(name, func, args, kwargs, L):
    """Which positions form each combination depends only on the length: the combinations of
    arange(n), computed once, select every batch entry's values."""
    x = args[0]
    if not _only_self_batched(args, kwargs, L) or x.dim() != 1 or len(args) > 3 \
            or set(kwargs) - {"r", "with_replacement"}:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    positions = func(ember.arange(x.shape[0], device=x.device), *args[1:], **kwargs)
    return x.index_select(0, positions.reshape(-1)).reshape(tuple(positions.shape))


@_rule("linalg_lstsq")
def _lstsq_rule(name, func, args, kwargs, L):
    """lstsq takes batches of systems: the vmap batch becomes one more leading batch dim of A and B (an
    unbatched one expanded to it, so B keeps its vector or matrix reading). An output the driver leaves
    empty comes back (0,); under vmap each entry's is empty: (B, 0)."""
    if len(args) < 2 or not all(_tensorlike(a) for a in args[:2]) \
            or any(_level_of(a) == L for a in list(args[2:]) + list(kwargs.values())) \
            or args[0].dim() < 2 or args[1].dim() < 1:
        return _fallback(name, func, args, kwargs, L)  # the op's own error
    B = _batch_size(args, kwargs, L)
    phys = [_front(t) if _at(t, L) else t.unsqueeze(0).expand((B,) + tuple(t.shape)) for t in args[:2]]
    outs = func(*phys, *args[2:], **kwargs)
    wrapped = [BatchedTensor(o if o.dim() and o.shape[0] == B else ember.empty((B, 0), dtype=o.dtype,
                                                                                device=o.device), 0, L)
               for o in outs]
    return type(outs)(wrapped) if type(outs) is not tuple else tuple(wrapped)
