"""Parametrizations built on nn.utils.parametrize: weight_norm, spectral_norm and orthogonal."""
import ember
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dim but `dim` (kept with size 1), or of all of v when dim == -1."""
    if dim == -1:
        return v.norm()
    dims = [d for d in range(v.dim()) if d != dim]
    return v.norm(2, dims, keepdim=True) if dims else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes module.<name> as g * v / ||v|| (norm over all dims but `dim`): original0 = g, original1 = v."""
    wn = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, wn, unsafe=True)

    def load_old_names(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        # Checkpoints of the hook-based weight_norm store <name>_g / <name>_v.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_old_names)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(ember.randn(h, dtype=weight.dtype), dim=0, eps=self.eps)
            v = F.normalize(ember.randn(w, dtype=weight.dtype), dim=0, eps=self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute([self.dim] + [d for d in range(weight.dim()) if d != self.dim])
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with ember.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ember.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ember.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat.detach(), self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ember.vdot(u, ember.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrizes module.<name> as W / sigma(W), sigma estimated by power iteration (updated in training)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(A):
    """Q of A = QR (A tall, possibly complex) with R's diagonal real and non-negative."""
    Q, R = ember.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    """Q^H Q = I up to a tolerance that grows with the size (Q tall)."""
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * (2.0 ** -52 if Q.dtype in (ember.float64, ember.complex128) else 2.0 ** -23)
    return ember.allclose(Q.mH @ Q, ember.eye(k, dtype=Q.dtype), atol=eps)


class _Orthogonal(Module):
    """Maps an unconstrained matrix (or batch) to one with orthonormal columns (rows when wide).

    matrix_exp / cayley: the lower triangle of X (padded to square) gives a skew-Hermitian A and Q is
    the leading columns of exp(A) or of the Cayley transform (I - A/2)^{-1} (I + A/2).
    householder: the strict lower triangle holds reflectors v_i with tau_i = 2 / (1 + |v_i|^2), so
    every H_i is orthogonal; X's diagonal (+-1, never trained) gives the columns' signs.
    With use_trivialization the result is base @ Q: `base` is an orthogonal buffer set by
    right_inverse, so the original parameter starts (and is reset on assignment) at the point that
    maps to Q = I, where the map is well conditioned.
    """

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:  # work with a tall matrix
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            V = X.tril(-1)
            tau = 2.0 / (1.0 + (V * V).sum(-2))
            # .int(): the diagonal is a constant +-1 sign pattern (no gradient flows into it).
            Q = ember.linalg.householder_product(V, tau) * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            L = X.tril()
            if n != k:  # n x k free parameters of an n x n skew matrix
                L = ember.cat([L, L.new_zeros(L.shape[:-1] + (n - k,))], dim=-1)
            A = L - L.mH
            if self.orthogonal_map == "matrix_exp":
                Q = ember.linalg.matrix_exp(A)
            else:
                eye = ember.eye(n, dtype=A.dtype)
                Q = ember.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        """The original tensor that maps to Q (with a trivialization: sets base from Q and returns -I)."""
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        with ember.no_grad():
            Q_in = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transposed = n < k
            if transposed:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    # Inverting exp or Cayley on orthogonal matrices would need a matrix logarithm.
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # geqrf's reflectors give Q up to the signs of R's diagonal (+-1 as Q is orthogonal);
                # those go on X's diagonal. Where geqrf chose no reflection (tau = 0) forward still
                # reflects (tau = 2 / (1 + 0) with v = e_i flips column i): flip that sign back.
                A, tau = ember.geqrf(Q)
                d = A.diagonal(dim1=-2, dim2=-1)
                d.copy_(d.sign() * ember.where(tau == 0, -1.0, 1.0).to(d.dtype))
                return A.mT if transposed else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete the columns to an orthogonal n x n base with random ones
                extra = ember.randn(Q.shape[:-2] + (n, n - k), dtype=Q.dtype)
                Q = _make_orthogonal(ember.cat([Q, extra], dim=-1))
            self.base = Q
            # -I maps to Q = I in every map (householder: tau = 2 and sign -1 on each column).
            neg_eye = ember.zeros_like(Q_in)
            neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrains module.<name> (a matrix or batch of matrices, tall or wide) to orthonormal columns
    (rows when wide): Q^H Q = I. orthogonal_map is "matrix_exp", "cayley" or "householder"
    (default: matrix_exp for square or complex matrices, householder otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
