import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _solve_triangular(a, b, upper=False):
    """X with a X = b for triangular a (batched, broadcasting); only a's triangle is read, so its
    gradient is triangular too."""
    fn = getattr(ember.linalg, "solve_triangular", None)
    if fn is not None:
        return fn(a, b, upper=upper)
    tri = a.triu() if upper else a.tril()
    batch = ember.broadcast_shapes(tri.shape[:-2], b.shape[:-2])
    return ember.linalg.solve(tri.expand(batch + tri.shape[-2:]), b.expand(batch + b.shape[-2:]))


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dimensions."""
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x = |L^-1 x|^2 for lower-triangular L of shape (..., n, n) and x of shape (..., n).

    x may carry more batch dims than L (e.g. sample dims); those become extra right-hand-side
    columns of a single triangular solve per distinct L rather than copies of L."""
    n = bx.size(-1)
    lb = bL.shape[:-2]
    xb = bx.shape[:-1]
    extra = len(xb) - len(lb)
    if extra > 0:
        shared = ember.broadcast_shapes(lb, xb[extra:])
        x = bx.expand(xb[:extra] + shared + (n,))
        x = x.reshape((-1,) + shared + (n,))  # (E, shared..., n)
        rhs = x.movedim(0, -1)  # (shared..., n, E)
        y = _solve_triangular(bL.expand(shared + (n, n)), rhs, upper=False)
        m = y.pow(2).sum(-2)  # (shared..., E)
        return m.movedim(-1, 0).reshape(xb[:extra] + shared)
    y = _solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(p):
    # With J the reversal permutation, chol(J P J) = Lf gives P = U U^T for the upper-triangular
    # U = J Lf J, so the covariance P^-1 = (U^-T)(U^-T)^T and U^-T is its lower Cholesky factor.
    lf = ember.linalg.cholesky(ember.flip(p, (-2, -1)))
    u_t = ember.flip(lf, (-2, -1)).mT  # U^T: lower triangular
    eye = ember.eye(p.shape[-1], dtype=p.dtype)
    return _solve_triangular(u_t, eye.expand(u_t.shape), upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean `loc` and a covariance given by exactly one of
    `covariance_matrix`, `precision_matrix` or its lower Cholesky factor `scale_tril`."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is not None:
                if m.dim() < 2:
                    raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch "
                                     f"dimensions")
                batch_shape = ember.broadcast_shapes(m.shape[:-2], loc.shape[:-1])
                setattr(self, name, m.expand(batch_shape + (-1, -1)))
                given = m
        self.loc = loc.expand(batch_shape + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(given)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        # (L L^T)^-1 as a function of the whole of L (torch's cholesky_inverse gradient convention).
        L = self._unbroadcasted_scale_tril
        eye = ember.eye(L.shape[-1], dtype=L.dtype)
        L_inv = ember.linalg.solve(L, eye.expand(L.shape))
        return ember.matmul(L_inv.mT, L_inv).expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
