// LAPACK-level functions torch exposes outside torch.linalg (the torch.linalg ones are in ops.h).
#pragma once
#include <string>
#include <tuple>
#include <utility>

#include "ember/core/tensor.h"

namespace ember {

// torch.geqrf: the QR factorization in LAPACK's compact form for A (*, m, n): `a` holds R on and
// above the diagonal and the Householder vectors below it, `tau` (*, min(m, n)) their scales
// (Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H). Not differentiable, as in torch.
std::pair<Tensor, Tensor> geqrf(const Tensor& a);

// The first n columns of H_1 ... H_k for reflectors stored as geqrf does (a (*, m, n), m >= n >= k,
// tau (*, k), same dtype and batch), by LAPACK orgqr/ungqr. Values only: a graph through it raises
// on backward (ember.linalg.householder_product composes differentiable ops when a gradient is
// needed and calls this otherwise).
Tensor orgqr_values(const Tensor& a, const Tensor& tau);

// torch.linalg.eig: eigenvalues (*, n) and unit-norm right eigenvectors (*, n, n) of a general square matrix,
// complex for real input too, by LAPACK geev; differentiable (backward beside it in lapack.cpp).
std::pair<Tensor, Tensor> linalg_eig(const Tensor& a);
// torch.linalg.eigvals: the eigenvalues alone (eigenvectors still computed when a gradient is needed).
Tensor linalg_eigvals(const Tensor& a);

// torch.linalg.ldl_factor_ex: Bunch-Kaufman LDL^T (LDL^H with hermitian) of A's lower triangle by LAPACK
// sytrf/hetrf: (LD with the upper triangle zeroed, pivots int32 (*, n) as LAPACK gives them (1-based, negative
// for 2x2 blocks), info int32 (*)). Values only: as in torch, a graph through it raises on backward.
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& a, bool hermitian);

// torch.linalg.ldl_solve: X with A X = B from ldl_factor's (LD, pivots), by sytrs/hetrs; batches broadcast.
Tensor ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian);

// torch.linalg.solve_triangular: X with A X = B (left) or X A = B, A (*, n, n) triangular (only the
// `upper` or lower triangle is read; its diagonal neither with unitriangular), by BLAS trsm. Batches
// broadcast and dtypes promote as torch; a zero on the diagonal gives inf/nan, never an error.
// Differentiable (the gradient for A lies in the triangle that is read).
Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular);

// torch.linalg.lu_factor_ex: A (*, m, n) = P L U by LAPACK getrf: (LU, pivots int32 (*, min(m, n)), 1-based,
// info int32 (*), the first zero pivot (1-based) or 0). pivot=false raises (not on the CPU, as torch).
// check_errors raises on a zero pivot with op in the message. Differentiable in LU (square, wide and tall).
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& a, bool pivot, bool check_errors,
                                                       const std::string& op);

// torch.lu_unpack: (P, L, U) from lu_factor's (LU, pivots); L and U differentiable in LU. An unpacked
// part not asked for is an empty tensor.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu, const Tensor& pivots, bool unpack_data,
                                             bool unpack_pivots);

// torch.linalg.lu_solve: X with A X = B (A^H X = B with adjoint; X A = B with left=false) for A given by
// lu_factor, by LAPACK getrs; batches broadcast. With a graph to record it runs as triangular solves
// (differentiable in LU and B, double backward included).
Tensor linalg_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint);

}  // namespace ember
