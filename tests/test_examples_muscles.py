"""The arm model (ahbm.models.arm) and its muscle example (examples/arm_muscles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ahbm.models import ARM_MUSCLES, arm_model
from ahbm.muscles import MuscleParameters, moment_arms, muscle_equilibrium, muscle_lengths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_arm_model_muscles_act_as_their_names_say():
    m = arm_model()
    assert [mu.name for mu in m.muscles] == list(ARM_MUSCLES)
    q = np.stack(np.meshgrid(np.linspace(0.0, 0.8, 5), np.linspace(0.2, 1.8, 9)), -1).reshape(-1, 2)
    r = moment_arms(m, q)  # (frames, 6, 2): positive = flexion
    names = list(ARM_MUSCLES)
    for name in ("BIClong", "BICshort", "BRA"):
        assert np.all(r[:, names.index(name), 1] > 0.01), name  # elbow flexors
    for name in ("TRIlong", "TRIlat", "TRImed"):
        assert np.all(r[:, names.index(name), 1] < -0.003), name  # elbow extensors
    assert np.all(r[:, names.index("TRIlong"), 0] < -0.01)  # shoulder extensor
    assert np.all(r[:, names.index("BICshort"), 0] > 0.01)  # shoulder flexor
    for name in ("TRIlat", "TRImed", "BRA"):  # one-joint muscles
        assert np.all(np.abs(r[:, names.index(name), 0]) < 1e-12)
    p = MuscleParameters.from_muscles(m.muscles)
    s = muscle_equilibrium(p, np.full(6, 0.01), muscle_lengths(m, q), rigid_tendon=True,
                           curves="degroote2016")  # fmt: skip
    assert np.all((s.normalized_fiber_length > 0.2) & (s.normalized_fiber_length < 1.6))
    # the reference posture of the authored geometry: every fiber at its optimal length
    s = muscle_equilibrium(p, np.full(6, 0.01), muscle_lengths(m, [0.4, 0.9]),
                           rigid_tendon=True, curves="degroote2016")  # fmt: skip
    np.testing.assert_allclose(s.normalized_fiber_length, 1.0, atol=0.01)


def test_arm_muscles_example_follows_the_target(tmp_path):
    spec = importlib.util.spec_from_file_location("ahbm_example_arm", EXAMPLES / "arm_muscles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    numbers = mod.run(tmp_path, quick=True)
    assert numbers["so_failed_frames"] == 0
    assert numbers["so_max_residual_Nm"] < 1e-6
    # open-loop replay of the static-optimization excitations follows the 63 deg reach
    assert numbers["excursion_deg"] > 60
    assert numbers["max_error_deg"] < 1.0
    assert numbers["activation_rms_difference"] < 0.002
    assert max(numbers["peak_activation"].values()) == pytest.approx(0.37, abs=0.05)
    assert (tmp_path / "arm_muscles.png").stat().st_size > 5000
