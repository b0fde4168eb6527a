"""The compiled reader of numeric blocks gives numpy's loadtxt values bit for bit, or declines.

``ahbm._internal.text._compiled_block`` reads most regular blocks itself (decimal
numbers it can round exactly, the others by ``float()``) and returns None for
anything else, which then goes to loadtxt or pandas as before.
"""

from __future__ import annotations

import io
import random
import warnings

import numpy as np
import pytest

from ahbm._internal.text import _compiled_block

EDGE = ["0", "-0", "+0", ".5", "5.", "-.5", "+5.e3", "1e22", "1e23", "9007199254740993",
        "123456789012345678901234", "0.000000000000000000000000001", "1E-5", "1e400",
        "-1e-400", "00012", "0.0075", "1e+05", "4.9e-324", "2.2250738585072014e-308"]  # fmt: skip
WEIRD = ["nan", "inf", "-inf", "NaN", "1_0", "1.5e", "e5", ".", "-", "+-1", "1..2", "0x10",
         "1,5", "\xe9", "1e5.5", "--1", "1e", "1e+"]  # fmt: skip


def _loadtxt(body: bytes):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = np.loadtxt(
                io.BytesIO(body), dtype=np.float64, comments=None, ndmin=2, encoding="latin-1"
            )
    except (ValueError, OverflowError):
        return None
    return None if values.size == 0 or np.isnan(values).any() else values


def _token(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.3:
        return repr(rng.uniform(-1e3, 1e3))
    if r < 0.5:
        digits, v = rng.randint(1, 17), rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        return f"{v:.{digits}g}"
    if r < 0.6:
        return f"{rng.uniform(-1e4, 1e4):.{rng.randint(0, 12)}f}"
    if r < 0.7:
        digits, v = rng.randint(0, 18), rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308)
        return f"{v:.{digits}e}"
    if r < 0.8:
        return rng.choice(EDGE)
    if r < 0.81:
        return rng.choice(WEIRD)
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
    if rng.random() < 0.5:
        k = rng.randint(0, len(digits))
        digits = digits[:k] + "." + digits[k:]
    if rng.random() < 0.3:
        digits += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 40))
    return rng.choice(["", "-", "+"]) + digits


def _block(rng: random.Random, irregular: bool) -> bytes:
    n_rows, n_cols = rng.randint(1, 6), rng.randint(1, 5)
    lines = []
    for _ in range(n_rows):
        k = n_cols + (rng.choice([-1, 1]) if irregular and rng.random() < 0.1 else 0)
        sep = rng.choice([" ", "\t", "  ", "\t\t", " \t"])
        line = sep.join(_token(rng) for _ in range(max(k, 0)))
        lines.append(rng.choice(["", "", " ", "\t"]) + line + rng.choice(["", "", "\t", " ", "\r"]))
    if irregular and rng.random() < 0.1:
        lines.insert(1, "")
    newline = rng.choice(["\n", "\n", "\r\n", "\r"] if irregular else ["\n", "\r\n"])
    end = rng.choice(["\n", "", "\n\n", "\r\n", "\n \n"])
    return (newline.join(lines) + end).encode("latin-1")


@pytest.mark.parametrize("seed", range(4))
def test_compiled_block_equals_loadtxt_or_declines(seed):
    rng = random.Random(seed)
    taken = 0
    for k in range(3000):
        body = _block(rng, irregular=k % 2 == 1)
        got = _compiled_block(memoryview(body))
        if got is None:
            continue
        taken += 1
        want = _loadtxt(body)
        assert want is not None, body
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), body
    assert taken > 100


@pytest.mark.parametrize("fmt", ["%.8g", "%.10f", "%.15g", "%.6e", "%14.6f"])
def test_compiled_block_reads_usual_formats(fmt):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 7)) * 10.0 ** rng.integers(-8, 8, (300, 7))
    body = ("\n".join("\t".join(fmt % v for v in row) for row in x) + "\n").encode()
    got = _compiled_block(memoryview(body))
    assert got is not None
    assert got.tobytes() == _loadtxt(body).tobytes()


def test_compiled_block_declines_mostly_long_numbers():
    x = np.random.default_rng(5).standard_normal((50, 4))
    body = ("\n".join("\t".join(repr(v) for v in row) for row in x) + "\n").encode()
    assert _compiled_block(memoryview(body)) is None
