"""Fuzz tests: mutated and truncated C3D files raise FileFormatError or read.

Every mutated copy is read in this process: a crash, hang, MemoryError or any
exception other than FileFormatError fails the test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sample_data import SHARED

from ahbm.errors import AhbmWarning, FileFormatError
from ahbm.io import Trial, read_c3d

DATA = SHARED / "c3d"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared C3D data not found at {DATA}")

FILES = [
    "pc_int.c3d",
    "pc_real.c3d",
    "dec_int.c3d",
    "dec_real.c3d",
    "sgi_int.c3d",
    "sgi_real.c3d",
    "TYPE-2.C3D",
    "TYPE-4.C3D",
    "gait-raw.c3d",
    "MACsample.c3d",
    "Eb015pi.c3d",
    "16bitanalog.c3d",
    "bad_parameter_section.c3d",
]


def _try_read(content: bytes) -> str:
    """Read `content`; return "ok" or "error" (FileFormatError); anything else fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            t = read_c3d(content)
        except FileFormatError as err:
            assert str(err)  # a message naming the problem
            return "error"
    assert isinstance(t, Trial)
    assert t.points.ndim == 3 and t.points.shape[2] == 3
    assert t.analogs.ndim == 2
    return "ok"


def _param_span(raw: bytes) -> tuple[int, int]:
    start = (raw[0] - 1) * 512
    return start, start + 512 * max(raw[start + 2], 1)


@needs_data
@pytest.mark.parametrize("name", FILES)
def test_byte_flips(name):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    raw = (DATA / name).read_bytes()
    p0, p1 = _param_span(raw)
    outcomes = {"ok": 0, "error": 0}
    for i in range(160):
        b = bytearray(raw)
        n_flips = int(rng.integers(1, 5))
        # mostly the header and the parameter section, where sizes live
        if i % 4 == 0:
            pos = rng.integers(0, len(b), n_flips)
        elif i % 4 == 1:
            pos = rng.integers(0, 512, n_flips)
        else:
            pos = rng.integers(p0, min(p1, len(b)), n_flips)
        for p in pos:
            if i % 3 == 0:
                b[p] = int(rng.integers(0, 256))
            else:
                b[p] ^= 1 << int(rng.integers(0, 8))
        outcomes[_try_read(bytes(b))] += 1
    assert sum(outcomes.values()) == 160


@needs_data
@pytest.mark.parametrize("name", FILES)
def test_truncations(name):
    rng = np.random.default_rng(7)
    raw = (DATA / name).read_bytes()
    p0, p1 = _param_span(raw)
    cuts = list(rng.integers(0, len(raw), 40)) + list(rng.integers(p0, p1, 20)) + [0, 1, 511]
    for cut in cuts:
        _try_read(raw[: int(cut)])


@needs_data
def test_bogus_sizes_do_not_allocate():
    raw = bytearray((DATA / "pc_real.c3d").read_bytes())
    for word, value in [(1, 65535), (2, 65535), (9, 65535), (4, 65535), (3, 65535)]:
        b = bytearray(raw)
        b[2 * word : 2 * word + 2] = value.to_bytes(2, "little")
        assert _try_read(bytes(b)) in ("ok", "error")


@needs_data
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.sampled_from(["pc_real.c3d", "dec_int.c3d", "sgi_int.c3d", "gait-raw.c3d"]),
    st.lists(
        st.tuples(st.floats(0.0, 1.0, exclude_max=True), st.integers(0, 255)),
        min_size=1,
        max_size=12,
    ),
)
def test_parameter_section_hypothesis(name, edits):
    """Arbitrary byte values written anywhere in the parameter section."""
    raw = bytearray(_RAW.setdefault(name, (DATA / name).read_bytes()))
    p0, p1 = _param_span(bytes(raw))
    p1 = min(p1, len(raw))
    for frac, value in edits:
        raw[p0 + int(frac * (p1 - p0))] = value
    _try_read(bytes(raw))


@needs_data
@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=3000))
def test_random_parameter_section(garbage):
    """A valid header followed by an arbitrary parameter section."""
    raw = _RAW.setdefault("pc_int.c3d", (DATA / "pc_int.c3d").read_bytes())
    p0 = (raw[0] - 1) * 512
    content = raw[: p0 + 4] + garbage + raw[p0 + 4 + len(garbage) :]
    _try_read(content)


_RAW: dict[str, bytes] = {}
