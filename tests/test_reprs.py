"""Every result object and container prints a short summary, never its data.

A sweep over every dataclass of ahbm fills each field with something large (a
(2000, 40, 3) array, 5,000 labels, a 5,000-character string) and checks that
``repr`` and ``str`` stay under 2,000 characters; real instances of the
containers a user prints most (Trial, Model, SimulationResult, ForcePlate,
EnsembleStats, ResidualAnalysis, a batch report) are checked for their content.
``ahbm.gait`` (GaitResult) is left to that package's own tests.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing

import numpy as np
import pytest

import ahbm
from ahbm.types import ResultRepr

LIMIT = 2000
_SKIP = ("ahbm.__main__", "ahbm.gait", "ahbm.optimize")  # gait: its owner; casadi


def _modules():
    out = []
    for info in pkgutil.walk_packages(ahbm.__path__, "ahbm."):
        if info.name.startswith(_SKIP):
            continue
        try:
            out.append(importlib.import_module(info.name))
        except ImportError:  # an optional dependency
            continue
    return out


#: Containers that are not ResultRepr subclasses but hold a recording or a report.
CONTAINERS = ("Trial", "ForcePlate", "OpenSimTable", "ConversionReport", "Event")


def _dataclasses():
    """Every result object (a ResultRepr dataclass) and container of ahbm."""
    from ahbm.types import ResultRepr

    seen = {}
    for mod in _modules():
        for name, obj in vars(mod).items():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__ == mod.__name__
                and not name.startswith("_")
                and (issubclass(obj, ResultRepr) or name in CONTAINERS)
            ):
                seen[f"{obj.__module__}.{name}"] = obj
    return seen


def _filler(annotation):
    text = str(annotation)
    if "ndarray" in text or "array" in text.lower():
        return np.arange(2000 * 40 * 3, dtype=float).reshape(2000, 40, 3)
    if text.startswith(("list", "tuple", "Sequence")) or "list[" in text:
        return [f"label_{i}" for i in range(5000)]
    if text.startswith("dict") or "dict[" in text:
        return {f"key_{i}": np.ones(100) for i in range(5000)}
    if text in ("str", "<class 'str'>"):
        return "x" * 200  # a long path or reason
    if "float" in text:
        return 1.5
    if "int" in text:
        return 7
    if "bool" in text:
        return True
    return None


DATACLASSES = _dataclasses()
#: Classes whose summary reads real values (units, spans): checked on real instances below.
REAL = ("Trial", "ForcePlate", "SimulationResult", "EnsembleStats", "ResidualAnalysis",
        "ConversionReport", "OpenSimTable")  # fmt: skip


def test_the_sweep_found_the_result_types():
    names = {k.rsplit(".", 1)[1] for k in DATACLASSES}
    assert {"Trial", "ForcePlate", "SimulationResult", "EnsembleStats", "ResidualAnalysis",
            "ConversionReport", "IKResult"} <= names  # fmt: skip
    assert len(DATACLASSES) > 40
    assert {"StaticOptimizationResult", "JointReactionResult"} <= names  # muscles' results


@pytest.mark.parametrize("name", sorted(DATACLASSES))
def test_repr_of_a_large_instance_is_short(name):
    cls = DATACLASSES[name]
    obj = object.__new__(cls)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # annotations naming optional modules
        hints = {}
    for f in dataclasses.fields(cls):
        object.__setattr__(obj, f.name, _filler(hints.get(f.name, f.type)))
    if cls.__repr__ is not ResultRepr.__repr__ and cls.__name__ in REAL:
        return  # a summary computed from real values: test_<...> below
    text = repr(obj)
    assert len(text) < LIMIT, f"{name}: {len(text)} characters: {text[:300]}..."
    assert len(str(obj)) < 20 * LIMIT  # str may be a longer, readable report


# ---------------------------------------------------------------------------
# real instances
# ---------------------------------------------------------------------------


def _trial():
    from ahbm.io import Event, ForcePlate, Trial

    rng = np.random.default_rng(0)
    n, m = 3000, 400
    plate = ForcePlate(
        force=np.c_[np.zeros((4 * n, 2)), np.linspace(0, 700, 4 * n)],
        moment=np.zeros((4 * n, 3)),
        cop=np.zeros((4 * n, 3)),
        free_moment=np.zeros((4 * n, 3)),
        corners=np.array([[0.6, 0.4, 0], [0, 0.4, 0], [0, 0, 0], [0.6, 0, 0]]),
        origin=np.array([0.3, 0.2, 0.0]),
        rate=400.0,
        plate_type=2,
    )
    return Trial(
        points=rng.normal(size=(n, m, 3)),
        point_labels=[f"Subject01:Marker{i}" for i in range(m)],
        point_rate=100.0,
        analogs=rng.normal(size=(4 * n, 64)),
        analog_labels=[f"ch{i}" for i in range(64)],
        analog_rate=400.0,
        force_plates=[plate] * 4,
        events=[Event("Foot Strike", 0.01 * i, "Left") for i in range(300)],
        results={f"r{i}": np.zeros(n) for i in range(50)},
        point_kinds={"Subject01:Marker0": ("angle", "rad")},
        source="/data/" + "long_folder_name/" * 20 + "walk01.c3d",
    )


def test_trial_and_force_plate():
    t = _trial()
    text = repr(t)
    assert len(text) < 300, text
    assert "frames=3000" in text and "points=400 @ 100 Hz [m + 1 model outputs]" in text
    assert "force_plates=4" in text and "events=300" in text and "walk01.c3d" in text
    plate = repr(t.force_plates[0])
    assert plate == (
        "ForcePlate(type 2, 12000 samples @ 400 Hz, 0.6 x 0.4 m, centre (0.3, 0.2, 0) m, "
        "peak Fz 700 N)"
    )


def test_model_lists_its_bodies():
    from ahbm.kinematics.tree import Model

    m = Model(name="chain")
    parent = "ground"
    for i in range(40):
        m.add_body(f"link{i}", parent, {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0,
                   inertia=np.eye(3))  # fmt: skip
        parent = f"link{i}"
    text = repr(m)
    assert text.startswith("Model(name='chain', n_bodies=40, nq=40, nv=40, bodies=[link0, link1")
    assert "(+28 more)" in text and len(text) < 400


def test_simulation_result():
    from ahbm.dynamics import simulate
    from ahbm.kinematics.tree import Model

    m = Model(name="drop")
    m.add_body("b", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0,
               inertia=np.eye(3))  # fmt: skip
    r = simulate(m, (0.0, 0.5), np.zeros(1), np.zeros(1), t_eval=np.linspace(0, 0.5, 2001))
    text = repr(r)
    assert text.startswith("SimulationResult(model=Model, t=array(2001,) float64, q=array(2001, 1)")
    assert text.endswith("; model 'drop', t=0..0.5 s)") and "status=0" in text
    assert len(text) < 600


def test_analysis_results():
    from ahbm.analysis import ensemble_stats, residual_analysis

    rng = np.random.default_rng(1)
    cycles = rng.normal(size=(7, 101, 12, 3))
    cycles[0, :10] = np.nan
    text = repr(ensemble_stats(cycles))
    assert text == (
        "EnsembleStats(mean=array(101, 12, 3) float64, sd=array(101, 12, 3) float64, "
        "n=array(101, 12, 3) int64; 6..7 cycles per point)"
    )
    t = np.arange(500) / 100.0
    x = np.sin(2 * np.pi * 1.5 * t)[:, None] + 0.01 * rng.normal(size=(500, 20))
    text = repr(residual_analysis(x, rate=100.0))
    assert text.startswith("ResidualAnalysis(cutoffs=array(") and "suggested cutoff" in text
    assert "Hz over 20 channels (median" in text and len(text) < 400


def test_batch_report_lists_at_most_twenty_files(tmp_path):
    from pathlib import Path

    from ahbm.io.batch import ConversionReport

    r = ConversionReport(warnings={Path(f"f{i}.c3d"): ["AhbmWarning: x" * 50] * 9
                                   for i in range(500)})  # fmt: skip
    assert len(repr(r)) < 200
    text = str(r)
    assert "... and 480 more files" in text and len(text) < 6000


def test_opensim_table(tmp_path):
    import pandas as pd

    from ahbm.opensim import read_mot, write_mot

    df = pd.DataFrame(np.zeros((3000, 60)), columns=[f"coord_{i}" for i in range(60)],
                      index=pd.Index(np.arange(3000) / 100.0, name="time"))  # fmt: skip
    write_mot(df, tmp_path / "ik.mot", in_degrees=True)
    text = repr(read_mot(tmp_path / "ik.mot"))
    assert "3000 rows 0..29.99 s, 60 columns [coord_0, coord_1" in text
    assert "(+52 more)" in text and len(text) < 400
