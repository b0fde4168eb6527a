"""Compiled reading of a block of decimal numbers from text (internal).

:func:`parse_decimal_block` reads whitespace-separated numbers, one row per
line, for the MOT/STO/TRC readers of ``ahbm.io``. It only accepts what it can
read exactly as ``float()`` (and numpy's ``loadtxt``) would: plain decimal
numbers ``[+-]digits[.digits][(e|E)[+-]digits]`` whose value is
``m * 10**e`` with an integer ``m < 2**53`` and ``|e| <= 22``. Both factors
are then exact doubles and one IEEE multiplication or division rounds the
product correctly (Clinger's fast path), which is the correctly rounded value
that ``float()`` gives. Every other token (more significant digits, larger
exponents, ``nan``, ``inf``, text) is left to the caller by its byte span;
a block whose layout is anything but regular rows of one length (a blank
line, a lone carriage return, another control character) is refused whole.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_CACHE = True

# exact powers of ten (10**22 is the largest that a double holds exactly)
POW10 = np.array([float(10**k) for k in range(23)])


@njit(cache=_CACHE, nogil=True)
def parse_decimal_block(buf, pow10):  # pragma: no cover - compiled
    """Rows of numbers from the bytes `buf` (uint8).

    Returns ``(status, values, hard)``: ``status`` 0 when the layout is regular
    (then ``values`` is (n_rows, n_columns) and ``hard`` (k, 3) holds, for the
    k tokens left to the caller, their flat index into ``values`` and their
    byte span; those entries of ``values`` are NaN until the caller fills
    them); 1 when the block must be read otherwise (also when more than an
    eighth of the tokens would be left to the caller).
    """
    n = buf.shape[0]
    # rows: count the line ends (an upper bound with the last line unterminated)
    n_lines = 1
    for i in range(n):
        if buf[i] == 10:
            n_lines += 1
    empty = np.zeros((0, 0))
    no_hard = np.zeros((0, 3), dtype=np.int64)
    # the number of columns: tokens of the first line
    n_cols = 0
    i = 0
    while i < n and buf[i] != 10:
        c = buf[i]
        if c == 32 or c == 9 or c == 13:
            i += 1
        else:
            n_cols += 1
            while i < n and buf[i] != 32 and buf[i] != 9 and buf[i] != 10 and buf[i] != 13:
                i += 1
    if n_cols == 0:
        return 1, empty, no_hard
    out = np.empty((n_lines, n_cols))
    # more tokens than this left to the caller: reading them one by one is no faster
    hard_limit = (n_lines * n_cols) // 8
    hard = np.empty((16, 3), dtype=np.int64)
    n_hard = 0
    row = 0
    i = 0
    while i < n:
        col = 0
        # one line
        while True:
            # separators
            while i < n and (buf[i] == 32 or buf[i] == 9):
                i += 1
            if i >= n:
                break
            c = buf[i]
            if c == 13:
                if i + 1 < n and buf[i + 1] == 10:
                    i += 1
                    c = 10
                else:
                    return 1, empty, no_hard
            if c == 10:
                i += 1
                break
            if col >= n_cols:
                return 1, empty, no_hard
            # one token
            start = i
            negative = False
            if c == 43 or c == 45:  # + -
                negative = c == 45
                i += 1
            # the digits: m grows while it holds them exactly (leading zeros keep it 0)
            m = 0
            exp10 = 0
            exact = True
            first = i
            while i < n:
                d = np.int64(buf[i]) - 48
                if d < 0 or d > 9:
                    break
                if m < 100000000000000000:
                    m = m * 10 + d
                else:
                    exact = False
                i += 1
            n_mant = i - first
            if i < n and buf[i] == 46:  # .
                i += 1
                first = i
                while i < n:
                    d = np.int64(buf[i]) - 48
                    if d < 0 or d > 9:
                        break
                    if m < 100000000000000000:
                        m = m * 10 + d
                    else:
                        exact = False
                    i += 1
                exp10 = first - i
                n_mant += i - first
            if n_mant == 0:
                exact = False
            if i < n and (buf[i] == 101 or buf[i] == 69):  # e E
                i += 1
                e_negative = False
                if i < n and (buf[i] == 43 or buf[i] == 45):
                    e_negative = buf[i] == 45
                    i += 1
                e = 0
                e_digits = 0
                while i < n and 48 <= buf[i] <= 57:
                    if e < 100000:
                        e = e * 10 + (np.int64(buf[i]) - 48)
                    e_digits += 1
                    i += 1
                if e_digits == 0:
                    exact = False
                exp10 += -e if e_negative else e
            # the token must end at a separator or a line end
            if i < n and buf[i] != 32 and buf[i] != 9 and buf[i] != 10 and buf[i] != 13:
                exact = False
                while i < n and buf[i] != 32 and buf[i] != 9 and buf[i] != 10 and buf[i] != 13:
                    i += 1
            value = 0.0
            if exact and m == 0:
                value = 0.0
            elif exact and m < 9007199254740992 and -22 <= exp10 <= 22:
                if exp10 < 0:
                    value = m / pow10[-exp10]
                else:
                    value = m * pow10[exp10]
            else:
                exact = False
            if exact:
                out[row, col] = -value if negative else value
            else:
                if n_hard >= hard_limit:
                    return 1, empty, no_hard
                if n_hard == hard.shape[0]:
                    grown = np.empty((2 * n_hard, 3), dtype=np.int64)
                    grown[:n_hard] = hard[:n_hard]
                    hard = grown
                hard[n_hard, 0] = row * n_cols + col
                hard[n_hard, 1] = start
                hard[n_hard, 2] = i
                n_hard += 1
                out[row, col] = np.nan
            col += 1
        if col == 0:  # a blank line (or the end after the last line end)
            if i >= n:
                break
            return 1, empty, no_hard
        if col != n_cols:
            return 1, empty, no_hard
        row += 1
    return 0, out[:row], hard[:n_hard]
