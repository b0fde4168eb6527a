"""C3D files whose header and parameters disagree, analog formats and unit strings.

Every file is written byte by byte here (independently of ``write_c3d``), one per
case; what ``read_c3d`` returns is asserted against the values written, and, where
ezc3d reads the case the same way, against ezc3d too. The choices are documented
in ``ahbm.io.c3d.data._layout`` and ``read_c3d``'s Notes.
"""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest

from ahbm.errors import AhbmWarning, FileFormatError
from ahbm.io import read_c3d

# ---------------------------------------------------------------------------
# a small C3D writer for tests: parameters from a dict, any header words
# ---------------------------------------------------------------------------


def _record(gid, name, value):
    """One parameter record: str / list of str (chars), ("i2"|"u2"|"f4", values)."""
    nb = name.encode("latin-1")
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        width = max(1, *(len(v) for v in value))
        dims = [width] if len(value) == 1 else [width, len(value)]
        head = struct.pack("<bB", -1, len(dims)) + bytes(dims)
        data = b"".join(v.encode("latin-1").ljust(width) for v in value)
    else:
        kind, values = value
        arr = np.asarray(values)
        dims = list(arr.shape[::-1])  # C3D stores Fortran order: first dimension fastest
        code = {"i2": 2, "u2": 2, "f4": 4}[kind]
        head = struct.pack("<bB", code, len(dims)) + bytes(dims)
        data = np.ascontiguousarray(arr, dtype="<" + kind).tobytes()
    body = head + data + b"\x00"
    return struct.pack("<bb", len(nb), gid) + nb + struct.pack("<h", 2 + len(body)) + body


