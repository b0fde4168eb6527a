"""Shared helpers for the io tests: a Trial with every field filled, and equality."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from sample_data import SHARED

from ahbm.io.trial import Event, ForcePlate, Trial

DATA = SHARED


def make_full_trial(seed: int = 0, n_frames: int = 40, n_points: int = 5) -> Trial:
    """A Trial with every field set, NaN samples, odd labels and a varied parameter tree."""
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(n_frames, n_points, 3))
    pts[3, 1] = np.nan
    pts[5:9, 0, :] = np.nan
    res = rng.random((n_frames, n_points))
    res[3, 1] = np.nan
    n_an = 4 * n_frames
    plates = [
        ForcePlate(
            force=rng.normal(size=(n_an, 3)),
            moment=rng.normal(size=(n_an, 3)),
            cop=np.where(rng.random((n_an, 1)) < 0.2, np.nan, rng.normal(size=(n_an, 3))),
            free_moment=rng.normal(size=(n_an, 3)),
            corners=rng.random((4, 3)),
            origin=rng.random(3),
            rate=400.0,
            plate_type=k + 2,
        )
        for k in range(2)
    ]
    labels = ["LASI", "R.ASIS", "a/b", "ünï", "M5"][:n_points]
    labels += [f"P{i}" for i in range(len(labels), n_points)]
    return Trial(
        points=pts,
        point_labels=labels,
        point_rate=100.0,
        point_units="m",
        point_descriptions=[f"desc {i}" if i % 2 else "" for i in range(n_points)],
        point_residuals=res,
        point_mask=~np.isnan(res),
        analogs=rng.normal(size=(n_an, 3)),
        analog_labels=["Fx1", "EMG 1", "V"],
        analog_units=["N", "V", ""],
        analog_descriptions=["force", "", "volt"],
        analog_rate=400.0,
        first_frame=11,
        force_plates=plates,
        events=[
            Event("Foot Strike", 0.123, "Left", ""),
            Event("Foot Off", 0.456, "Right", "toe off"),
            Event("Event", 0.5),
        ],
        subject={"name": "S01", "mass": 71.5, "height": np.float32(1.78), "tags": ["a", "b"]},
        parameters={
            "POINT": {
                "RATE": np.array([100.0], dtype=np.float32),
                "USED": np.int16(n_points),
                "LABELS": list(labels),
                "UNITS": "m",
                "SCALE": -0.1,
                "DATA_START": 11,
                "EMPTY": [],
                "NOTHING": None,
                "FLAG": True,
                "MATRIX": rng.normal(size=(2, 3)),
                "CHARS": np.array([["ab", "c"], ["", "def"]]),
            },
            "FORCE_PLATFORM": {
                "CORNERS": rng.random((2, 4, 3)).astype(np.float32),
                "TYPE": np.array([2, 4], dtype=np.int16),
            },
            "__descriptions__": {"POINT": "3-D point parameters", "POINT:RATE": "rate"},
            "weird/key": {"": 1, ".": 2, "%2F": 3},
            "nested": [1, "two", 3.0, [np.arange(3)], ("t", "u")],
        },
        results={
            "knee_angle": rng.normal(size=(n_frames, 3)),
            "rotations": rng.normal(size=(n_frames, 3, 3)),
            "speed": rng.normal(size=n_frames),
            "grf": pd.DataFrame(
                rng.normal(size=(n_frames, 2)),
                index=pd.Index(np.arange(n_frames) / 100.0, name="time"),
                columns=["vx", "vy"],
            ),
        },
        source="/some/where/walk01.c3d",
    )


def assert_values_equal(a, b, where: str = "value") -> None:
    """Exact, NaN-aware, type-aware equality of nested Python/numpy/pandas values."""
    if isinstance(a, pd.DataFrame):
        assert isinstance(b, pd.DataFrame), where
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        assert a.attrs == b.attrs, where
        return
    if isinstance(a, dict):
        assert isinstance(b, dict), f"{where}: {type(b)}"
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_values_equal(a[k], b[k], f"{where}[{k!r}]")
        return
    if isinstance(a, list | tuple):
        assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_values_equal(x, y, f"{where}[{i}]")
        return
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{where}: {type(b)}"
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        if a.dtype.kind in "fc":
            np.testing.assert_array_equal(a, b, err_msg=where)
        else:
            assert np.array_equal(a, b), where
        return
    if isinstance(a, np.generic):
        assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
        assert a == b or (np.isnan(a) and np.isnan(b)), where
        return
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    both_nan = isinstance(a, float) and a != a and b != b
    assert a == b or both_nan, f"{where}: {a!r} != {b!r}"


def assert_trials_equal(a: Trial, b: Trial) -> None:
    """Every field equal (arrays exactly, NaN in the same places)."""
    for f in dataclasses.fields(Trial):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "force_plates":
            assert len(x) == len(y)
            for i, (p, q) in enumerate(zip(x, y, strict=True)):
                for g in dataclasses.fields(ForcePlate):
                    assert_values_equal(
                        getattr(p, g.name), getattr(q, g.name), f"plate{i}.{g.name}"
                    )
        elif f.name == "events":
            assert x == y
        else:
            assert_values_equal(x, y, f.name)
