#!/usr/bin/env python3
"""Refit kokkos.simd's cubic estimate of 1/sqrt(x) (core/include/nbody/inv_sqrt.hpp, CubicEstimate).

y = y0 * q(s), y0 = bit_cast(magic - (bits(x) >> 1)), s = c - x y0^2, q(s) = s^3 + k1 s + k0.
First the monic cubic s^3 + k2 s^2 + k1 s + k0 at a centre mid-range: the magic constant, which scales
y0, is searched so that its least largest relative error |y0 q(s) sqrt(x) - 1| over x in [1, 4) is
smallest (every positive normal x behaves as one of [1, 4)). Shifting s by k2/3 removes its s^2 term
(the same polynomial, one operation fewer to evaluate); the centre c is then searched near that shift,
in the precision's rounding, with k1, k0 refitted at each. Each fit is a linear programme. Needs numpy
and scipy (Debian: python3-numpy, python3-scipy). Prints the constants and the error in exact
arithmetic; models/kokkos/tests/test_kokkos.cpp measures them with the precision's roundings.
"""
import numpy as np
from scipy.optimize import linprog

PRECISIONS = {  # name: (classic magic constant, mantissa bits, unsigned type, float type)
    "float": (0x5F3759DF, 23, np.uint32, np.float32),
    "double": (0x5FE6EB50C7B537A9, 52, np.uint64, np.float64),
}


def reduced_arguments(magic, utype, ftype, samples):
    """u = x y0^2 for x spread over [1, 2) and [2, 4) (both exponent parities)."""
    x = np.concatenate([np.linspace(1, 2, samples, endpoint=False), np.linspace(2, 4, samples, endpoint=False)])
    x = x.astype(ftype)
    y0 = (utype(magic) - (x.view(utype) >> utype(1))).view(ftype)
    x, y0 = x.astype(np.float64), y0.astype(np.float64)
    return x * y0 * y0


def fit(u, centre, powers):
    """Least largest |sqrt(u) q(s) - 1|, s = centre - u, q = s^3 + the fitted coefficients of s^powers:
    returns the coefficients (highest power first) and the error."""
    s, r = centre - u, np.sqrt(u)
    a = np.stack([r * s**k for k in powers], axis=1)
    b = 1 - r * s**3
    ones = np.ones((len(u), 1))
    free = len(powers)
    res = linprog([0] * free + [1], A_ub=np.vstack([np.hstack([a, -ones]), np.hstack([-a, -ones])]),
                  b_ub=np.concatenate([b, -b]), bounds=[(None, None)] * free + [(0, None)], method="highs")
    return res.x[:free], res.x[free]


def fit_monic(u, ftype):
    """The monic cubic on the range u of x y0^2, centred mid-range (the centre rounded to ftype):
    error, centre, (k2, k1, k0)."""
    centre = float(ftype(0.5 * (u.min() + u.max())))
    coefficients, error = fit(u, centre, (2, 1, 0))
    return error, centre, coefficients


def fit_depressed(u, ftype):
    """s^3 + k1 s + k0 on the range u of x y0^2: the centre (in ftype) searched within 3e-4 of the monic
    fit's shifted centre, where the two are the same polynomial. Returns error, centre, (k1, k0)."""
    _, centre, (k2, _, _) = fit_monic(u, ftype)
    shifted = float(ftype(centre + k2 / 3))
    best = None
    for offset in np.linspace(-3e-4, 3e-4, 61):
        candidate = float(ftype(shifted + offset))
        coefficients, error = fit(u, candidate, (1, 0))
        if best is None or error < best[0]:
            best = (error, candidate, coefficients)
    return best


def main():
    for name, (classic, mantissa_bits, utype, ftype) in PRECISIONS.items():
        # y0 scaled by 2^-d: d near 0.26 makes the best cubic's leading coefficient 1.
        shifts = np.linspace(0.250, 0.266, 65)
        magics = [classic - int(d * 2**mantissa_bits) for d in shifts]
        best = min(magics, key=lambda m: fit_monic(reduced_arguments(m, utype, ftype, 3001), ftype)[0])
        error, centre, (k1, k0) = fit_depressed(reduced_arguments(best, utype, ftype, 60001), ftype)
        if name == "float":
            print(f"float:  magic 0x{best:08X}  centre {np.float32(centre):.9g}f  k1 {np.float32(k1):.9g}f  "
                  f"k0 {np.float32(k0):.9g}f  error {error:.3e}")
        else:
            print(f"double: magic 0x{best:016X}  centre {centre!r}  k1 {k1!r}  k0 {k0!r}  error {error:.3e}")


if __name__ == "__main__":
    main()