def _c3d(params, points, analogs, *, header=None, float_storage=False, scale=0.1):
    """Bytes of an Intel C3D file.

    params : {GROUP: {NAME: value}}; points (n_frames, n_stored, 4) raw words;
    analogs (n_frames, spf, n_channels) raw samples (uint16 where ``header["u2"]``).
    header overrides any of n_points, words3, first, last, spf, rate.
    """
    h = dict(header or {})
    n_frames, n_stored = points.shape[:2]
    spf, n_ch = analogs.shape[1:]
    recs = []
    for gid, (group, entries) in enumerate(params.items(), start=1):
        gn = group.encode()
        recs.append(struct.pack("<bb", len(gn), -gid) + gn + struct.pack("<h", 3) + b"\x00")
        recs.extend(_record(gid, name, value) for name, value in entries.items())
    body = b"".join(recs) + b"\x00\x00"
    n_pb = (4 + len(body) + 511) // 512
    psec = (bytes([1, 0x50, n_pb, 84]) + body).ljust(512 * n_pb, b"\x00")
    hdr = bytearray(512)
    hdr[0], hdr[1] = 2, 0x50
    scale = -abs(scale) if float_storage else abs(scale)
    struct.pack_into(
        "<HHHHHfHHf",
        hdr,
        2,
        h.get("n_points", n_stored),
        h.get("words3", spf * n_ch),
        h.get("first", 1),
        h.get("last", n_frames),
        0,
        scale,
        2 + n_pb,
        h.get("spf", spf),
        h.get("rate", 100.0),
    )
    if float_storage:
        frame = np.dtype([("p", "<f4", (n_stored, 4)), ("a", "<f4", (spf, n_ch))])
    else:
        adt = "<u2" if h.get("u2") else "<i2"
        frame = np.dtype([("p", "<i2", (n_stored, 4)), ("a", adt, (spf, n_ch))])
    data = np.empty(n_frames, dtype=frame)
    data["p"] = points
    data["a"] = analogs
    raw = data.tobytes()
    return bytes(hdr) + psec + raw.ljust(-(-len(raw) // 512) * 512, b"\x00")


def _points(n_frames, n_points, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.integers(-3000, 3000, size=(n_frames, n_points, 4)).astype(np.int16)
    raw[..., 3] = rng.integers(1, 200, size=(n_frames, n_points))
    return raw


def _params(n_points, n_ch, spf, *, n_frames=None, rate=100.0, **extra):
    point = {
        "USED": ("i2", n_points),
        "SCALE": ("f4", 0.1),
        "RATE": ("f4", rate),
        "UNITS": "mm",
        "LABELS": [f"M{i}" for i in range(n_points)] or [""],
    }
    if n_frames is not None:
        point["FRAMES"] = ("i2", n_frames)
    analog = {
        "USED": ("i2", n_ch),
        "RATE": ("f4", rate * spf),
        "LABELS": [f"A{i}" for i in range(n_ch)] or [""],
        "SCALE": ("f4", [1.0] * max(n_ch, 1)),
        "OFFSET": ("i2", [0] * max(n_ch, 1)),
        "GEN_SCALE": ("f4", 1.0),
    }
    params = {"POINT": point, "ANALOG": analog}
    for key, value in extra.items():
        group, name = key.split("__")
        params.setdefault(group, {})[name] = value
    return params


def _read(content, match=None, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trial = read_c3d(content, **kw)
    messages = [str(w.message) for w in caught if issubclass(w.category, AhbmWarning)]
    if match is not None:
        assert any(match in m for m in messages), messages
    return trial, messages


def _ezc3d(tmp_path, content):
    ezc3d = pytest.importorskip("ezc3d")
    path = tmp_path / "case.c3d"
    path.write_bytes(content)
    return ezc3d.c3d(str(path))


def _expected_points(raw, scale=0.1):
    return raw[..., :3].astype(float) * scale / 1000.0  # mm -> m


# ---------------------------------------------------------------------------
# 1. header word 3 is not a multiple of word 10
# ---------------------------------------------------------------------------


def test_word3_not_a_multiple_of_word10_reads_with_analog_used(tmp_path):
    n_frames, spf, n_ch = 6, 2, 3
    pts = _points(n_frames, 2)
    an = np.arange(n_frames * spf * n_ch, dtype=np.int16).reshape(n_frames, spf, n_ch)
    content = _c3d(_params(2, n_ch, spf), pts, an, header={"words3": 7})
    trial, _ = _read(content, match="word 3")
    assert trial.analogs.shape == (n_frames * spf, n_ch)
    np.testing.assert_array_equal(trial.analogs, an.reshape(-1, n_ch))
    np.testing.assert_allclose(trial.points, _expected_points(pts))
    ez = _ezc3d(tmp_path, content)["data"]["analogs"][0].T
    np.testing.assert_array_equal(trial.analogs, ez)


def test_word3_not_a_multiple_without_analog_used_is_refused():
    pts = _points(3, 1)
    an = np.zeros((3, 2, 3), dtype=np.int16)
    params = _params(1, 3, 2)
    del params["ANALOG"]["USED"]
    with pytest.raises(FileFormatError, match="not a multiple of word 10.*ANALOG:USED"):
        read_c3d(_c3d(params, pts, an, header={"words3": 7}))


# ---------------------------------------------------------------------------
# 2. analog samples per frame, point count, frames: header against parameters
# ---------------------------------------------------------------------------


def test_analog_samples_per_frame_from_the_rates_when_the_data_agree(tmp_path):
    n_frames, spf, n_ch = 5, 2, 2
    pts = _points(n_frames, 1)
    an = np.arange(n_frames * spf * n_ch, dtype=np.int16).reshape(n_frames, spf, n_ch)
    # header words 3 and 10 claim 4 samples per frame; ANALOG:RATE / POINT:RATE = 2
    content = _c3d(_params(1, n_ch, spf), pts, an, header={"spf": 4, "words3": 8})
    trial, _ = _read(content, match="word 10")
    assert trial.analog_rate == 200.0
    np.testing.assert_array_equal(trial.analogs, an.reshape(-1, n_ch))
    ez = _ezc3d(tmp_path, content)["data"]["analogs"][0].T
    np.testing.assert_array_equal(trial.analogs, ez)


def test_analog_samples_per_frame_from_the_header_when_only_it_fits_the_data():
    n_frames, spf, n_ch = 200, 4, 2
    pts = _points(n_frames, 1)
    an = np.arange(n_frames * spf * n_ch, dtype=np.int16).reshape(n_frames, spf, n_ch)
    # ANALOG:RATE says 2 samples per frame, but the data section holds 4 (header words 3, 10)
    params = _params(1, n_ch, spf)
    params["ANALOG"]["RATE"] = ("f4", 200.0)
    trial, messages = _read(_c3d(params, pts, an), match="400 Hz is used")
    assert trial.analogs.shape == (n_frames * spf, n_ch)
    np.testing.assert_array_equal(trial.analogs, an.reshape(-1, n_ch))
    assert trial.analog_rate == 400.0  # point rate x the samples actually stored


def test_point_count_from_point_used(tmp_path):
    n_frames = 5
    pts = _points(n_frames, 3)
    content = _c3d(_params(3, 0, 0), pts, np.zeros((n_frames, 0, 0)), header={"n_points": 5})
    trial, _ = _read(content, match="POINT:USED = 3 but header word 2 gives 5")
    assert trial.point_labels == ["M0", "M1", "M2"]
    np.testing.assert_allclose(trial.points, _expected_points(pts))
    ez = _ezc3d(tmp_path, content)["data"]["points"][:3].transpose(2, 1, 0) / 1000.0
    np.testing.assert_allclose(trial.points, ez, rtol=1e-6)


def test_points_that_point_used_marks_unused_are_read_past_and_left_out():
    n_frames = 40
    pts = _points(n_frames, 5)  # each frame stores 5 points (header word 2)...
    params = _params(3, 0, 0)  # ... but POINT:USED = 3
    trial, messages = _read(_c3d(params, pts, np.zeros((n_frames, 0, 0))), match="unused")
    assert trial.points.shape == (n_frames, 3, 3)
    # read with 5 points per frame (the data section's length), so frames stay aligned
    np.testing.assert_allclose(trial.points, _expected_points(pts[:, :3]))
    assert trial.point_residuals.shape == (n_frames, 3)


def test_frame_count_from_point_frames(tmp_path):
    pts = _points(8, 2)
    # the header claims 40 frames; POINT:FRAMES and the data section hold 8
    content = _c3d(_params(2, 0, 0, n_frames=8), pts, np.zeros((8, 0, 0)), header={"last": 40})
    trial, _ = _read(content, match="8 frames from frame 1 (POINT:FRAMES)")
    assert trial.n_frames == 8
    np.testing.assert_allclose(trial.points, _expected_points(pts))
    ez = _ezc3d(tmp_path, content)
    assert ez["data"]["points"].shape[2] == 8


def test_frame_count_from_the_header_when_point_frames_is_stale():
    pts = _points(40, 2)
    content = _c3d(_params(2, 0, 0, n_frames=8), pts, np.zeros((40, 0, 0)))
    trial, _ = _read(content)
    assert trial.n_frames == 40
    np.testing.assert_allclose(trial.points, _expected_points(pts))


def test_first_frame_from_the_trial_fields():
    pts = _points(8, 1)
    params = _params(1, 0, 0, TRIAL__ACTUAL_START_FIELD=("i2", [101, 0]),
                     TRIAL__ACTUAL_END_FIELD=("i2", [108, 0]))  # fmt: skip
    trial, _ = _read(_c3d(params, pts, np.zeros((8, 0, 0))), match="from frame 101")
    assert (trial.first_frame, trial.n_frames) == (101, 8)
    assert trial.time[0] == pytest.approx(1.0)  # frame 101 at 100 Hz


def test_nothing_fits_the_file_is_refused():
    pts = _points(8, 2)
    content = _c3d(_params(2, 0, 0, n_frames=60), pts, np.zeros((8, 0, 0)), header={"last": 50})
    with pytest.raises(FileFormatError, match="needs .* bytes"):
        read_c3d(content)


# ---------------------------------------------------------------------------
# 3. analog formats: 128 unsigned channels with their own scales and offsets, BITS
# ---------------------------------------------------------------------------


def test_128_unsigned_channels_with_per_channel_scale_and_offset(tmp_path):
    rng = np.random.default_rng(3)
    n_frames, spf, n_ch = 4, 3, 128
    raw = rng.integers(0, 65536, size=(n_frames, spf, n_ch)).astype(np.uint16)
    scale = rng.uniform(0.001, 2.0, n_ch).astype(np.float32)
    offset = rng.integers(32000, 33500, n_ch)  # above 32767: stored as negative int16 words
    params = _params(
        1, n_ch, spf,
        ANALOG__SCALE=("f4", scale), ANALOG__OFFSET=("i2", offset.astype(np.int16)),
        ANALOG__GEN_SCALE=("f4", 0.5), ANALOG__FORMAT="UNSIGNED", ANALOG__BITS=("i2", 16),
    )  # fmt: skip
    content = _c3d(params, _points(n_frames, 1), raw, header={"u2": True})
    trial, messages = _read(content)
    expected = (raw.reshape(-1, n_ch).astype(float) - offset) * scale.astype(float) * 0.5
    np.testing.assert_allclose(trial.analogs, expected, rtol=1e-12)
    assert not messages
    assert trial.analog_labels[-1] == "A127"


def test_signed_format_keeps_negative_offsets():
    n_frames, spf, n_ch = 3, 2, 2
    raw = np.array([[[-5, 7]] * spf] * n_frames, dtype=np.int16)
    params = _params(1, n_ch, spf, ANALOG__OFFSET=("i2", [-100, 100]))
    trial, _ = _read(_c3d(params, _points(n_frames, 1), raw))
    np.testing.assert_array_equal(trial.analogs[0], [95.0, -93.0])


def test_offset_of_minus_32768_without_format_means_unsigned(tmp_path):
    n_frames, spf, n_ch = 3, 2, 2
    raw = np.array([[[40000, 100]] * spf] * n_frames, dtype=np.uint16)
    params = _params(1, n_ch, spf, ANALOG__OFFSET=("i2", [-32768, -32768]))
    content = _c3d(params, _points(n_frames, 1), raw, header={"u2": True})
    trial, messages = _read(content, match="read as unsigned")
    assert sum("read as unsigned" in m for m in messages) == 1  # said once
    np.testing.assert_array_equal(trial.analogs[0], [40000 - 32768, 100 - 32768])


def test_samples_beyond_analog_bits_warn():
    raw = np.full((3, 1, 1), 5000, dtype=np.int16)
    params = _params(1, 1, 1, ANALOG__BITS=("i2", 12))
    trial, _ = _read(_c3d(params, _points(3, 1), raw), match="ANALOG:BITS = 12")
    assert trial.analogs[0, 0] == 5000.0


# ---------------------------------------------------------------------------
# 4. POINT:UNITS read leniently; plate corners in the same unit; implausible plates
# ---------------------------------------------------------------------------


def _plate_file(units, corner_scale):
    """Float file: 1 point, 6 plate channels; corners of a 0.6 m x 0.4 m plate."""
    n_frames, spf = 4, 1
    pts = np.zeros((n_frames, 1, 4), dtype=np.float32)
    pts[..., :3] = [1.0, 2.0, 0.5]  # in the file's unit
    an = np.zeros((n_frames, spf, 6), dtype=np.float32)
    an[..., 2] = 700.0
    corners = np.array([[0.6, 0.4, 0], [0, 0.4, 0], [0, 0, 0], [0.6, 0, 0]]) * corner_scale
    params = _params(1, 6, spf)
    params["POINT"]["UNITS"] = units
    params["POINT"]["SCALE"] = ("f4", -1.0)
    params["FORCE_PLATFORM"] = {
        "USED": ("i2", 1),
        "TYPE": ("i2", [2]),
        "CORNERS": ("f4", corners.reshape(1, 4, 3)),
        "ORIGIN": ("f4", np.zeros((1, 3))),
        "CHANNEL": ("i2", np.arange(1, 7).reshape(1, 6)),
    }
    return _c3d(params, pts, an, float_storage=True, scale=1.0)


@pytest.mark.parametrize("units", ["mete", "m", "meters", "METRES", "met."])
def test_truncated_metres_give_points_and_plates_in_metres(units):
    trial, messages = _read(_plate_file(units, 1.0))
    np.testing.assert_allclose(trial.points[0, 0], [1.0, 2.0, 0.5])
    assert trial.point_units == "m"
    (plate,) = trial.force_plates
    sides = np.ptp(plate.corners, axis=0)[:2]
    np.testing.assert_allclose(sides, [0.6, 0.4], rtol=1e-6)
    assert not [m for m in messages if "plate" in m or "unknown" in m]


def test_millimetres_and_an_implausible_plate_warn():
    trial, _ = _read(_plate_file("mm", 1000.0))
    np.testing.assert_allclose(np.ptp(trial.force_plates[0].corners, axis=0)[:2], [0.6, 0.4])
    np.testing.assert_allclose(trial.points[0, 0], [1e-3, 2e-3, 5e-4])
    # corners written in metres while POINT:UNITS says mm: a 0.6 mm plate is flagged
    trial, _ = _read(_plate_file("mm", 1.0), match="force plate 1 measures 0.0006 m")
