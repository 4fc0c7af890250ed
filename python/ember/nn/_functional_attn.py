"""Attention in nn.functional: scaled_dot_product_attention and multi_head_attention_forward.

Both are compositions of ember ops (matmul, softmax, masked_fill, dropout, linear), so autograd
comes from the parts. Note [SDPA composition]:
- scores = (q * scale) @ k^T per query block; a boolean mask (True = take part) or is_causal
  fills the excluded scores with -inf, a float mask is added;
- rows with no admitted key (all False / all -inf) give zeros and zero gradients, as torch
  2.13's CPU path does: such rows are unmasked before the softmax (so it stays finite and its
  backward has no NaN) and their weights are zeroed after it;
- when batch * L * S is large the queries are processed in blocks of rows, so only one block of
  scores (about _SDPA_BLOCK_ELEMS elements) exists at a time outside autograd's saved tensors;
  with is_causal a block also leaves out the keys after its last row.
float32/float64 without dropout (and without a float mask that requires grad) take the fused C++
op instead (ember._C._nn_sdpa_fused, Note [Fused attention] in csrc/ember/cpu/attention_kernels.h):
one node, the probabilities recomputed in backward from the row log-sum-exp.
"""
import math
import warnings

import ember
from ember import _C

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

# Score elements (over all batch/head dims) above which the queries are split into row blocks.
_SDPA_BLOCK_ELEMS = 1 << 22

_NEG_INF = float("-inf")

# The fused op for the cases it covers (tests switch it off to check the composition).
_FUSED = True


def _dtype_str(dt):
    return str(dt).split(".")[-1]


def _check_sdpa_inputs(query, key, value, attn_mask, is_causal):
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_dtype_str(query.dtype)} key.dtype: {_dtype_str(key.dtype)} and value.dtype: "
                           f"{_dtype_str(value.dtype)} instead.")
    if query.is_complex():
        raise NotImplementedError(f"scaled_dot_product_attention: not implemented for '{_dtype_str(query.dtype)}'")
    if not query.is_floating_point():
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point query, key and value, but got "
                           f"{_dtype_str(query.dtype)}")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if attn_mask.dtype not in (ember.bool, ember.float32, query.dtype):
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_dtype_str(attn_mask.dtype)} and query.dtype: "
                               f"{_dtype_str(query.dtype)} instead.")


