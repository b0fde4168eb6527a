"""Wrapping muscles of OpenSim models against OpenSim: lengths and moment arms.

Run: python benchmarks/wrap_moment_arm_survey.py MODEL.osim [MODEL.osim ...] [--states N]

For every muscle with a path wrap that ``ahbm.opensim.read_osim`` brings into
``model.muscles``, at N random states within the coordinate ranges (seed 28),
OpenSim 4.6 (in a child process through ``tests/peers/opensim_oracle.py``)
gives the path lengths, ``GeometryPath.computeMomentArm`` of every coordinate,
the lengths at ±1, ±2 µrad (or µm) of every coordinate alone, and the coupling
vector ``C`` of each coordinate as OpenSim's moment-arm solver forms it (the unit
speed of the coordinate projected onto the CoordinateCouplerConstraints'
velocity constraints, least squares with unit weights, divided by its own entry). Printed per
muscle, worst over states and coordinates:

- ``length``: ``|muscle_lengths - getLength|``;
- ``osim conv``: ``|moment_arms(convention="opensim") · C - computeMomentArm|``;
- ``exact``: ``|moment_arms + ∂l/∂q|`` with ``∂l/∂q`` the fourth-order difference of
  OpenSim's lengths, where its four one-step slopes are smooth (worst, and the 99th
  percentile over states and coordinates: a path that flips between branches
  within the stencil has no slope there);
- ``cMA vs slope``: how far ``computeMomentArm`` itself is from ``-∂l/∂q · C``.

States are set coordinate by coordinate without enforcing constraints (both
programs evaluate the same q). The model files are not part of ahbm.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "peers"))

from opensim_oracle import opensim_run  # noqa: E402

from ahbm.muscles import moment_arms, muscle_lengths  # noqa: E402
from ahbm.opensim import osim_coordinates, read_osim  # noqa: E402

H = 1e-6

ORACLE = """
m = osim.Model(INPUTS["path"])
s = m.initSystem()
cs = m.getCoordinateSet()
names = INPUTS["names"]
fs = m.getForceSet()
paths = [osim.PathActuator.safeDownCast(fs.get(n)) for n in INPUTS["muscles"]]
geo = [osim.GeometryPath.safeDownCast(p.getPath()) for p in paths]
couplers = []
for i in range(m.getConstraintSet().getSize()):
    c = osim.CoordinateCouplerConstraint.safeDownCast(m.getConstraintSet().get(i))
    if c is not None and not c.get_isEnforced() is False:
        ind = list(c.getIndependentCoordinateNames().get(k)
                   for k in range(c.getIndependentCoordinateNames().getSize()))
        scale = osim.PropertyHelper.getValueDouble(c.getPropertyByName("scale_factor"))
        couplers.append((c.getDependentCoordinateName(), ind, c.getFunction(), scale))
index = {n: k for k, n in enumerate(names)}

def setq(q):
    for n, v in zip(names, q):
        cs.get(n).setValue(s, v, False)
    m.realizePosition(s)

def coupling(q):
    # OpenSim's MomentArmSolver::computeCouplingVector: u = e_j projected onto the
    # couplers' velocity constraints (u_dep = sum f' u_ind; least squares, unit weights),
    # divided by its own entry
    rows = []
    for dep, ind, f, scale in couplers:
        if dep not in index:
            continue
        g = np.zeros(len(names))
        g[index[dep]] = 1.0
        x = osim.Vector([cs.get(n).getValue(s) for n in ind])
        for a, n in enumerate(ind):
            if n in index:
                g[index[n]] -= scale * f.calcDerivative(osim.StdVectorInt([a]), x)
        rows.append(g)
    out = []
    for j in range(len(names)):
        u = np.zeros(len(names))
        u[j] = 1.0
        if rows:
            G = np.array(rows)
            u = u - G.T @ np.linalg.solve(G @ G.T, G @ u)
        out.append((u / u[j]).tolist())
    return out

L, MA, ST, C = [], [], [], []
h = INPUTS["h"]
for q in INPUTS["q"]:
    setq(q)
    L.append([p.getLength(s) for p in paths])
    MA.append([[g.computeMomentArm(s, cs.get(n)) for n in names] for g in geo])
    cpl = coupling(q)
    C.append(cpl)
    rows = []
    for j in range(len(names)):
        cols = []
        for k in (-2, -1, 1, 2):
            x = list(q)
            x[j] += k * h
            setq(x)
            cols.append([p.getLength(s) for p in paths])
        rows.append(cols)
    ST.append(rows)
