"""Readers check the sizes a file declares before allocating, against the file and the read cap."""

from __future__ import annotations

import numpy as np
import pytest

import ahbm.io
from ahbm._validation import DEFAULT_MAX_READ_BYTES, check_read_size
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io import Trial, read_c3d, write_c3d


@pytest.fixture
def small_cap():
    previous = ahbm.io.set_max_read_bytes(1_000_000)
    yield 1_000_000
    ahbm.io.set_max_read_bytes(previous)


def test_read_cap_default_setting_and_environment(monkeypatch):
    monkeypatch.delenv("AHBM_MAX_READ_BYTES", raising=False)
    assert ahbm.io.max_read_bytes() == DEFAULT_MAX_READ_BYTES == 2 * 2**30
    monkeypatch.setenv("AHBM_MAX_READ_BYTES", "12345")
    assert ahbm.io.max_read_bytes() == 12345
    previous = ahbm.io.set_max_read_bytes(777)
    try:
        assert previous is None and ahbm.io.max_read_bytes() == 777  # the setting wins
    finally:
        ahbm.io.set_max_read_bytes(previous)
    assert ahbm.io.max_read_bytes() == 12345
    monkeypatch.setenv("AHBM_MAX_READ_BYTES", "lots")
    with pytest.raises(DataError, match="AHBM_MAX_READ_BYTES"):
        ahbm.io.max_read_bytes()
    for bad in (0, -1, 1.5, "2GB", True):
        with pytest.raises(DataError, match="nbytes"):
            ahbm.io.set_max_read_bytes(bad)


def test_check_read_size_names_the_file_what_and_how_to_raise_the_cap(small_cap):
    assert check_read_size(small_cap, "x", "file 'a'") == small_cap
    with pytest.raises(FileFormatError) as info:
        check_read_size(10**30, "10**29 frames", "C3D file 'a.c3d'")
    text = str(info.value)
    assert "C3D file 'a.c3d'" in text and "10**29 frames" in text
    assert "set_max_read_bytes" in text and "AHBM_MAX_READ_BYTES" in text


# ----------------------------------------------------------------------------
# C3D
# ----------------------------------------------------------------------------


def _c3d_without_data(tmp_path, n_frames):
    t = Trial(points=np.zeros((n_frames, 0, 3)), point_labels=[], point_rate=100.0)
    write_c3d(t, tmp_path / "empty.c3d")
    return bytearray((tmp_path / "empty.c3d").read_bytes())


def _set_int16_parameter(raw: bytearray, name: bytes, values) -> None:
    """Overwrite the int16 values of parameter `name` (Intel file) in place."""
    k = raw.index(name)
    ndims = raw[k + len(name) + 3]
    start = k + len(name) + 4 + ndims
    for i, v in enumerate(values):
        raw[start + 2 * i : start + 2 * i + 2] = (v & 0xFFFF).to_bytes(2, "little")


def test_c3d_frames_of_zero_bytes_cannot_declare_billions_of_frames(tmp_path):
    raw = _c3d_without_data(tmp_path, 70000)
    assert read_c3d(bytes(raw)).n_frames == 70000  # a count beyond 65535 stays readable
    _set_int16_parameter(raw, b"ACTUAL_END_FIELD", [65535, 65535])
    with pytest.warns(AhbmWarning, match="0 bytes"):
        trial = read_c3d(bytes(raw))
    assert trial.n_frames == 65535  # the header's saturated count, not 4,294,967,296
    assert trial.time.shape == (65535,)


def test_c3d_read_cap_counts_points_and_analogs(tmp_path, small_cap):
    n = 2000  # 2000 frames x 10 points x 34 bytes = 680 kB: within 1 MB
    t = Trial(points=np.ones((n, 10, 3)), point_labels=[f"M{i}" for i in range(10)],
              point_rate=100.0)  # fmt: skip
    write_c3d(t, tmp_path / "a.c3d")
    assert read_c3d(tmp_path / "a.c3d").points.shape == (n, 10, 3)
    t = Trial(points=np.ones((n, 20, 3)), point_labels=[f"M{i}" for i in range(20)],
              point_rate=100.0)  # fmt: skip
    write_c3d(t, tmp_path / "b.c3d")
    with pytest.raises(FileFormatError, match=r"b\.c3d.*2000 frames of 20 points.*read cap"):
        read_c3d(tmp_path / "b.c3d")
