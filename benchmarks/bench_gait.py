"""Wall time of the gait pipeline (``analyze_gait``) and of its inverse-dynamics step.

1. ``analyze_gait`` on the shared walking trial gait-raw.c3d (142 frames at 50 Hz;
   target well under 1 s), with and without reading the file.
2. ``analyze_gait`` on a 10-minute synthetic walking trial (30,000 frames at 50 Hz;
   target under 30 s).
3. The inverse-dynamics step alone on those 30,000 frames: ahbm's segment
   Newton-Euler (one vectorized call) against Pinocchio's RNEA of the equivalent
   seven-body tree called frame by frame (the peer), and their ratio.

Run: ``python benchmarks/bench_gait.py`` (CPU times, best of a few repeats).
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import time
import timeit
import warnings
from pathlib import Path

import numpy as np

from ahbm.dynamics import rnea
from ahbm.dynamics.segmental import SegmentMotion, newton_euler
from ahbm.errors import AhbmWarning
from ahbm.gait import analyze_gait, lower_extremity_model
from ahbm.gait.demo import _walk, synthetic_walking_trial
from ahbm.io import read_c3d
from ahbm.kinematics.forward import forward_kinematics

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def best(func, repeat=3):
    return min(timeit.repeat(func, number=1, repeat=repeat, timer=time.process_time))


def _pinocchio():
    try:
        import pinocchio as pin  # noqa: F401
    except ImportError:
        return None
    spec = importlib.util.spec_from_file_location(
        "bench_dynamics", Path(__file__).with_name("bench_dynamics.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=50.0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", AhbmWarning)
    print(f"ahbm gait pipeline - {platform.processor() or platform.machine()}")

    path = DATA / "c3d" / "gait-raw.c3d"
    if path.is_file():
        trial = read_c3d(path)
        analyze_gait(trial)  # warm-up (imports)
        t_pipe = best(lambda: analyze_gait(trial), repeat=5)
        t_all = best(lambda: analyze_gait(read_c3d(path)), repeat=5)
        print(
            f"gait-raw.c3d ({trial.n_frames} frames): analyze_gait {t_pipe * 1e3:7.1f} ms, "
            f"read_c3d + analyze_gait {t_all * 1e3:7.1f} ms"
        )
    else:
        print(f"gait-raw.c3d not found under {DATA}; skipped")

    duration = args.minutes * 60.0
    t0 = time.process_time()
    big, _ = synthetic_walking_trial(
        duration=duration, rate=args.rate, analog_factor=4, noise=0.0005
    )
    t_gen = time.process_time() - t0
    t_big = best(lambda: analyze_gait(big), repeat=2)
    print(
        f"synthetic {args.minutes:g} min ({big.n_frames} frames @ {args.rate:g} Hz): "
        f"analyze_gait {t_big:6.2f} s (generating the trial took {t_gen:.1f} s)"
    )

    # the inverse-dynamics step: ahbm segment Newton-Euler vs Pinocchio RNEA per frame
    model, _ = lower_extremity_model(mass=70.0, height=1.75)
    t = np.arange(big.n_frames) / args.rate
    q, qd, qdd = _walk(model, t, 1.1, 1.2)
    kin = forward_kinematics(model, q, qd, qdd)
    R = kin.transforms[..., :3, :3]
    o = kin.transforms[..., :3, 3]
    w, v = kin.velocities[..., :3], kin.velocities[..., 3:]
    al, a = kin.accelerations[..., :3], kin.accelerations[..., 3:]
    c = np.asarray(model.coms)
    acc = a + np.cross(al, c) + np.cross(w, v + np.cross(w, c))

    def lab(x):
        return np.einsum("...ij,...j->...i", R, x)

    motion = SegmentMotion(R, o + lab(c), lab(acc), lab(w), lab(al))
    inertia = np.asarray(model.inertias)

    def ahbm_ne():
        newton_euler(model.parent, model.masses, inertia, motion, o, gravity=model.gravity)

    tau = rnea(model, q, qd, qdd)
    loads = newton_euler(model.parent, model.masses, inertia, motion, o, gravity=model.gravity)
    k = model.v_index[1]
    # euler joint: tau = projections of the joint moment on the joint's rotation axes
    diff = np.abs(np.einsum("ni,ni->n", loads.moment[:, 1], R[:, 0, :, 2]) - tau[:, k]).max()
    print(f"check: segment NE vs ahbm RNEA, right hip flexion torque max |diff| = {diff:.1e} N m")
    t_ne = best(ahbm_ne, repeat=5)
    t_rnea = best(lambda: rnea(model, q, qd, qdd), repeat=5)
    bench = _pinocchio()
    if bench is None:
        print(
            f"segment NE {t_ne * 1e3:.1f} ms, ahbm RNEA {t_rnea * 1e3:.1f} ms "
            "(pinocchio not installed: no peer timing)"
        )
        return
    import pinocchio as pin

    pm = bench.to_pinocchio(model)
    pd = pm.createData()
    qp = q.copy()  # same arrays: the timing does not depend on the frame convention

    def pin_loop():
        for i in range(qp.shape[0]):
            pin.rnea(pm, pd, qp[i], qd[i], qdd[i])

    t_pin = best(pin_loop, repeat=2)
    print(
        f"inverse dynamics, {q.shape[0]} frames: ahbm segment NE {t_ne * 1e3:8.1f} ms | "
        f"ahbm RNEA {t_rnea * 1e3:8.1f} ms | pin RNEA loop {t_pin * 1e3:8.1f} ms | "
        f"pin/ahbm NE = {t_pin / t_ne:5.2f}x"
    )


if __name__ == "__main__":
    main()
