"""The sample standard deviation, exactly as `statistics.stdev` gives it (exact rational sums,
a correctly rounded square root), in time that grows with the number of distinct values rather
than the number of values: `statistics.stdev` converts every value to a fraction in a Python
loop, 25 s for the six million per-trial figures of a million-trial iteration, whose values
(token counts, pass rates, durations) repeat."""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

# Bits kept before the final rounding: twice a double's mantissa plus guard bits, as CPython's
# statistics module keeps (round-to-odd at this width, then one rounding to float, is correct).
_SQRT_BITS = 2 * sys.float_info.mant_dig + 3


def stdev(xs: Sequence[float]) -> float:
    """statistics.stdev(xs), bit for bit, for two or more finite floats or ints."""
    values = np.asarray(xs, dtype=np.float64)
    if len(values) < 2 or not np.isfinite(values).all() or not _exact_in_float(xs, values):
        return statistics.stdev(xs)
    distinct, counts = np.unique(values, return_counts=True)
    sx: dict[int, int] = {}  # numerators of the exact sums, by power-of-two denominator
    sxx: dict[int, int] = {}
    for value, count in zip(distinct.tolist(), counts.tolist(), strict=True):
        n, d = value.as_integer_ratio()
        sx[d] = sx.get(d, 0) + count * n
        sxx[d] = sxx.get(d, 0) + count * n * n
    total = len(values)
    s1 = sum((Fraction(n, d) for d, n in sx.items()), Fraction(0))
    s2 = sum((Fraction(n, d * d) for d, n in sxx.items()), Fraction(0))
    variance = (total * s2 - s1 * s1) / total / (total - 1)
    return _sqrt_of_fraction(variance.numerator, variance.denominator)


def _exact_in_float(xs: Sequence[float], values: np.ndarray) -> bool:
    """Whether converting to float64 kept every value (ints beyond 2**53 would not)."""
    if isinstance(xs, np.ndarray) and xs.dtype == np.float64:
        return True
    if hasattr(xs, "typecode") and xs.typecode == "d":  # array.array of doubles
        return True
    return all(type(x) is float or (isinstance(x, int) and abs(x) <= 2**53) for x in xs)


def _sqrt_of_fraction(n: int, m: int) -> float:
    """sqrt(n / m) correctly rounded to a float: round-to-odd at _SQRT_BITS bits, then one
    rounding (the method of CPython's statistics module, bugs.python.org/msg407078)."""
    q = (n.bit_length() - m.bit_length() - _SQRT_BITS) // 2
    if q >= 0:
        return (_isqrt_rto(n, m << 2 * q) << q) / 1
    return _isqrt_rto(n << -2 * q, m) / (1 << -q)


def _isqrt_rto(n: int, m: int) -> int:
    """floor(sqrt(n / m)), with its last bit set when inexact (round to odd)."""
    a = math.isqrt(n // m)
    return a | (a * a * m != n)