OUT.update(lengths=L, moment_arms=MA, stencil=ST, coupling=C)
"""


def survey(path: Path, n: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = read_osim(path)
    names = [mu.name for mu in model.muscles if mu.wraps]
    if not names:
        print(f"{path.name}: no wrapping muscle read")
        return
    if model.nq != model.nv:
        print(f"{path.name}: nq != nv (ball or free joints), not surveyed")
        return
    rows = {r["name"]: r for r in osim_coordinates(model, records=True)}
    rng = np.random.default_rng(28)
    q = np.empty((n, model.nq))
    for k, c in enumerate(model.coordinate_names):
        lo, hi = rows[c]["range_min"], rows[c]["range_max"]
        lo, hi = max(lo, -np.pi), min(hi, np.pi)
        q[:, k] = rng.uniform(lo, hi, n)
    t0 = time.perf_counter()
    out = opensim_run(ORACLE, path=str(path.resolve()), names=model.coordinate_names, muscles=names,
                      q=q, h=H)  # fmt: skip
    t_osim = time.perf_counter() - t0
    L = np.array(out["lengths"])
    MA = np.array(out["moment_arms"])  # (N, m, nq)
    C = np.array(out["coupling"])  # (N, nq coordinate, nq speeds)
    S = np.array(out["stencil"]).transpose(0, 3, 1, 2)  # (N, m, nq, 4)
    m2, m1, p1, p2 = (S[..., k] for k in range(4))
    c4 = (8 * (p1 - m1) - (p2 - m2)) / (12 * H)
    sl = np.stack([m1 - m2, L[:, :, None] - m1, p1 - L[:, :, None], p2 - p1]) / H
    third = np.abs(sl[0] - 3 * sl[1] + 3 * sl[2] - sl[3])
    smooth = third <= 0.05 * (np.abs(sl[3] - sl[0]) + np.abs(sl[2] - sl[1])) + 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        lengths = muscle_lengths(model, q, muscles=names)
        ro = moment_arms(model, q, muscles=names, convention="opensim")
        t_conv = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = moment_arms(model, q, muscles=names)
        t_exact = time.perf_counter() - t0
    ro_c = np.einsum("nmv,ncv->nmc", ro, C)
    slope_c = np.einsum("nmv,ncv->nmc", -c4, C)
    ok_c = np.einsum("nmv,ncv->nmc", (~smooth).astype(float), np.abs(C) > 1e-12) == 0
    print(f"{path.name}: {len(names)} wrapping muscles, {n} states; OpenSim {t_osim:.1f} s, "
          f"ahbm opensim convention {t_conv:.2f} s, exact {t_exact:.2f} s")  # fmt: skip
    print(f"  {'muscle':18s} {'length':>9s} {'osim conv':>9s} {'exact':>9s} {'exact p99':>9s} "
          f"{'cMA vs slope':>12s}")  # fmt: skip
    for i, name in enumerate(names):
        ok = smooth[:, i]
        dl = np.nanmax(np.abs(lengths[:, i] - L[:, i]))
        nan = int(np.isnan(lengths[:, i]).sum())
        conv = np.nanmax(np.abs(ro_c[:, i] - MA[:, i]))
        errs = np.abs(r[:, i] + c4[:, i])[ok]
        ex = np.nanmax(errs) if errs.size else np.nan
        p99 = np.nanquantile(errs, 0.99) if errs.size else np.nan
        cma = np.nanmax(np.abs(MA[:, i] - slope_c[:, i])[ok_c[:, i]]) if ok_c[:, i].any() else 0
        note = f"  ({nan} NaN lengths)" if nan else ""
        print(f"  {name:18s} {dl:9.1e} {conv:9.1e} {ex:9.1e} {p99:9.1e} {cma:12.1e}{note}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--states", type=int, default=100)
    args = ap.parse_args(argv)
    for path in args.models:
        survey(path, args.states)
    return 0


if __name__ == "__main__":
    sys.exit(main())
