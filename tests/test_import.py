"""`import ahbm` stays light: heavy optional modules load with the functions that need them."""

import subprocess
import sys

# matplotlib: DESIGN.md (graphics imports it inside its functions); scipy.integrate and
# scipy.optimize: imported by simulate() on the first simulation; pandas, h5py: io only.
HEAVY = ("matplotlib", "scipy.integrate", "scipy.optimize", "pandas", "h5py")


def test_import_ahbm_does_not_import_heavy_optional_modules():
    code = (
        "import sys, ahbm, ahbm.dynamics, ahbm.kinematics\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == ""


def test_simulate_still_finds_the_integrators():
    import numpy as np

    from ahbm.dynamics import simulate
    from ahbm.kinematics.tree import Model

    m = Model()
    m.add_body("b", "ground", {"type": "prismatic", "axis": [0, 0, 1]}, mass=1.0, inertia=np.eye(3))
    for method in ("RK45", "Radau"):
        r = simulate(m, (0.0, 0.5), np.zeros(1), np.zeros(1), method=method, t_eval=[0.5])
        np.testing.assert_allclose(r.q[-1], [-0.5 * 9.81 * 0.25], rtol=1e-5)