def _repeat_heads(query, key, value):
    """enable_gqa: key/value heads (dim -3) repeated so each group of query heads shares one."""
    if query.dim() < 3 or key.dim() < 3 or value.dim() < 3:
        return key, value
    hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
    if hk == 0 or hv == 0 or hq % hk != 0 or hq % hv != 0:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
    if hk != hq:
        key = key.repeat_interleave(hq // hk, -3)
    if hv != hq:
        value = value.repeat_interleave(hq // hv, -3)
    return key, value


def _attention_block(q, kt, v, bool_mask, float_mask, dead_rows, dropout_p):
    """softmax(q @ kt [masked]) @ v for one block of query rows; q is already scaled."""
    scores = ember.matmul(q, kt)
    if bool_mask is not None:
        scores = scores.masked_fill(bool_mask.logical_not(), _NEG_INF)
    elif float_mask is not None:
        scores = scores + float_mask
    attn = _C.softmax(scores, -1, None)
    if dead_rows is not None:
        attn = attn.masked_fill(dead_rows, 0.0)
    if dropout_p > 0.0:
        attn = _C._nn_dropout(attn, dropout_p, True, False)
    return ember.matmul(attn, v)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value over the last two dims.

    query (..., L, E), key (..., S, E), value (..., S, Ev); leading dims broadcast. attn_mask is
    boolean (True = may attend) or float (added to the scores) and broadcasts to (..., L, S);
    is_causal lets query i see keys j <= i. enable_gqa repeats key/value heads (dim -3) to the
    query's head count. Rows that may attend to nothing give zeros.
    """
    from ember.nn.attention import _check_kernel_available
    _check_kernel_available()  # an sdpa_kernel block may allow only GPU kernels
    lowered = ember.amp._lower_if_autocast(query, key, value)  # Note [Autocast]: a lower-precision op
    if lowered is not None:
        with ember.autocast("cpu", enabled=False):
            return scaled_dot_product_attention(*lowered, attn_mask=attn_mask, dropout_p=dropout_p,
                                                is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    _check_sdpa_inputs(query, key, value, attn_mask, is_causal)
    if enable_gqa:
        key, value = _repeat_heads(query, key, value)
    dropout_p = float(dropout_p)
    if _FUSED and dropout_p == 0.0 and query.dtype in (ember.float32, ember.float64) and (
            attn_mask is None or attn_mask.dtype == ember.bool or not attn_mask.requires_grad):
        # the fused C++ op (Note [Fused attention] in csrc/ember/cpu/attention_kernels.h)
        if attn_mask is not None and attn_mask.dtype not in (ember.bool, query.dtype):
            attn_mask = attn_mask.to(query.dtype)
        return _C._nn_sdpa_fused(query, key, value, attn_mask, is_causal, scale)
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else float(scale)
    batch = ember.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]), tuple(value.shape[:-2]))
    score_shape = tuple(batch) + (L, S)

    bool_mask = float_mask = dead_rows = None
    if attn_mask is not None:
        try:
            full = tuple(ember.broadcast_shapes(tuple(attn_mask.shape), score_shape))
        except RuntimeError:
            full = None
        if full != score_shape:
            raise RuntimeError(f"attn_mask of shape {list(attn_mask.shape)} cannot be broadcast to the attention "
                               f"scores' shape {list(score_shape)}")
        if attn_mask.dtype == ember.bool:
            dead = attn_mask.logical_not().all(-1, keepdim=True) if S > 0 else None
            if dead is not None and bool(dead.any()):
                attn_mask = attn_mask.logical_or(dead)
                dead_rows = dead
            bool_mask = attn_mask
        else:
            float_mask = attn_mask if attn_mask.dtype == query.dtype else attn_mask.to(query.dtype)
            dead = (float_mask == _NEG_INF).all(-1, keepdim=True) if S > 0 else None
            if dead is not None and bool(dead.any()):
                float_mask = float_mask.masked_fill(dead, 0.0)
                dead_rows = dead
    dropout_p = float(dropout_p)

    q = query * scale_factor
    kt = key.transpose(-2, -1)
    nbatch = 1
    for d in batch:
        nbatch *= d
    rows = L
    if nbatch * L * S > _SDPA_BLOCK_ELEMS:
        rows = max(1, _SDPA_BLOCK_ELEMS // max(1, nbatch * S))
    if rows >= L:
        if is_causal:
            bool_mask = ember.ones((L, S), dtype=ember.bool).tril()
        return _attention_block(q, kt, value, bool_mask, float_mask, dead_rows, dropout_p)

    def rows_of(t, lo, hi):
        # a mask's query dim may be missing (1-d mask) or broadcast (size 1)
        if t is None or t.dim() < 2 or t.size(-2) == 1:
            return t
        return t[..., lo:hi, :]

    outs = []
    for lo in range(0, L, rows):
        hi = min(L, lo + rows)
        if is_causal:
            # rows lo..hi-1 see keys 0..hi-1 only: the later keys are left out of the block
            s_hi = min(S, hi)
            bm = ember.ones((hi - lo, s_hi), dtype=ember.bool).tril(lo)
            outs.append(_attention_block(q[..., lo:hi, :], kt[..., :s_hi], value[..., :s_hi, :], bm, None, None,
                                         dropout_p))
            continue
        outs.append(_attention_block(q[..., lo:hi, :], kt, value, rows_of(bool_mask, lo, hi),
                                     rows_of(float_mask, lo, hi), rows_of(dead_rows, lo, hi), dropout_p))
    return ember.cat(outs, -2)


# ---- multi-head attention ----

def _none_or_dtype(t):
    if t is None:
        return None
    if isinstance(t, ember.Tensor):
        return t.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ember.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of target_type with -inf at True; float masks pass."""
    if mask is None:
        return None
    if mask.dtype != ember.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.")
    if mask.dtype == ember.bool:
        return ember.zeros(tuple(mask.shape), dtype=target_type).masked_fill(mask, _NEG_INF)
    return mask


def _shape(t):
    return tuple(t.shape)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) inputs, False for unbatched (2-D); AssertionError otherwise (as torch)."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                     f"found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                want = (num_heads, query.shape[0], key.shape[0])
                if _shape(attn_mask) != want:
                    raise AssertionError(f"Expected `attn_mask` shape to be {want} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _project_qkv(query, key, value, use_separate, in_proj_weight, in_proj_bias, q_w, k_w, v_w, E):
    """The three input projections (the packed weight is (3E, E): rows for q, then k, then v)."""
    linear = _C.linear
    if not use_separate:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if key is value and query is key:
            # self-attention: one GEMM, then split
            qkv = linear(query, in_proj_weight, in_proj_bias)
            return qkv.split(E, -1)
        w_q, w_k, w_v = in_proj_weight.split(E, 0)
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.split(E, 0)
        if key is value:
            # encoder-decoder attention: key and value share one GEMM
            kv = linear(key, ember.cat([w_k, w_v], 0), None if in_proj_bias is None else ember.cat([b_k, b_v], 0))
            k, v = kv.split(E, -1)
            return linear(query, w_q, b_q), k, v
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    if q_w is None:
        raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
    if k_w is None:
        raise AssertionError("use_separate_proj_weight is True but k_proj_weight is None")
    if v_w is None:
        raise AssertionError("use_separate_proj_weight is True but v_proj_weight is None")
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.split(E, 0)
    eq, ek, ev = query.shape[-1], key.shape[-1], value.shape[-1]
    for name, w, want in (("query", q_w, (eq, eq)), ("key", k_w, (eq, ek)), ("value", v_w, (eq, ev))):
        if _shape(w) != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and _shape(b) != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {b.shape}")
    return linear(query, q_w, b_q), linear(key, k_w, b_k), linear(value, v_w, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """nn.MultiheadAttention's computation on (L, N, E) query and (S, N, Ek/Ev) key/value (or unbatched).

    Returns (output (L, N, E), weights (N, L, S) averaged over heads or (N, H, L, S); None
    unless need_weights). Masks: key_padding_mask (N, S) and attn_mask (L, S) or (N*H, L, S),
    boolean (True = masked out) or float (added).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # the hint alone drives scaled_dot_product_attention
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if _shape(key)[:2] != _shape(value)[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif _shape(key) != _shape(value):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    q, k, v = _project_qkv(query, key, value, use_separate_proj_weight, in_proj_weight, in_proj_bias,
                           q_proj_weight, k_proj_weight, v_proj_weight, embed_dim)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if _shape(attn_mask) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if _shape(attn_mask) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ember.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ember.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (len, N, E) -> (N * H, len, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}")
        v = static_v

    if add_zero_attn:
        k = ember.cat([k, k.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        v = ember.cat([v, v.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.size(1)
    if key_padding_mask is not None:
        for d, want in ((0, bsz), (1, src_len)):
            if key_padding_mask.shape[d] != want:
                raise AssertionError(f"Expected key_padded_mask.shape[{d}] to be {want}, but got "
                                     f"{key_padding_mask.shape[d]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        # explicit weights (a plain softmax: a row with nothing to attend to is NaN, as torch)
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = ember.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = ember.bmm(q_scaled, k.transpose(-2, -1))
        weights = _C.softmax(weights, -1, None)
        if dropout_p > 0.0:
            weights = _C._nn_dropout(weights, dropout_p, True, False)
        out = ember.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _C.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _C.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _pad_last(mask):
    """One more (admitted) key position: a zero column appended on the last dim."""
    return ember.cat([mask, mask.new_zeros(tuple(mask.shape[:-1]) + (1,))], -1)
