"""Which code runs a kernel (ahbm._engine.backend), and ``ahbm id`` without numba or pandas.

The numpy codings themselves are compared with the compiled kernels in
tests/engine/test_numpy_kernels.py and tests/opensim/test_numpy_codings.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sample_data import SHARED, needs_shared

from ahbm._engine import backend
from ahbm.io import OpenSimTable


def _python(code: str, cwd=None, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "AHBM_KERNELS"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env={**environ, **env},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


# --- the rule ---------------------------------------------------------------------------


def test_outside_a_block_the_compiled_kernels_always_run(monkeypatch):
    monkeypatch.delenv("AHBM_KERNELS", raising=False)
    assert backend.use_compiled(True) and backend.use_compiled(False)


def test_inside_a_block_small_work_runs_in_numpy_until_numba_is_loaded(monkeypatch):
    monkeypatch.delenv("AHBM_KERNELS", raising=False)
    monkeypatch.setattr(backend, "compiled_loaded", lambda: False)
    calls = []
    with backend.numpy_while_small(before_load=lambda: calls.append(1)):
        assert not backend.use_compiled(True)
        assert calls == []
        assert backend.use_compiled(False)  # large work: the compiled kernels load
        assert backend.use_compiled(False)
        assert calls == [1]  # announced once
    assert backend.use_compiled(True)  # the block is over
    monkeypatch.setattr(backend, "compiled_loaded", lambda: True)
    with backend.numpy_while_small():
        assert backend.use_compiled(True)  # loaded anyway: compiled


def test_the_environment_forces_a_side(monkeypatch):
    monkeypatch.setenv("AHBM_KERNELS", "numpy")
    assert not backend.use_compiled(False)
    monkeypatch.setenv("AHBM_KERNELS", "numba")
    with backend.numpy_while_small():
        assert backend.use_compiled(True)


def test_the_engine_imports_numba_only_when_a_compiled_kernel_runs():
    code = (
        "import sys, numpy as np\n"
        "import ahbm.dynamics, ahbm.kinematics\n"
        "from ahbm.models import double_pendulum_3d\n"
        "m = double_pendulum_3d()\n"
        "before = 'numba' in sys.modules\n"
        "ahbm.dynamics.rnea(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv))\n"
        "print(before, 'numba' in sys.modules)"
    )
    assert _python(code) == "False True"


def test_a_short_command_block_runs_kinematics_and_rnea_in_numpy():
    code = (
        "import sys, numpy as np\n"
        "from ahbm._engine.backend import numpy_while_small\n"
        "from ahbm.dynamics import rnea\n"
        "from ahbm.kinematics import forward_kinematics\n"
        "from ahbm.models import human15\n"
        "m = human15(mass=70.0, height=1.75)\n"
        "rng = np.random.default_rng(0)\n"
        "q = rng.normal(size=(50, m.nq)) * 0.3\n"
        "qd = rng.normal(size=(50, m.nv))\n"
        "qdd = rng.normal(size=(50, m.nv))\n"
        "with numpy_while_small():\n"
        "    tau = rnea(m, q, qd, qdd)\n"
        "    R = forward_kinematics(m, q).rotations\n"
        "print('numba' in sys.modules)\n"
        "tau2 = rnea(m, q, qd, qdd)\n"
        "R2 = forward_kinematics(m, q).rotations\n"
        "print(np.abs(tau - tau2).max() <= 1e-10 * (1 + np.abs(tau2).max()),"
        " np.abs(R - R2).max() <= 1e-13)"
    )
    assert _python(code).splitlines() == ["False", "True True"]


# --- OpenSimTable without pandas -------------------------------------------------------


def test_a_table_from_arrays_builds_its_dataframe_on_first_use():
    t = OpenSimTable.from_arrays([0.0, 0.5], [[1.0, 2.0], [3.0, 4.0]], ["a", "b"], name="q")
    assert t.columns == ["a", "b"] and t.index_name == "time" and len(t) == 2
    np.testing.assert_array_equal(t.values, [[1.0, 2.0], [3.0, 4.0]])
    assert "2 rows" in repr(t) and "a, b" in repr(t)
    df = t.data
    assert df.index.name == "time" and df["b"].tolist() == [2.0, 4.0]
    df.loc[0.5, "a"] = 9.0  # the DataFrame is the table from then on
    assert t.values[1, 0] == 9.0 and t.data is df


def test_from_arrays_refuses_mismatched_shapes():
    from ahbm.errors import DataError

    with pytest.raises(DataError, match=r"shape \(len\(time\), len\(columns\)\)"):
        OpenSimTable.from_arrays([0.0, 1.0], [[1.0]], ["a"])


def test_replace_copies_and_checks_names():
    from ahbm.errors import DataError

    t = OpenSimTable.from_arrays([0.0], [[1.0]], ["a"], angle_columns=["a"])
    u = t.replace(name="other", angle_columns=[])
    assert (u.name, u.angle_columns, t.name, t.angle_columns) == ("other", [], "", ["a"])
    with pytest.raises(DataError, match="unknown attribute 'nmae'"):
        t.replace(nmae="x")


def test_read_mot_and_the_degree_conversion_leave_pandas_unloaded(tmp_path):
    path = tmp_path / "q.mot"
    path.write_text(
        "q\nversion=1\nnRows=2\nnColumns=3\ninDegrees=yes\nendheader\n"
        "time\tknee\tpelvis_tx\n0\t90\t1.0\n0.01\t45\t1.1\n"
    )
    code = (
        "import sys\n"
        "from ahbm.kinematics.tree import Model\n"
        "from ahbm.opensim.storage import read_mot\n"
        "from ahbm.opensim.coordinates import coordinates_to_radians\n"
        "m = Model()\n"
        "m.add_body('b', 'ground', {'type': 'revolute', 'axis': [0, 0, 1],"
        " 'coordinates': ['knee']})\n"
        f"t = coordinates_to_radians(m, read_mot({str(path)!r}, angle_columns=[]))\n"
        "print('pandas' in sys.modules, t.angle_columns,"
        " [round(float(x), 6) for x in t.values[:, 0]], t.values[:, 1].tolist())"
    )
    assert _python(code) == "False ['knee'] [1.570796, 0.785398] [1.0, 1.1]"


# --- ahbm id ----------------------------------------------------------------------------


@needs_shared
def test_ahbm_id_loads_neither_numba_nor_scipy_nor_pandas_and_agrees(tmp_path):
    """The walking trial in numpy equals the compiled run to round-off."""
    import shutil

    for f in (SHARED / "opensim").iterdir():
        if f.is_file():
            shutil.copy2(f, tmp_path / f.name)
    code = (
        "import sys\n"
        "from ahbm.cli import main\n"
        "status = main(['id', 'subject01_Setup_ID.xml', '-o', sys.argv[1] if len(sys.argv) > 1"
        " else 'out.sto', '-q'])\n"
        "print(status, [m for m in ('numba', 'scipy', 'pandas') if m in sys.modules])"
    )
    out = _python(code, cwd=tmp_path)
    assert out.splitlines()[-1] == "0 []"
    code_numba = code.replace("'out.sto'", "'numba.sto'")
    out = _python(code_numba, cwd=tmp_path, AHBM_KERNELS="numba")
    assert out.splitlines()[-1].startswith("0 ['numba'")

    from ahbm.opensim import read_mot

    a, b = read_mot(tmp_path / "out.sto"), read_mot(tmp_path / "numba.sto")
    assert a.columns == b.columns
    np.testing.assert_array_equal(a.time, b.time)
    scale = 1.0 + np.abs(b.values).max()
    assert np.abs(a.values - b.values).max() <= 1e-9 * scale


# --- ahbm ik ------------------------------------------------------------------------------


@needs_shared
def test_ahbm_ik_loads_neither_numba_nor_scipy_nor_pandas_and_agrees(tmp_path):
    """The walking trial's IK in numpy equals the compiled run (same iterations, round-off)."""
    import shutil

    for f in (SHARED / "opensim").iterdir():
        if f.is_file():
            shutil.copy2(f, tmp_path / f.name)
    code = (
        "import sys\n"
        "from ahbm.cli import main\n"
        "status = main(['ik', 'subject01_Setup_IK.xml', '-o', 'OUT', '-q'])\n"
        "print(status, [m for m in ('numba', 'scipy', 'pandas') if m in sys.modules])"
    )
    out = _python(code.replace("OUT", "numpy.mot"), cwd=tmp_path)
    assert out.splitlines()[-1] == "0 []"
    out = _python(code.replace("OUT", "numba.mot"), cwd=tmp_path, AHBM_KERNELS="numba")
    assert out.splitlines()[-1].startswith("0 ['numba'")

    from ahbm.opensim import read_mot

    a, b = read_mot(tmp_path / "numpy.mot"), read_mot(tmp_path / "numba.mot")
    assert a.columns == b.columns and len(a) == len(b) == 151
    assert np.abs(a.values - b.values).max() <= 1e-6  # the file's 8 decimals


