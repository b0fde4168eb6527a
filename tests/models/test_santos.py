"""The Santos model (Chung 2009): DH structure, Table 7.3 joint limits, unchanged kinematics."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.kinematics import center_of_mass, forward_kinematics, joint_bounds
from ahbm.models import santos_model
from ahbm.models.santos import SANTOS_JOINT_LIMITS, SANTOS_TORQUE_LIMITS

ROOT = Path(__file__).resolve().parents[2]
CHUNG = sorted((ROOT.parent / "shared" / "sources").glob("003_*.txt"))


@pytest.fixture(scope="module")
def model():
    return santos_model()


def test_55_dof_structure(model):
    assert (model.nq, model.nv, model.n_bodies) == (55, 55, 59)
    names = model.coordinate_names
    assert names[:6] == ["global_trans_x", "global_trans_y", "global_trans_z",
                         "global_rotate_x", "global_rotate_y", "global_rotate_z"]  # fmt: skip
    assert names[6:] == [f"Q{k}" for k in range(1, 50)]
    types = [b.joint.type for b in model.bodies]
    assert types.count("prismatic") == 3 and types.count("revolute") == 52
    assert types.count("fixed") == 4  # the second and third branch rows of GR3 and Q12
    assert model.total_mass == pytest.approx(78.75, rel=1e-12)


def test_limits_are_table_7_3(model):
    lower, upper = joint_bounds(model)
    names = model.coordinate_names
    assert np.isinf(lower[:6]).all() and np.isinf(upper[:6]).all()  # global DOFs free
    deg = {n: (np.rad2deg(lower[i]), np.rad2deg(upper[i])) for i, n in enumerate(names[6:], 6)}
    # a few rows typed from the printed table (pp. 110-111)
    for name, lo, hi in [("Q3", -15.0177, 15.0521), ("Q17", -6.5, -5.5),
                         ("Q18", -91.0, -89.9427), ("Q39", 10.0, 135.0),
                         ("Q42", -70.8319, 0.0229), ("Q47", -20.1175, 54.4721)]:  # fmt: skip
        np.testing.assert_allclose(deg[name], (lo, hi), rtol=0, atol=1e-12)
    for name, pair in SANTOS_JOINT_LIMITS.items():
        np.testing.assert_allclose(deg[name], pair, rtol=0, atol=1e-12)
    assert len(SANTOS_JOINT_LIMITS) == len(SANTOS_TORQUE_LIMITS) == 49


def _table(text, title):
    """Rows 'Qnn lower upper' of a table of the source text, from its title to the next §."""
    start = text.index(title)
    stop = text.index("# 7.6", start)
    rows = re.findall(r"^Q(\d\d)\s+(-?[\d.]+)\s+(-?[\d.]+)\s", text[start:stop], re.MULTILINE)
    return {f"Q{int(k)}": (float(lo), float(hi)) for k, lo, hi in rows}


@pytest.mark.skipif(not CHUNG, reason="the shared source documents (../shared/sources) are absent")
def test_limits_equal_the_source_text():
    """Tables 7.3 and 7.5 read from the source document itself."""
    text = CHUNG[0].read_text(encoding="utf-8")
    angles = _table(text, " Table 7.3 Joint angle limits (degrees)\n")
    torques = _table(text, "Table 7.5 Joint torque limits (N m)\n\nDOF")
    assert len(angles) == len(torques) == 49
    assert angles == SANTOS_JOINT_LIMITS
    assert torques == SANTOS_TORQUE_LIMITS


def test_forward_kinematics_unchanged(model):
    """The example's model before it moved into ahbm.models (positions recorded then)."""
    q = 0.3 * np.random.default_rng(0).normal(size=model.nq)
    T = forward_kinematics(model, q).transforms
    recorded = {
        "Q21": [0.112659302578, -0.417914625939, 1.923323224578],
        "Q30": [0.04943086977, 0.729960043596, 0.750712938218],
        "Q35": [-0.028337710485, 0.308164997674, 1.399698410752],
        "Q42": [-0.101178803595, 0.24920064227, 0.263004027971],
        "Q49": [0.154984413097, -0.331344908656, 0.357852255046],
    }
    for body, p in recorded.items():
        np.testing.assert_allclose(T[model.body_index(body), :3, 3], p, atol=1e-11)
    np.testing.assert_allclose(
        center_of_mass(model, q), [0.006818044735, 0.010093027973, 1.024435551805], atol=1e-11
    )


def test_example_uses_the_model_function(tmp_path):
    path = ROOT / "examples" / "santos_dh.py"
    spec = importlib.util.spec_from_file_location("ahbm_example_santos_dh_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.santos_model is santos_model
    assert not hasattr(module, "santos_rows")  # the tables live in ahbm.models.santos


def test_height_scales_lengths_and_bad_input(model):
    big = santos_model(height=1.5 * 1.5934, mass=90.0)
    q = 0.2 * np.random.default_rng(1).normal(size=model.nq)
    q[:3] = 0.0  # global translations are lengths: keep them zero
    a = forward_kinematics(model, q).transforms[:, :3, 3]
    b = forward_kinematics(big, q).transforms[:, :3, 3]
    np.testing.assert_allclose(b, 1.5 * a, atol=1e-12)
    assert big.total_mass == pytest.approx(90.0)
    with pytest.raises(DataError, match="height"):
        santos_model(height=0.0)
    with pytest.raises(DataError, match="mass"):
        santos_model(mass=-1.0)
