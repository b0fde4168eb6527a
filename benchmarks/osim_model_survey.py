"""Load every OpenSim model of a folder with ahbm and compare it with OpenSim itself.

Run: python benchmarks/osim_model_survey.py FOLDER [--states N] [--seed S] [--repeat R]

For each ``*.osim`` file of FOLDER (sorted by name): ``ahbm.opensim.read_osim`` reads
it (every warning is printed: skipped elements and notes), then OpenSim 4.6, in a
child process through ``tests/peers/opensim_oracle.py`` (``opensim`` never shares
an interpreter with ahbm), evaluates the same model at N random states drawn
within the coordinate ranges (speeds and accelerations standard normal):

- body frame poses (every OpenSim body: rotation and origin in ground),
- marker positions in ground (the markers ahbm kept),
- the mass matrix (``calcM``),
- inverse-dynamics generalized forces (``InverseDynamicsSolver``).

OpenSim's speeds differ from ahbm's ``qd`` for BallJoint and FreeJoint
rotations: ``u = T qd`` with ``T = ahbm.opensim.osim_speed_matrix(model, q)``, so
``M = Tᵀ M_osim T`` and ``tau = Tᵀ tau_osim`` with ``u̇ = T q̈ + Ṫ q̇`` (``Ṫ q̇``
by complex step). Errors are ``max|ahbm - OpenSim| / max|OpenSim|`` over all
states and entries (poses: the larger of the rotation and position errors).

Two known differences are handled explicitly and printed:

- inertias violating the triangle inequality (OpenSim accepts them, ahbm's
  reader replaces them by the nearest valid inertia): OpenSim is given ahbm's
  replacement for those bodies so that the rest is compared like with like;
- custom joints in which one coordinate drives several rotation axes (the
  walker knee): Simbody's bias acceleration of such a mobilizer is inexact
  (tests/peers/test_opensim_joints.py::test_opensim_bias_of_coupled_rotations_is_inexact),
  so ID is compared at zero speeds there (marked ``qd=0``), and the error at
  random speeds is printed in the notes.

Load times are the best of ``--repeat`` loads: ``read_osim(path)`` against
``osim.Model(path)`` + ``initSystem()``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

_TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(_TESTS / "peers"), str(_TESTS)]  # the oracle and its sample data

from opensim_oracle import opensim_available, opensim_run  # noqa: E402
from test_opensim_model import ORACLE as MODEL_ORACLE  # noqa: E402

from ahbm.dynamics import crba, rnea  # noqa: E402
from ahbm.kinematics import forward_kinematics, point_position  # noqa: E402
from ahbm.opensim import osim_coordinates, osim_speed_matrix, read_osim  # noqa: E402
from ahbm.opensim.coordinate_table import _speed_matrix  # noqa: E402

# OpenSim's side: the peer test's oracle (tests/peers/test_opensim_model.py), with the load
# timed and the replaced inertias given to OpenSim right after the model is read
_LOAD = """
import time
times = []
for _ in range(INPUTS["repeat"]):
    t0 = time.perf_counter()
    m = osim.Model(INPUTS["path"])
    m.initSystem()
    times.append(time.perf_counter() - t0)
OUT["load_time"] = min(times)
m = osim.Model(INPUTS["path"])
replaced = []
for b in m.getBodySet():  # inertias OpenSim accepts and ahbm replaces (see the docstring)
    v = [b.get_inertia().get(i) for i in range(6)]
    I = np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])
    e = np.linalg.eigvalsh(I)
    J = np.array(INPUTS["inertia"].get(b.getName(), I))
    if e[2] - e[0] - e[1] > 0 and np.abs(J - I).max() > 1e-15 * max(1.0, np.abs(I).max()):
        b.setInertia(osim.Inertia(osim.Vec3(J[0][0], J[1][1], J[2][2]),
                                  osim.Vec3(J[0][1], J[0][2], J[1][2])))
        replaced.append(b.getName())