def test_a_long_ik_loads_the_compiled_kernels_first(monkeypatch):
    """Many small kinematics calls: a long trial is handed to numba at the start."""
    from ahbm.models import human15
    from ahbm.opensim import ik_tool

    monkeypatch.delenv("AHBM_KERNELS", raising=False)
    loaded = []
    monkeypatch.setattr(backend, "compiled_loaded", lambda: bool(loaded))
    monkeypatch.setattr("ahbm._engine.dispatch.load_compiled", lambda: loaded.append(1))
    m = human15(mass=70.0, height=1.75)
    with backend.numpy_while_small():
        ik_tool._kernels_for(m, 100)
        assert loaded == []
        ik_tool._kernels_for(m, 100_000)
        assert loaded == [1]


# --- the tab-separated number block without pandas ---------------------------------------


def test_the_tab_block_reads_what_pandas_reads():
    """Random blocks with empty fields, short rows, trailing tabs and blank lines."""
    import io

    import pandas as pd

    from ahbm._internal.text import _NAN_SPELLINGS, _tab_block

    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(400):
        n, m = int(rng.integers(1, 30)), int(rng.integers(1, 12))
        lines = []
        for _i in range(n):
            k = m if rng.random() > 0.2 else int(rng.integers(1, m + 1))
            fields = []
            for _j in range(k):
                r = rng.random()
                number = repr(float(rng.normal() * 10.0 ** rng.integers(-3, 4)))
                fields.append("" if r < 0.15 else ("nan" if r < 0.18 else number))
            lines.append("\t".join(fields) + ("\t" if rng.random() < 0.1 else ""))
            if rng.random() < 0.05:
                lines.append("")
        body = ("\n".join(lines) + "\n").encode()
        mine = _tab_block(body)
        if mine is None:  # pandas decides (a row longer than the first, say)
            continue
        ref = pd.read_csv(
            io.BytesIO(body), sep="\t", header=None, skip_blank_lines=True, dtype=np.float64,
            engine="c", encoding="latin-1", na_values=_NAN_SPELLINGS,
        ).to_numpy(dtype=np.float64)  # fmt: skip
        assert mine.shape == ref.shape and np.array_equal(mine, ref, equal_nan=True), body
        compared += 1
    assert compared > 100
    assert _tab_block(b"1\t#N/A\n") is None  # a spelling float() does not read: pandas'


