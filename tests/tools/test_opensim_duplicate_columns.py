"""MOT/STO files with repeated column labels: read as OpenSim reads them, refused where needed.

OpenSim's stored IK output of its gait2392 example repeats the ground-force labels of
both feet; OpenSim's tools read the coordinates by name. Measured with OpenSim 4.6
(tests/peers/test_opensim_tools.py): its InverseDynamicsTool ignores repeated columns
that are no coordinate, takes the first of a repeated coordinate, and refuses an
external load whose identifier matches a repeated column.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from sample_data import SHARED, needs_shared

from ahbm.errors import AhbmWarning, DataError
from ahbm.io import OpenSimTable
from ahbm.opensim import run_id_setup
from ahbm.opensim.storage import read_mot, table_to_grf, write_mot, write_mot_values

DATA = SHARED / "opensim"
FILES = (
    "subject01.osim",
    "subject01_walk_IK.mot",
    "subject01_walk_grf.mot",
    "subject01_walk_grf.xml",
    "subject01_Setup_ID.xml",
)


def add_columns(src, dst, columns, *, first: bool = False) -> None:
    """Copy a MOT/STO file with extra columns (label -> values (n,)), after the others
    (or right after the time column with `first`); ``nColumns`` follows."""
    lines = src.read_text().splitlines()
    end = next(i for i, s in enumerate(lines) if s.strip().lower() == "endheader")
    head = [
        f"nColumns={len(lines[end + 1].split()) + len(columns)}" if s.startswith("nColumns") else s
        for s in lines[:end + 1]
    ]  # fmt: skip
    labels = lines[end + 1].split()
    rows = [s.split() for s in lines[end + 2 :] if s.strip()]
    extra_labels = list(columns)
    extra = [[repr(float(v[k])) for v in columns.values()] for k in range(len(rows))]
    if first:
        labels = [labels[0], *extra_labels, *labels[1:]]
        rows = [[r[0], *e, *r[1:]] for r, e in zip(rows, extra, strict=True)]
    else:
        labels = labels + extra_labels
        rows = [r + e for r, e in zip(rows, extra, strict=True)]
    body = ["\t".join(labels)] + ["\t".join(r) for r in rows]
    dst.write_text("\n".join(head + body) + "\n")


def subject01(tmp_path):
    for name in FILES:
        shutil.copy(DATA / name, tmp_path / name)
        (tmp_path / name).chmod(0o644)
    return tmp_path


def _mot(tmp_path, labels, rows, *, degrees=False):
    text = (
        f"q\nversion=1\nnRows={len(rows)}\nnColumns={len(labels)}\n"
        f"inDegrees={'yes' if degrees else 'no'}\nendheader\n"
        + "\t".join(labels)
        + "\n"
        + "".join("\t".join(repr(float(v)) for v in r) + "\n" for r in rows)
    )
    path = tmp_path / "dup.mot"
    path.write_text(text)
    return path


def test_read_mot_keeps_repeated_columns_with_a_warning(tmp_path):
    labels = ["time", "knee_angle_r", "ground_force_vx", "pelvis_tx", "ground_force_vx"]
    path = _mot(tmp_path, labels, [[0.0, 90.0, 1.0, 0.5, 2.0], [0.01, 45.0, 3.0, 0.6, 4.0]],
                degrees=True)  # fmt: skip
    with pytest.warns(AhbmWarning, match=r"dup\.mot', line 7: duplicate column labels "
                      r"\['ground_force_vx'\]"):  # fmt: skip
        table = read_mot(path)
    assert table.columns == labels[1:]
    assert table.angle_columns == ["knee_angle_r"]
    np.testing.assert_allclose(table.values[:, 0], [np.pi / 2, np.pi / 4])
    np.testing.assert_array_equal(table.values[:, [1, 3]], [[1.0, 2.0], [3.0, 4.0]])
    df = table.data  # the lazy DataFrame keeps both columns, in file order
    assert df.columns.tolist() == labels[1:]
    np.testing.assert_array_equal(df["ground_force_vx"].to_numpy(), [[1.0, 2.0], [3.0, 4.0]])
    # both columns of a repeated angle label are converted
    path = _mot(tmp_path, ["time", "hip", "hip"], [[0.0, 180.0, 90.0]], degrees=True)
    with pytest.warns(AhbmWarning, match="duplicate column labels"):
        table = read_mot(path)
    assert table.angle_columns == ["hip"]
    np.testing.assert_allclose(table.values[0], [np.pi, np.pi / 2])


def test_writing_repeated_labels_is_refused(tmp_path):
    df = pd.DataFrame([[1.0, 2.0]], columns=["a", "a"], index=pd.Index([0.0], name="time"))
    with pytest.raises(DataError, match=r"duplicate column labels \['a'\].*rename or drop"):
        write_mot(df, tmp_path / "out.mot")
    with pytest.raises(DataError, match=r"duplicate column labels \['a'\].*rename or drop"):
        write_mot(OpenSimTable(df), tmp_path / "out.mot")
    with pytest.raises(DataError, match=r"duplicate labels \['a'\]"):
        write_mot_values([[1.0, 2.0]], tmp_path / "out.mot", time=[0.0], columns=["a", "a"])
    assert not (tmp_path / "out.mot").exists()


def test_table_to_grf_refuses_a_repeated_force_column():
    cols = [f"ground_force_{q}{a}" for q in "vp" for a in "xyz"] + ["ground_force_vy"]
    df = pd.DataFrame([[0.0, 700.0, 0.0, 0.3, 0.0, 0.1, 1.0]], columns=cols,
                      index=pd.Index([0.0], name="time"))  # fmt: skip
    with pytest.raises(DataError, match=r"force columns \['ground_force_vy'\] are repeated"):
        table_to_grf(OpenSimTable(df, source="grf.mot"))


@needs_shared
def test_run_id_setup_reads_repeated_extra_columns(tmp_path):
    folder = subject01(tmp_path)
    ik = folder / "subject01_walk_IK.mot"
    n = len(read_mot(ik))
    rng = np.random.default_rng(7)
    ref = run_id_setup(folder / "subject01_Setup_ID.xml", write=False)
    extra = {"ground_force_vx": rng.normal(size=n), "ground_force_vy": rng.normal(size=n)}
    add_columns(ik, ik, extra)
    add_columns(ik, ik, {"ground_force_vx": rng.normal(size=n)})  # the label again
    with pytest.warns(AhbmWarning, match=r"subject01_walk_IK\.mot', line 11: duplicate column "
                      r"labels \['ground_force_vx'\]"):  # fmt: skip
        res = run_id_setup(folder / "subject01_Setup_ID.xml", output=folder / "ID.sto")
    np.testing.assert_array_equal(res.tau, ref.tau)
    np.testing.assert_array_equal(read_mot(res.output).time, ref.time)


@needs_shared
@pytest.mark.parametrize("first", [False, True])
def test_run_id_setup_takes_the_first_of_a_repeated_coordinate(tmp_path, first):
    folder = subject01(tmp_path)
    ik = folder / "subject01_walk_IK.mot"
    knee = read_mot(ik, angle_columns=[]).data["knee_angle_r"].to_numpy()
    add_columns(ik, folder / "other.mot", {"knee_angle_r": knee + 10.0}, first=first)
    setup = (folder / "subject01_Setup_ID.xml").read_text()
    (folder / "other.xml").write_text(setup.replace("subject01_walk_IK.mot", "other.mot"))
    with pytest.warns(AhbmWarning) as record:
        res = run_id_setup(folder / "other.xml", write=False)
    messages = [str(w.message) for w in record]
    assert any(
        "other.mot' has 2 columns for coordinate 'knee_angle_r'; using the first" in m
        and f"file column {2 if first else 6}" in m
        for m in messages
    ), messages
    # the first one's numbers: the original file, or the knee moved by 10 degrees
    if first:
        df = read_mot(ik, angle_columns=[]).data
        df["knee_angle_r"] = knee + 10.0
        write_mot(OpenSimTable(df, in_degrees=True, name="q"), folder / "moved.mot")
        (folder / "moved.xml").write_text(setup.replace("subject01_walk_IK.mot", "moved.mot"))
        ref = run_id_setup(folder / "moved.xml", write=False)
    else:
        ref = run_id_setup(folder / "subject01_Setup_ID.xml", write=False)
    np.testing.assert_allclose(res.tau, ref.tau, rtol=0, atol=1e-9)


@needs_shared
def test_run_id_setup_refuses_a_repeated_external_load_column(tmp_path):
    folder = subject01(tmp_path)
    grf = folder / "subject01_walk_grf.mot"
    vx = read_mot(grf).data["1_ground_force_vx"].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        add_columns(grf, grf, {"1_ground_force_vx": vx})
    with (
        pytest.warns(AhbmWarning, match="duplicate column labels"),
        pytest.raises(DataError, match=r"ExternalForce 'left': the force column\(s\) "
                      r"\['1_ground_force_vx'\] .*appear more than once in .*walk_grf\.mot"),
    ):  # fmt: skip
        run_id_setup(folder / "subject01_Setup_ID.xml", write=False)
