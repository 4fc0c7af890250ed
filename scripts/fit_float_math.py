"""Fits the double polynomials of the float trigonometric, inverse trigonometric and erfinv kernels
(csrc/ember/cpu/unary_math.h, Notes [Float trigonometry], [Float inverse trigonometry] and
[Float erfinv]) and prints their coefficients (lowest degree first, as C hex floats) with the
largest error of each fit:

- sin(r) = r + r^3 P(r^2) and cos(r) = 1 - r^2/2 + r^4 Q(r^2) for |r| <= pi/4 (degree 3 each);
- atan(t) = t + t^3 A(t^2) for |t| <= tan(pi/8) (degree 6);
- erfinv(y) = y g(w), w = -log(1 - y^2): g as a polynomial in w - 2.5 for w <= 5 and in
  sqrt(w) - 3.168... for sqrt(w) in [sqrt(5), 4.1] (degree 10 each; a float's w stays below 16).

Least squares on Chebyshev nodes, against mpmath at 40 digits. Run: python scripts/fit_float_math.py
(needs numpy and mpmath; only when changing a fit).
"""
import math

import numpy as np
from mpmath import mp, mpf

mp.dps = 40


def _nodes(lo, hi, n):
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)


def fit_monomial(f, lo, hi, deg, n=4000):
    """P (monomial, lowest first) fitting f on [lo, hi], and its largest absolute error."""
    z = _nodes(lo, hi, n)
    y = np.array([float(f(mpf(float(v)))) for v in z])
    c = np.polynomial.polynomial.polyfit(z, y, deg)
    zt = np.linspace(lo, hi, 3001)[1::7]
    err = max(abs(float(f(mpf(float(v)))) - np.polyval(c[::-1], v)) for v in zt)
    return c, err


def fit_centered(f, lo, hi, deg, n=600):
    """P in (u - center), lowest first, fitting f(u) on [lo, hi] (Chebyshev fit, then monomials),
    and its largest relative error."""
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    u = _nodes(lo, hi, n)
    y = np.array([float(f(mpf(float(v)))) for v in u])
    p = np.polynomial.chebyshev.cheb2poly(np.polynomial.chebyshev.chebfit((u - mid) / half, y, deg))
    c = np.array([p[k] / half ** k for k in range(len(p))])
    ut = np.linspace(lo, hi, 3001)[::5]
    exact = np.array([float(f(mpf(float(v)))) for v in ut])
    err = np.max(np.abs(np.polyval(c[::-1], ut - mid) - exact) / np.abs(exact))
    return mid, c, err


def _show(name, coefs, err, center=None):
    where = "" if center is None else " in (x - %s)" % float.hex(center)
    print("%s%s, max error %.3g:" % (name, where, err))
    print("  " + ", ".join(float.hex(float(v)) for v in coefs))


def main():
    r2 = (math.pi / 4 * 1.0001) ** 2
    _show("sin P(z)", *fit_monomial(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z) ** 3
                                    if z > 0 else mpf(-1) / 6, 0.0, r2, 3))
    _show("cos Q(z)", *fit_monomial(lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z ** 2
                                    if z > 0 else mpf(1) / 24, 0.0, r2, 3))
    t2 = (math.tan(math.pi / 8) * 1.0001) ** 2
    _show("atan A(z)", *fit_monomial(lambda z: (mp.atan(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z) ** 3
                                     if z > 0 else mpf(-1) / 3, 0.0, t2, 6))

    def g(w):
        y = mp.sqrt(1 - mp.exp(-w))
        return mp.erfinv(y) / y if w > 0 else mp.sqrt(mp.pi) / 2

    mid, c, err = fit_centered(g, 0.0, 5.0, 10)
    _show("erfinv g(w), w <= 5", c, err, mid)
    mid, c, err = fit_centered(lambda s: g(mpf(float(s) * float(s))), float(np.sqrt(5.0)), 4.1, 10)
    _show("erfinv g(s^2), s = sqrt(w) >= sqrt(5)", c, err, mid)


if __name__ == "__main__":
    main()
