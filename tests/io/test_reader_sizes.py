"""Readers check the sizes a file declares before allocating, against the file and the read cap."""

from __future__ import annotations

import numpy as np
import pytest

import ahbm.io
from ahbm._internal.validation import DEFAULT_MAX_READ_BYTES, check_read_size
from ahbm.errors import AhbmWarning, DataError, FileFormatError
from ahbm.io import Trial, read_c3d, read_trc, write_c3d
from ahbm.opensim import read_mot


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


# ----------------------------------------------------------------------------
# TRC, MOT/STO
# ----------------------------------------------------------------------------


def _trc_text(labels: str, rows: list[str]) -> str:
    head = (
        "PathFileType\t4\t(X/Y/Z)\tx.trc\n"
        "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n"
        f"100\t100\t{len(rows)}\t2\tmm\n"
        f"Frame#\tTime\t{labels}\n"
        "\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n"
    )
    return head + "".join(r + "\n" for r in rows)


def test_trc_labels_without_data_columns(tmp_path):
    rows = [f"{i + 1}\t{i / 100}\t1\t2\t3" for i in range(5)]
    path = tmp_path / "few.trc"
    path.write_text(_trc_text("A\t\t\tB\t\t\t", rows))
    trial = read_trc(path, units=None)  # the columns of B are missing: NaN
    assert trial.points.shape == (5, 2, 3) and np.isnan(trial.points[:, 1]).all()
    assert np.array_equal(trial.points[:, 0], np.tile([1.0, 2.0, 3.0], (5, 1)))
    # 10,000 labels for one marker of data: 150,000 missing values from a 70 kB file
    path = tmp_path / "many.trc"
    path.write_text(_trc_text("A\t\t\t" + "".join(f"X{k}\t\t\t" for k in range(10_000)), rows))
    with pytest.raises(FileFormatError, match=r"many\.trc', line 4: 10001 marker labels"):
        read_trc(path)


def test_text_files_beyond_the_read_cap(tmp_path, small_cap):
    rows = [f"{i + 1}\t{i / 100}\t1\t2\t3\t4\t5\t6" for i in range(20_000)]  # ~ 0.5 MB
    path = tmp_path / "long.trc"
    path.write_text(_trc_text("A\t\t\tB\t\t\t", rows))
    with pytest.raises(FileFormatError, match=r"long\.trc.*read cap"):
        read_trc(path)
    ahbm.io.set_max_read_bytes(64 * 2**20)
    assert read_trc(path).points.shape == (20_000, 2, 3)


def test_mot_many_duplicate_labels_are_reported_quickly(tmp_path):
    labels = "\t".join(["time"] + [f"c{k % 50_000}" for k in range(100_000)])
    path = tmp_path / "dup.mot"
    path.write_text(f"x\nnRows=1\nendheader\n{labels}\n" + "\t".join(["0"] * 100_001) + "\n")
    with pytest.warns(AhbmWarning, match=r"duplicate column labels \['c0', .* and 49990 more"):
        table = read_mot(path)  # kept, as OpenSim reads such a file
    assert len(table.columns) == 100_000


@pytest.mark.parametrize("rate", ["9" * 400, "1e400", "0", "-5"])
def test_trc_rate_beyond_float_range(tmp_path, rate):
    path = tmp_path / "rate.trc"
    path.write_text(_trc_text("A\t\t\t", ["1\t0\t1\t2\t3"]).replace("\n100\t100", f"\n{rate}\t100"))
    with pytest.raises(FileFormatError, match=r"rate\.trc', line 3: DataRate must be a positive"):
        read_trc(path)


@pytest.mark.parametrize("frame", ["1" + "0" * 30, "1e300", "-1e300"])
def test_trc_frame_numbers_beyond_int_range(tmp_path, frame):
    path = tmp_path / "frame.trc"
    rows = [f"{frame}\t0\t1\t2\t3\t4\t5\t6", "2\t0.01\t1\t2\t3\t4\t5\t6"]
    path.write_text(_trc_text("A\t\t\tB\t\t\t", rows))
    with pytest.raises(FileFormatError, match=r"frame\.trc', line 7: Frame# .* is out of range"):
        read_trc(path)


def test_c3d_file_larger_than_the_cap_is_not_read(tmp_path, small_cap):
    path = tmp_path / "big.c3d"
    path.write_bytes(b"\x02\x50" + bytes(small_cap))
    with pytest.raises(FileFormatError, match=r"big\.c3d'.*reading its 1000002 bytes.*read cap"):
        read_c3d(path)