OUT["replaced"] = replaced
"""
_ANCHOR = '\nm = osim.Model(INPUTS["path"])\n'
assert MODEL_ORACLE.count(_ANCHOR) == 1, "the peer test's oracle changed: update the survey"
ORACLE = MODEL_ORACLE.replace(_ANCHOR, _LOAD)


def rel_err(actual, desired) -> float:
    """``max|actual - desired| / max|desired|`` (NaN when there is nothing to compare)."""
    actual, desired = np.asarray(actual, dtype=float), np.asarray(desired, dtype=float)
    if desired.size == 0:
        return float("nan")
    scale = max(float(np.abs(desired).max()), 1e-12)
    return float(np.abs(actual - desired).max()) / scale


def coupled_rotations(model) -> list[str]:
    """Custom joints in which one coordinate drives several rotation axes."""
    out = []
    for body in model.bodies:
        joint = body.joint
        if joint.type != "custom":
            continue
        drivers = [a.coordinate for a in joint.transform[:3] if a.coordinate is not None]
        if len(drivers) != len(set(drivers)):
            out.append(joint.name)
    return out


def states(model, n, rng):
    """q uniform within the coordinate ranges; qd, qdd standard normal."""
    table = osim_coordinates(model)
    lo = np.array([table.loc[c, "range_min"] for c in model.coordinate_names], dtype=float)
    hi = np.array([table.loc[c, "range_max"] for c in model.coordinate_names], dtype=float)
    bad = ~(np.isfinite(lo) & np.isfinite(hi) & (hi >= lo))
    lo[bad], hi[bad] = -1.0, 1.0
    q = lo + (hi - lo) * rng.uniform(size=(n, model.nq))
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def tdot_qd(model, q, qd):
    """Ṫ(q) qd by complex step (exact to round-off)."""
    h = 1e-30
    T = _speed_matrix(model, q + 1j * h * qd)
    return np.einsum("nij,nj->ni", T.imag / h, qd)


def load(path, repeat):
    times = []
    for _ in range(repeat):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            model = read_osim(path)
            times.append(time.perf_counter() - t0)
    return model, [str(w.message) for w in caught], min(times)


def survey_one(path: Path, n_states: int, seed: int, repeat: int) -> tuple[dict, list[str]]:
    model, messages, t_ahbm = load(path, repeat)
    rng = np.random.default_rng(seed)
    q, qd, qdd = states(model, n_states, rng)
    coupled = coupled_rotations(model)
    qd_sets = {"random": qd, "zero": np.zeros_like(qd)} if coupled else {"random": qd}
    names = model.coordinate_names
    inertia = {b.name: np.asarray(b.inertia).tolist() for b in model.bodies}
    outs = {}
    for key, qd_k in qd_sets.items():
        T = osim_speed_matrix(model, q)
        u = np.einsum("nij,nj->ni", T, qd_k)
        udot = np.einsum("nij,nj->ni", T, qdd) + tdot_qd(model, q, qd_k)
        outs[key] = opensim_run(
            ORACLE,
            path=str(path.resolve()),
            repeat=repeat if key == "random" else 1,
            inertia=inertia,
            q=[dict(zip(names, x, strict=True)) for x in q],
            u=[dict(zip(names, x, strict=True)) for x in u],
            udot=[dict(zip(names, x, strict=True)) for x in udot],
        )
    out = outs["random"]
    T = osim_speed_matrix(model, q)
    perm = [out["u_names"].index(n) for n in model.velocity_names]
    kin = forward_kinematics(model, q)
    err_pose = 0.0
    for b, name in enumerate(out["bodies"]):
        i = model.body_index(name)
        err_pose = max(
            err_pose,
            rel_err(kin.rotations[:, i], np.asarray(out["R"])[:, b]),
            rel_err(kin.positions[:, i], np.asarray(out["p"])[:, b]),
        )
    where = {mk: b.name for b in model.bodies for mk in b.markers}
    ours, theirs = [], []
    for k, name in enumerate(out["markers"]):
        if name not in where:
            continue  # reported by read_osim's warning (e.g. a marker on ground)
        body = model.bodies[model.body_index(where[name])]
        ours.append(point_position(model, q, body.name, body.markers[name]))
        theirs.append(np.asarray(out["markers_xyz"])[:, k])
    err_markers = rel_err(ours, theirs) if ours else float("nan")
    Mo = np.asarray(out["M"])[:, perm][:, :, perm]
    err_M = rel_err(crba(model, q), np.einsum("nki,nkl,nlj->nij", T, Mo, T))
    errs_id = {}
    for key, o in outs.items():
        tau_o = np.einsum("nki,nk->ni", T, np.asarray(o["tau"])[:, perm])
        errs_id[key] = rel_err(rnea(model, q, qd_sets[key], qdd), tau_o)
    notes = [f"ahbm warning: {m}" for m in messages]
    if out["replaced"]:
        notes.append(
            "OpenSim was given ahbm's replacement inertia of " + ", ".join(out["replaced"])
        )
    if coupled:
        notes.append(
            f"ID at qd=0 (one coordinate drives several rotation axes in {', '.join(coupled)}); "
            f"at random speeds the relative ID difference is {errs_id['random']:.1e} "
            "(Simbody's inexact bias acceleration of such joints)"
        )
    n_osim = len(out["u_names"])
    row = {
        "model": path.name,
        "bodies": f"{len(model.bodies)}/{len(out['bodies'])}",
        "coordinates": f"{model.nq}/{n_osim}",
        "skipped": _skipped(messages),
        "poses": err_pose,
        "markers": err_markers,
        "M": err_M,
        "ID": errs_id["zero"] if coupled else errs_id["random"],
        "ID_note": " (qd=0)" if coupled else "",
        "t_ahbm": t_ahbm,
        "t_osim": out["load_time"],
    }
    return row, notes


def _skipped(messages) -> str:
    for m in messages:
        if "element(s) not represented" in m:
            return m.split(": ", 1)[1].split(" element(s)")[0]
    return "0"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--states", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if not opensim_available():
        print("the opensim package (peers extra) is not installed: nothing to compare with")
        return 2
    paths = sorted(args.folder.glob("*.osim"))
    if not paths:
        print(f"no .osim file in {args.folder}")
        return 2
    rows, notes = [], {}
    for path in paths:
        try:
            row, note = survey_one(path, args.states, args.seed, args.repeat)
        except Exception as err:  # one failing model must not hide the others
            row = {"model": path.name, "failed": f"{type(err).__name__}: {err}"}
            note = []
        rows.append(row)
        notes[path.name] = note
        print(f"done {path.name}", file=sys.stderr, flush=True)
    print(
        "| model | bodies ahbm/OpenSim | coordinates ahbm/OpenSim | skipped elements | poses "
        "| markers | M | ID | load ahbm (s) | load OpenSim (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "failed" in r:
            print(f"| {r['model']} | FAILED: {r['failed'][-300:]!r} | | | | | | | | |")
            continue
        markers = "no markers" if np.isnan(r["markers"]) else f"{r['markers']:.1e}"
        print(
            f"| {r['model']} | {r['bodies']} | {r['coordinates']} | {r['skipped']} "
            f"| {r['poses']:.1e} | {markers} | {r['M']:.1e} | {r['ID']:.1e}{r['ID_note']} "
            f"| {r['t_ahbm']:.3f} | {r['t_osim']:.3f} |"
        )
    print()
    for name, note in notes.items():
        for line in note:
            print(f"- {name}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
