"""Ember's public names against torch 2.13's (issue 18: API breadth).

In scope: public torch.* functions and constants (dtypes, layouts, e/pi/...), Tensor methods and
attributes, torch.linalg, torch.special, torch.fft and torch.nn.functional. Every in-scope name
torch has is either present in ember or listed in MISSING with a reason; names out of scope are in
EXCLUDED with the category that takes them out. The test fails when a new gap appears, when a
listed gap is filled but still listed, or when coverage drops under THRESHOLD. Run with -s to see
the figures.
"""
import types

import pytest

import ember
from conftest import torch


def _callables(mod):
    """Public functions of a module (no submodules, no classes, no typing helpers)."""
    out = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        v = getattr(mod, n)
        if isinstance(v, (types.ModuleType, type)) or not callable(v):
            continue
        if getattr(v, "__module__", "") == "typing":
            continue
        out.append(n)
    return out


def _torch_constants():
    """Non-callable public values of torch: dtypes, layouts, memory formats, math constants."""
    kinds = (torch.dtype, torch.layout, torch.memory_format, float, type(None))
    return [n for n in dir(torch) if not n.startswith("_") and isinstance(getattr(torch, n), kinds)
            and not isinstance(getattr(torch, n), bool)]


def _scopes():
    import torch.nn.functional as tf
    return {
        "torch": ([n for n in _callables(torch)] + _torch_constants(), ember),
        "Tensor": ([n for n in dir(torch.Tensor) if not n.startswith("_")], ember.Tensor),
        "linalg": (_callables(torch.linalg), ember.linalg),
        "special": (_callables(torch.special), ember.special),
        "fft": (_callables(torch.fft), ember.fft),
        "nn.functional": (_callables(tf), ember.nn.functional),
    }


def _names(category, names, scope="torch"):
    return {f"{scope}.{n}": category for n in names.split()}


# ---- Out of scope: each category gets its own issue (or is not part of the API a program uses). ----
EXCLUDED = {}
# Quantization: quantized dtypes, qschemes, observers and quantized kernels.
EXCLUDED.update(_names("quantization", """
    choose_qparams_optimized dequantize empty_quantized fake_quantize_per_channel_affine
    fake_quantize_per_tensor_affine fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
    fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight
    fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix fused_moving_avg_obs_fake_quant int_repr
    q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point quantize_per_channel
    quantize_per_tensor quantize_per_tensor_dynamic quantized_batch_norm quantized_gru quantized_gru_cell
    quantized_lstm quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d
    quantized_rnn_relu_cell quantized_rnn_tanh_cell qint32 qint8 quint2x4 quint4x2 quint8
"""))
EXCLUDED.update(_names("quantization", """
    dequantize int_repr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point
    qscheme
""", "Tensor"))
# Sparse layouts (COO/CSR/CSC/BSR/BSC) and the ops that only take them.
EXCLUDED.update(_names("sparse layouts", """
    sparse_bsc_tensor sparse_bsr_tensor sparse_compressed_tensor sparse_coo_tensor sparse_csc_tensor
    sparse_csr_tensor ccol_indices_copy col_indices_copy crow_indices_copy indices_copy row_indices_copy values_copy
    native_norm dsmm hsmm hspmm smm spmm saddmm sspaddmm resize_as_sparse_ sparse_bsc sparse_bsr sparse_coo sparse_csc
    sparse_csr
"""))
EXCLUDED.update(_names("sparse layouts", """
    ccol_indices coalesce col_indices crow_indices dense_dim indices is_coalesced resize_as_sparse_ row_indices
    smm sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_ sspaddmm to_sparse to_sparse_bsc
    to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr values
""", "Tensor"))
# Nested tensors (the jagged layout).
EXCLUDED.update(_names("nested tensors", "jagged"))
EXCLUDED.update(_names("nested tensors", "to_padded_tensor", "Tensor"))
# Named tensors.
EXCLUDED.update(_names("named tensors", "name", "Tensor"))
# Device back ends other than CPU (CUDA/cuDNN, ROCm/MIOpen, oneDNN tensors, XPU, MPS, IPU, XLA, MTIA...).
EXCLUDED.update(_names("other devices", """
    cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu
    cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable miopen_batch_norm miopen_convolution
    miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose miopen_ctc_loss
    miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d mkldnn_convolution
    mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d mkldnn_rnn_layer get_autocast_gpu_dtype
    get_autocast_ipu_dtype get_autocast_xla_dtype is_autocast_ipu_enabled is_autocast_xla_enabled
    set_autocast_gpu_dtype set_autocast_ipu_dtype set_autocast_ipu_enabled set_autocast_xla_dtype
    set_autocast_xla_enabled is_vulkan_available profiler_allow_cudagraph_cupti_lazy_reinit_cuda12
    batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt batch_norm_gather_stats
    batch_norm_gather_stats_with_counts batch_norm_stats batch_norm_update_stats
"""))
EXCLUDED.update(_names("other devices", """
    ipu is_ipu is_maia is_mps is_mtia is_vulkan is_xla is_xpu mtia record_stream to_mkldnn xpu
""", "Tensor"))
EXCLUDED.update(_names("other devices", "grouped_mm scaled_grouped_mm scaled_mm", "nn.functional"))
# TorchScript, FX, torch.compile, export, symbolic shapes, control-flow operators.
EXCLUDED.update(_names("jit/fx/compile", """
    fork wait import_ir_module import_ir_module_from_buffer parse_ir parse_schema parse_type_comment
    merge_type_from_type_comment unify_type_list sym_constrain_range sym_constrain_range_for_size sym_float
    sym_fresh_size sym_int sym_ite sym_max sym_min sym_not sym_sqrt sym_sum while_loop cond classproperty
    get_file_path
"""))
EXCLUDED.update(_names("jit/fx/compile", """
    assert_int_or_pair boolean_dispatch handle_torch_function has_torch_function has_torch_function_unary
    has_torch_function_variadic
""", "nn.functional"))
# Removed from torch: calling them raises, pointing at torch.linalg.
EXCLUDED.update(_names("removed in torch (raises)", "eig symeig lstsq solve matrix_rank"))
EXCLUDED.update(_names("removed in torch (raises)", "eig symeig lstsq solve", "Tensor"))
# Dtypes without kernels anywhere in ember yet: sub-byte, float8, bit and barebones unsigned types.
EXCLUDED.update(_names("exotic dtypes", """
    bit bits16 bits1x8 bits2x4 bits4x2 bits8 float4_e2m1fn_x2 float8_e4m3fn float8_e4m3fnuz float8_e5m2
    float8_e5m2fnuz float8_e8m0fnu int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7
    uint16 uint32 uint64 complex32 chalf
"""))
EXCLUDED.update(_names("exotic dtypes", "chalf", "Tensor"))
# functorch's first-class dimensions (Tensor.index binds dims to Dim objects): part of torch.func's area.
EXCLUDED.update(_names("functorch first-class dims", "index", "Tensor"))
# Legacy attributes torch keeps only for old Variable code (reinforce raises; volatile is always False).
EXCLUDED.update(_names("legacy", "reinforce volatile", "Tensor"))

