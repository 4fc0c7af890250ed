"""Computes the Chebyshev series of the Bessel kernels (csrc/ember/ops/bessel.cpp, Note [Bessel
functions]) in 50-digit arithmetic and writes them to csrc/ember/ops/bessel_coefs.inc.

Each series approximates a smooth part f of one function on one interval, in a variable t in [-1, 1]:
the exponential and logarithmic factors, the zeros of J0/J1 and the oscillation of Hankel's form stay
outside f, so that f needs no more than ~30 terms for double precision. The coefficients c_k of
f(t) = sum_k c_k T_k(t) come from f at N Chebyshev nodes (a discrete cosine transform); the series is cut
where |c_k| falls below 1e-18 of max |f|. The check at the end evaluates every series in double, as the
kernel does (Clenshaw's recurrence), at 2000 points against mpmath. For float results the kernel uses the
leading terms only: k_<name>_f32 of them, enough for the dropped terms to sum below 2^-34 max |f| (a few
1e-10 relative where f varies least, a hundredth of a float ulp).

Run: python scripts/fit_bessel.py   (needs mpmath; only when changing a fit)
"""
import os
import random

import mpmath as mp

mp.mp.dps = 50
NODES = 90
CUT = mp.mpf("1e-18")

J0_ZEROS = [mp.besseljzero(0, 1), mp.besseljzero(0, 2)]
J1_ZERO = mp.besseljzero(1, 1)
SWITCH_J = 5  # J/Y: series in x^2 below, Hankel's form (P, Q in 25 / x^2) above


def _hankel_pq(n, x):
    """(P, Q) with J_n = sqrt(2 / (pi x)) (P cos chi - Q sin chi), Y_n = ... (P sin chi + Q cos chi)."""
    chi = x - (2 * n + 1) * mp.pi / 4
    j, y = mp.besselj(n, x), mp.bessely(n, x)
    s = mp.sqrt(mp.pi * x / 2)
    return s * (j * mp.cos(chi) + y * mp.sin(chi)), s * (y * mp.cos(chi) - j * mp.sin(chi))


def _j0_over_zeros(x):
    return mp.besselj(0, x) / ((x * x - J0_ZEROS[0] ** 2) * (x * x - J0_ZEROS[1] ** 2))


# (name, x(t), f(x)); t = -1 .. 1 maps onto the interval named in the comment.
SERIES = [
    # I0, I1 on [0, 8]: t = x / 4 - 1
    ("i0e_small", lambda t: 4 * (t + 1), lambda x: mp.exp(-x) * mp.besseli(0, x)),
    ("i1e_small", lambda t: 4 * (t + 1), lambda x: mp.exp(-x) * mp.besseli(1, x) / x if x else mp.mpf(0.5)),
    # I0, I1 on [8, inf): t = 16 / x - 1
    ("i0e_large", lambda t: 16 / (t + 1), lambda x: mp.sqrt(x) * mp.exp(-x) * mp.besseli(0, x)),
    ("i1e_large", lambda t: 16 / (t + 1), lambda x: mp.sqrt(x) * mp.exp(-x) * mp.besseli(1, x)),
    # K0, K1 on (0, 2]: t = x^2 / 2 - 1; the log(x / 2) I_n(x) parts added back in the kernel
    ("k0_small", lambda t: mp.sqrt(2 * (t + 1)), lambda x: mp.besselk(0, x) + mp.log(x / 2) * mp.besseli(0, x)),
    ("k1_small", lambda t: mp.sqrt(2 * (t + 1)),
     lambda x: x * mp.besselk(1, x) - x * mp.log(x / 2) * mp.besseli(1, x)),
    # K0, K1 on [2, inf): t = 4 / x - 1
    ("k0e_large", lambda t: 4 / (t + 1), lambda x: mp.sqrt(x) * mp.exp(x) * mp.besselk(0, x)),
    ("k1e_large", lambda t: 4 / (t + 1), lambda x: mp.sqrt(x) * mp.exp(x) * mp.besselk(1, x)),
    # J0, J1, Y0, Y1 on [0, 5]: t = 2 x^2 / 25 - 1
    ("j0_small", lambda t: 5 * mp.sqrt((t + 1) / 2), _j0_over_zeros),
    ("j1_small", lambda t: 5 * mp.sqrt((t + 1) / 2), lambda x: mp.besselj(1, x) / (x * (x * x - J1_ZERO ** 2))),
    ("y0_small", lambda t: 5 * mp.sqrt((t + 1) / 2),
     lambda x: mp.bessely(0, x) - 2 / mp.pi * mp.log(x) * mp.besselj(0, x)),
    ("y1_small", lambda t: 5 * mp.sqrt((t + 1) / 2),
     lambda x: (mp.bessely(1, x) - 2 / mp.pi * (mp.besselj(1, x) * mp.log(x) - 1 / x)) / x),
    # Hankel's P and x Q for orders 0 and 1 on [5, inf): t = 50 / x^2 - 1
    ("p0_large", lambda t: 5 * mp.sqrt(2 / (t + 1)), lambda x: _hankel_pq(0, x)[0]),
    ("q0_large", lambda t: 5 * mp.sqrt(2 / (t + 1)), lambda x: _hankel_pq(0, x)[1] * x),
    ("p1_large", lambda t: 5 * mp.sqrt(2 / (t + 1)), lambda x: _hankel_pq(1, x)[0]),
    ("q1_large", lambda t: 5 * mp.sqrt(2 / (t + 1)), lambda x: _hankel_pq(1, x)[1] * x),
]


