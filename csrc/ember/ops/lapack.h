// LAPACK-level functions torch exposes outside torch.linalg (the torch.linalg ones are in ops.h).
#pragma once
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

}  // namespace ember