# ---- In scope but not in ember yet: name -> why (remove the line when the name lands). ----
MISSING = {
    # Kernels that need their own numerics in C++ (series/asymptotic/rational approximations per range).
    # LAPACK drivers ember does not call yet.
    # Rare or new entry points.
    "torch.hash_tensor": "returns uint64, a dtype ember does not have yet (xor of the elements' 64-bit patterns)",
    "Tensor.hash_tensor": "see torch.hash_tensor",
}

# Coverage (present / in scope) must stay at or above these, per scope and overall.
THRESHOLD = {"torch": 98.4, "Tensor": 99.4, "linalg": 100.0, "special": 98.0, "fft": 100.0, "nn.functional": 100.0,
             "overall": 99.0}


def _measure():
    rows = {}
    for scope, (names, target) in _scopes().items():
        in_scope = [n for n in names if f"{scope}.{n}" not in EXCLUDED]
        present = [n for n in in_scope if target is not None and hasattr(target, n)]
        absent = [f"{scope}.{n}" for n in in_scope if n not in set(present)]
        rows[scope] = (len(present), len(in_scope), absent)
    return rows


def _summary(rows):
    lines = []
    tp = ti = 0
    for scope, (p, n, absent) in rows.items():
        tp, ti = tp + p, ti + n
        lines.append(f"{scope:14s} {p:4d}/{n:4d} = {100.0 * p / n:5.1f}%  ({len(absent)} missing)")
    lines.append(f"{'overall':14s} {tp:4d}/{ti:4d} = {100.0 * tp / ti:5.1f}%")
    return "\n".join(lines), tp / ti


def test_api_coverage_against_torch():
    rows = _measure()
    text, overall = _summary(rows)
    print("\nAPI coverage against torch " + torch.__version__ + "\n" + text)
    absent = {a for _, _, ab in rows.values() for a in ab}
    new_gaps = sorted(absent - set(MISSING))
    filled = sorted(set(MISSING) - absent)
    assert not new_gaps, f"names torch has and ember lacks, not listed in MISSING: {new_gaps}\n{text}"
    assert not filled, f"listed in MISSING but ember has them now (remove them from MISSING): {filled}"
    for scope, (p, n, _) in rows.items():
        assert 100.0 * p / n >= THRESHOLD.get(scope, 0), f"{scope} coverage fell under its threshold\n{text}"
    assert 100.0 * overall >= THRESHOLD.get("overall", 0), text


def test_exclusions_name_real_torch_names():
    """A stale EXCLUDED entry (a name torch no longer has) hides nothing and should go."""
    scopes = _scopes()
    stale = [k for k in EXCLUDED if k.rsplit(".", 1)[1] not in scopes[k.rsplit(".", 1)[0]][0]]
    assert not stale, stale


@pytest.mark.parametrize("key", sorted(MISSING))
def test_missing_entries_give_a_reason(key):
    assert MISSING[key].strip(), key


# ---- Which present names no test mentions (a heuristic: the name as a word in tests/python/*.py) ----
# A ratchet: the number may only go down as tests are added for older names.
UNTESTED_MAX = 0


def _untested():
    import os
    import re
    here = os.path.dirname(os.path.abspath(__file__))
    text = ""
    for f in sorted(os.listdir(here)):
        if f.endswith(".py") and f != os.path.basename(__file__):
            with open(os.path.join(here, f), encoding="utf-8") as fh:
                text += fh.read()
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    out = []
    for scope, (names, target) in _scopes().items():
        for n in names:
            if f"{scope}.{n}" not in EXCLUDED and hasattr(target, n) and n not in words:
                out.append(f"{scope}.{n}")
    return sorted(out)


def test_present_names_are_mentioned_by_some_test():
    untested = _untested()
    print(f"\n{len(untested)} present names no test file mentions: {' '.join(untested)}")
    if UNTESTED_MAX is not None:
        assert len(untested) <= UNTESTED_MAX, untested
