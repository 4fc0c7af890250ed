"""Functions PyTorch writes in Python (torch.functional): einsum's sublist form."""
from ember import _C

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_to_subscripts(sublist):
    # Labels 0..51 keep their order as letters (A-Z then a-z), so the implicit output of the
    # equation form (labels used once, in sorted order) matches the sublist form's.
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
            continue
        if not 0 <= s < len(_LETTERS):
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        out.append(_LETTERS[s])
    return "".join(out)


def einsum(*args):
    """einsum(equation, *operands) or einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        return _C.einsum(*args)
    operands = list(args[0::2])
    sublists = list(args[1::2])
    out = None
    if len(args) % 2 == 1:  # a trailing output sublist
        out = operands.pop()
    lhs = ",".join(_sublist_to_subscripts(s) for s in sublists)
    eq = lhs if out is None else lhs + "->" + _sublist_to_subscripts(out)
    return _C.einsum(eq, *operands)
