"""``ember.utils._pytree``, as ``torch.utils._pytree``: nested tuples, lists, dicts and named
tuples flattened to their leaves and rebuilt (ember.func's pytree, python/ember/_functorch/pytree.py).
A spec is opaque: pass it back to tree_unflatten."""
from ember._functorch.pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure", "tree_all", "tree_any",
           "tree_map_only"]


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_all(pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    """func on the leaves that are instances of type_or_types; the others as they are."""
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree, is_leaf=is_leaf)
