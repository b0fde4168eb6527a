"""Run OpenSim in a child process and bring its numbers back (the test-side oracle).

OpenSim's Python package cannot share an interpreter with casadi (their bundled
libraries clash), so no test module imports ``opensim``. A test writes the
OpenSim part as a script and calls :func:`opensim_run`: the script runs in a
fresh interpreter with ``opensim`` imported as ``osim``, ``np`` (numpy),
``INPUTS`` (the keyword arguments, arrays as nested lists) and ``OUT`` (a dict
the script fills). ``OUT`` comes back through a JSON file; numpy arrays and
scalars in it are converted to lists and floats.

    out = opensim_run('''
    m = osim.Model(INPUTS["path"]); s = m.initSystem()
    OUT["mass"] = m.getTotalMass(s)
    ''', path=str(osim_file))

:func:`opensim_run` skips the calling test when the ``opensim`` package
(installed by the ``peers`` extra, which the README's install command
includes) is absent.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

_PRELUDE = """
import json, sys
import numpy as np
import opensim as osim
try:
    osim.Logger.setLevelString("error")
except Exception:
    pass
with open(sys.argv[1]) as _f:
    INPUTS = json.load(_f)
OUT = {}

def _plain(x):
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x
"""

#: OpenSim script lines that replace every Millard2012EquilibriumMuscle of the loaded
#: model ``m`` by a Thelen2003Muscle with the same path and parameters (ahbm implements
#: Thelen's curves, not Millard's); they define ``news``, the new muscles. Used by the
#: static-optimization peer test and benchmarks/bench_muscles.py.
MILLARD_TO_THELEN = """
fs = m.updForceSet()
olds = [osim.Millard2012EquilibriumMuscle.safeDownCast(fs.get(i)) for i in range(fs.getSize())]
olds = [o for o in olds if o is not None]
news = []
for o in olds:
    t = osim.Thelen2003Muscle()
    t.setName(o.getName())
    t.set_path(o.get_path())
    t.setMaxIsometricForce(o.getMaxIsometricForce())
    t.setOptimalFiberLength(o.getOptimalFiberLength())
    t.setTendonSlackLength(o.getTendonSlackLength())
    t.setPennationAngleAtOptimalFiberLength(o.getPennationAngleAtOptimalFiberLength())
    t.setMaxContractionVelocity(o.getMaxContractionVelocity())
    news.append(t)
for o in olds:
    fs.remove(fs.getIndex(o.getName()))
for t in news:
    m.addForce(t)
m.finalizeConnections()
"""

#: A one-muscle model for oracle scripts: ``model(case)`` builds a Millard2012EquilibriumMuscle
#: from ground to a body on a slider (``case``: ``params`` (F0, lopt, lts, pennation),
#: ``damping``, ``rigid``) and returns the model, the muscle and the slider's coordinate.
MILLARD_ONE_MUSCLE = """
def model(case):
    m = osim.Model()
    body = osim.Body("b", 1.0, osim.Vec3(0), osim.Inertia(0.1))
    m.addBody(body)
    j = osim.SliderJoint("s", m.getGround(), osim.Vec3(0), osim.Vec3(0),
                         body, osim.Vec3(0), osim.Vec3(0))
    m.addJoint(j)
    F0, lopt, lts, pen = case["params"]
    mus = osim.Millard2012EquilibriumMuscle("m", F0, lopt, lts, pen)
    mus.set_fiber_damping(case["damping"])
    mus.set_ignore_tendon_compliance(case["rigid"])
    mus.addNewPathPoint("o", m.getGround(), osim.Vec3(0))
    mus.addNewPathPoint("i", body, osim.Vec3(0))
    m.addForce(mus)
    c = j.updCoordinate()
    c.setRangeMin(-10.0)
    c.setRangeMax(10.0)
    return m, mus, c
"""

_EPILOGUE = """
with open(sys.argv[2], "w") as _f:
    json.dump(_plain(OUT), _f)
"""


@functools.lru_cache(maxsize=1)
def opensim_available() -> bool:
    """True when ``import opensim`` works in a child interpreter."""
    try:
        r = subprocess.run(
            [sys.executable, "-c", "import opensim"],
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, Path):
        return str(x)
    return x


def opensim_run(script: str, *, timeout: float = 600.0, cwd=None, **inputs) -> dict:
    """Run ``script`` with OpenSim in a child interpreter and return its ``OUT`` dict.

    Skips the calling test when OpenSim is not installed; fails it (with the
    child's stderr) when the script raises.
    """
    if not opensim_available():
        pytest.skip("the opensim package (peers extra) is not installed")
    with tempfile.TemporaryDirectory(prefix="ahbm-osim-") as tmp:
        src = Path(tmp) / "oracle.py"
        fin = Path(tmp) / "in.json"
        fout = Path(tmp) / "out.json"
        src.write_text(_PRELUDE + textwrap.dedent(script) + "\n" + _EPILOGUE)
        fin.write_text(json.dumps(_jsonable(inputs)))
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        r = subprocess.run(
            [sys.executable, str(src), str(fin), str(fout)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd or tmp,
            env=env,
        )
        if r.returncode != 0:
            raise AssertionError(
                f"the OpenSim oracle script failed (exit {r.returncode}):\n{r.stderr[-4000:]}"
            )
        return json.loads(fout.read_text())