def chebyshev(x_of_t, f):
    thetas = [mp.pi * (j + mp.mpf(0.5)) / NODES for j in range(NODES)]
    values = [f(x_of_t(mp.cos(th))) for th in thetas]
    c = [2 * mp.fsum(v * mp.cos(k * th) for v, th in zip(values, thetas)) / NODES for k in range(NODES)]
    c[0] /= 2
    top = max(abs(v) for v in values)
    n = max(k for k in range(NODES) if abs(c[k]) > CUT * top) + 1
    return [float(v) for v in c[:n]]


def float_terms(c):
    """How many leading terms keep the dropped ones' sum below 2^-34 of max |f| (over a grid of t)."""
    top = max(abs(clenshaw(c, -1 + 2 * i / 400)) for i in range(401))
    m = len(c)
    while m > 1 and sum(abs(v) for v in c[m - 1:]) < 2.0 ** -34 * top:
        m -= 1
    return m


def clenshaw(c, t):
    """The kernel's evaluation, in double."""
    b1 = b2 = 0.0
    for v in reversed(c[1:]):
        b1, b2 = v + 2 * t * b1 - b2, b1
    return c[0] + t * b1 - b2


def check(c, f, x_of_t):
    rnd = random.Random(0)
    worst = 0.0
    for _ in range(2000):
        t = rnd.uniform(-1, 1)
        exact = f(x_of_t(mp.mpf(t)))
        worst = max(worst, float(abs(clenshaw(c, t) - exact) / abs(exact)))
    return worst


def main():
    out = os.path.join(os.path.dirname(__file__), "..", "csrc", "ember", "ops", "bessel_coefs.inc")
    lines = ["// Generated by scripts/fit_bessel.py: Chebyshev series, lowest term first (Note [Bessel functions]).\n"]
    for name, x_of_t, f in SERIES:
        c = chebyshev(x_of_t, f)
        err = check(c, f, x_of_t)
        print(f"{name:10s} {len(c):3d} terms, max relative error {err:.2e}")
        lines.append(f"// {len(c)} terms; max relative error of the double evaluation {err:.1e}\n")
        lines.append(f"constexpr double k_{name}[] = {{\n")
        lines += [f"    {v!r},\n" for v in c]
        lines.append("};\n")
        lines.append(f"constexpr size_t k_{name}_f32 = {float_terms(c)};  // terms for float results\n")
    lines.append(f"constexpr double kJ0Zeros[2][2] = {{{_hi_lo(J0_ZEROS[0])}, {_hi_lo(J0_ZEROS[1])}}};  // hi, lo\n")
    lines.append(f"constexpr double kJ1Zero[2] = {_hi_lo(J1_ZERO)};\n")
    with open(out, "w") as fh:
        fh.writelines(lines)


def _hi_lo(z):
    hi = float(z)
    return f"{{{hi!r}, {float(z - mp.mpf(hi))!r}}}"


if __name__ == "__main__":
    main()