# --- world points and their Jacobians (muscle paths) -------------------------------------


def test_the_point_functions_in_numpy_equal_the_compiled_ones(monkeypatch):
    from ahbm._engine import state
    from ahbm.kinematics import forward_kinematics
    from ahbm.models import human15

    m = human15(mass=70.0, height=1.75)
    rng = np.random.default_rng(5)
    q = rng.normal(size=(40, m.nq)) * 0.4
    kin = forward_kinematics(m, q, np.zeros((40, m.nv)))
    _ = kin.world_columns  # the state's Jacobian columns
    r = rng.normal(size=(6, 3, 1)) * 0.1  # six body points, one per body frame
    for b in (0, 5, m.n_bodies - 1):
        monkeypatch.setenv("AHBM_KERNELS", "numba")
        p_c = state.point_bl(kin, b, r)
        J_c = state.points_jacobian_bl(kin, b, p_c)
        monkeypatch.setenv("AHBM_KERNELS", "numpy")
        p_n = state.point_bl(kin, b, r)
        J_n = state.points_jacobian_bl(kin, b, p_n)
        np.testing.assert_allclose(p_n, p_c, rtol=0, atol=1e-15)
        np.testing.assert_allclose(J_n, J_c, rtol=0, atol=1e-14)


# --- ahbm so --------------------------------------------------------------------------


