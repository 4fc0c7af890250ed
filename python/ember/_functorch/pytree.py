"""A small pytree: nested tuples, lists, dicts and named tuples flattened to their leaves.

vmap's in_dims/out_dims and the argnums of grad/jacrev address inputs and outputs through it.
A spec is (kind, aux, children): kind "leaf", "tuple", "list", "dict" (aux: the keys) or
"namedtuple" (aux: the type); two specs are equal when the structures are.
"""

LEAF = ("leaf", None, ())


def tree_flatten(tree, is_leaf=None):
    """(leaves, spec); is_leaf(x) True stops the descent at x."""
    leaves = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, spec


def _flatten(x, leaves, is_leaf=None):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    if type(x) is tuple:
        return ("tuple", len(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    if type(x) is list:
        return ("list", len(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    if type(x) is dict:
        keys = tuple(x.keys())
        return ("dict", keys, tuple(_flatten(x[k], leaves, is_leaf) for k in keys))
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return ("namedtuple", type(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    if isinstance(x, tuple) and hasattr(type(x), "n_fields"):  # ember.return_types (structseq-like)
        return ("structseq", type(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    leaves.append(x)
    return LEAF


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    out = _unflatten(it, spec)
    return out


def _unflatten(it, spec):
    kind, aux, children = spec
    if kind == "leaf":
        return next(it)
    vals = [_unflatten(it, c) for c in children]
    if kind == "tuple":
        return tuple(vals)
    if kind == "list":
        return vals
    if kind == "dict":
        return dict(zip(aux, vals))
    if kind == "structseq":
        return aux(vals)
    return aux(*vals)


def tree_map(fn, tree, *rests, is_leaf=None):
    """fn over the leaves of tree (and, as further arguments, of the trees in rests, which must
    have tree's structure), rebuilt in tree's structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for r in rests:
        r_leaves, r_spec = tree_flatten(r, is_leaf)
        if r_spec != spec:
            raise ValueError(f"tree_map: the trees differ in structure: {spec_str(spec)} vs {spec_str(r_spec)}")
        others.append(r_leaves)
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def num_leaves(spec):
    kind, _, children = spec
    return 1 if kind == "leaf" else sum(num_leaves(c) for c in children)


def spec_str(spec):
    kind, aux, children = spec
    if kind == "leaf":
        return "*"
    inner = ", ".join(spec_str(c) for c in children)
    if kind == "dict":
        inner = ", ".join(f"{k!r}: {spec_str(c)}" for k, c in zip(aux, children))
        return "{" + inner + "}"
    return ("[" + inner + "]") if kind == "list" else ("(" + inner + ("," if len(children) == 1 else "") + ")")


def broadcast_prefix(prefix, tree_spec, error):
    """Leaves of `prefix` (e.g. in_dims) repeated over the subtree each covers in `tree_spec`."""
    out = []

    def go(p, spec):
        kind, aux, children = spec
        if type(p) in (tuple, list, dict) or (isinstance(p, tuple) and hasattr(type(p), "_fields")):
            pk = "dict" if type(p) is dict else ("list" if type(p) is list else "tuple")
            sk = "tuple" if kind in ("namedtuple", "structseq") else kind
            if pk != sk or len(p) != len(children):
                raise error()
            if pk == "dict":
                if set(p.keys()) != set(aux):
                    raise error()
                for k, c in zip(aux, children):
                    go(p[k], c)
            else:
                for pc, c in zip(p, children):
                    go(pc, c)
            return
        out.extend([p] * num_leaves(spec))

    go(prefix, tree_spec)
    return out