@needs_shared
def test_ahbm_so_loads_neither_numba_nor_scipy_nor_pandas_and_agrees(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
    from test_opensim_so import write_reserves, write_setup

    write_reserves(tmp_path / "reserves.xml")
    write_setup(tmp_path / "so.xml", SHARED / "opensim" / "subject01.osim",
                tmp_path / "reserves.xml", t0=0.5, t1=1.0)  # fmt: skip
    code = (
        "import sys\n"
        "from ahbm.cli import main\n"
        "status = main(['so', 'so.xml', '-o', 'OUT', '-q'])\n"
        "print(status, [m for m in ('numba', 'scipy', 'pandas') if m in sys.modules])"
    )
    out = _python(code.replace("OUT", "numpy"), cwd=tmp_path)
    assert out.splitlines()[-1] == "0 []"
    out = _python(code.replace("OUT", "numba"), cwd=tmp_path, AHBM_KERNELS="numba")
    assert out.splitlines()[-1].startswith("0 ['numba'")

    from ahbm.opensim import read_mot

    for name in ("activation", "force"):
        f = f"subject01_walk_StaticOptimization_{name}.sto"
        a, b = read_mot(tmp_path / "numpy" / f), read_mot(tmp_path / "numba" / f)
        assert a.columns == b.columns and len(a) == len(b)
        assert np.abs(a.values - b.values).max() <= 1e-8 * (1.0 + np.abs(b.values).max())


def test_forward_dynamics_in_numpy_equals_the_aba_kernel(monkeypatch):
    """H q̈ = τ − h from the numpy RNEA (columns of H exact) against the compiled ABA."""
    from ahbm._engine import dispatch
    from ahbm.models import triple_pendulum_euler
    from ahbm.opensim import read_osim

    models = [triple_pendulum_euler()]
    if SHARED.is_dir():  # custom joints with spline-driven translations
        models.append(read_osim(SHARED / "opensim" / "subject01.osim", muscles=False))
    rng = np.random.default_rng(9)
    for m in models:
        N = 25
        q = rng.normal(size=(N, m.nq)) * 0.3
        qd, tau = rng.normal(size=(N, m.nv)), rng.normal(size=(N, m.nv)) * 20
        fx = rng.normal(size=(N, dispatch.plan(m).n, 6))
        for f in (None, fx):
            monkeypatch.setenv("AHBM_KERNELS", "numba")
            ref, bad = dispatch.aba(m, q, qd, tau, f)
            monkeypatch.setenv("AHBM_KERNELS", "numpy")
            got, bad_n = dispatch.aba(m, q, qd, tau, f)
            assert bad == bad_n == -1
            scale = 1.0 + np.abs(ref).max()
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * scale)
