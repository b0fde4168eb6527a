"""The toolbox demonstration run by ``ahbm demo``.

It exercises the main modules end to end on data it makes itself (no files
needed): rotation conversions for all 24 Euler/Cardan conventions, inverse and
forward dynamics of a whole 15-segment human trajectory in one call each, and
the trip of the resulting marker trial through C3D and HDF5 files, and the
gait pipeline on a synthetic walking trial with known joint angles and
moments (C3D in, HDF5 results and a report figure out). Every step
checks an identity and the command fails (exit status 1) if one does not hold.
"""

from __future__ import annotations

import itertools
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

__all__ = ["DEMO_HELP", "add_demo_arguments", "run_demo", "toolbox_demo"]

DEMO_HELP = "run the toolbox demonstration and print its results"


#: Kernels the demo runs, and those compiled in a second process on a first run.
_KERNELS = ("rnea", "aba", "crba", "kinematics")
_BACKGROUND = ("aba",)
_HELPER_TIMEOUT = 600.0  # s


def add_demo_arguments(parser) -> None:
    """Arguments of ``ahbm demo`` (``-q/--quiet`` is common to every command)."""
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="DIR",
        help="folder for the gait demo's trial, results and report (default: a new temporary one)",
    )


def _step(title: str, quiet: bool):
    if not quiet:
        print(f"\n== {title}")


def run_demo(args) -> int:
    """Run ``ahbm demo``; return the exit status."""
    return toolbox_demo(quiet=args.quiet, out_dir=args.output)


def toolbox_demo(*, quiet: bool = False, rng=None, out_dir=None) -> int:
    """Run the demonstration; return 0 if every identity held, else 1.

    Parameters
    ----------
    quiet : bool
        Print only the final summary line.
    rng : numpy.random.Generator, optional
        Source of the random rotations and motion (seeded by default).
    out_dir : str or path-like, optional
        Folder for the gait demo's C3D trial, HDF5 results and report figure
        (default: a new temporary folder, whose name is printed).

    Returns
    -------
    int
        Exit status for the ``ahbm demo`` command.
    """
    from ahbm._engine import compilation as _compilation
    from ahbm.dynamics import aba, crba, rnea
    from ahbm.io import Event, Trial, load_trial, read_c3d, save_trial, write_c3d
    from ahbm.kinematics import forward_kinematics
    from ahbm.kinematics.configuration import neutral_q
    from ahbm.kinematics.rotations import euler_to_matrix, matrix_to_euler
    from ahbm.models import human15

    rng = np.random.default_rng(2026) if rng is None else rng
    say = (lambda *a: None) if quiet else print
    checks: list[tuple[str, bool]] = []
    t_start = time.perf_counter()
    # numba compiles the kernels on their first use and caches them on disk: on a
    # first run, say so, and compile the ABA kernel in a second process (core)
    # while this one compiles the others and runs the rotation step
    compiling = not _compilation.is_compiled(_KERNELS)
    helper = None
    if compiling:
        from ahbm.cli._compiling import announce

        announce("demo", quiet=quiet)  # on stderr, with the estimate of the wait
        try:
            helper = _compilation.compile_in_background(_BACKGROUND)
        except OSError:  # no second interpreter here: compile everything in this one
            helper = None

    # 1. rotations ----------------------------------------------------------
    _step("Rotations: 100,000 random orientations, all 24 Euler/Cardan conventions", quiet)
    angles = rng.uniform(-np.pi, np.pi, (100_000, 3))
    seqs = ["".join(s) for s in itertools.product("xyz", repeat=3) if s[0] != s[1] != s[2]]
    worst = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seq in seqs + [s.upper() for s in seqs]:
            R = euler_to_matrix(angles, seq)
            back = euler_to_matrix(matrix_to_euler(R, seq), seq)
            worst = max(worst, float(np.abs(back - R).max()))
    say(f"   matrix -> angles -> matrix, largest error over 2.4 million round trips: {worst:.1e}")
    checks.append(("rotation round trips", worst < 1e-12))

    # 2. multibody dynamics --------------------------------------------------
    _step("Dynamics: 15-segment human (75 kg, 1.80 m), 2 s of motion at 100 Hz", quiet)
    model = human15(height=1.8, mass=75.0)
    t = np.arange(200) / 100.0
    n = model.nv
    amp = rng.uniform(0.05, 0.3, n)
    freq = rng.uniform(0.5, 1.5, n)
    phase = rng.uniform(0, 2 * np.pi, n)
    arg = 2 * np.pi * freq * t[:, None] + phase
    # generalized velocities/accelerations; positions by integrating along the path
    qd = amp * 2 * np.pi * freq * np.cos(arg)
    qdd = -amp * (2 * np.pi * freq) ** 2 * np.sin(arg)
    from ahbm.kinematics.configuration import integrate_q

    q0 = neutral_q(model)
    q = integrate_q(model, np.broadcast_to(q0, (len(t), model.nq)), amp * np.sin(arg), 1.0)
    # compile (first run) or load the kernels now, so the times below are run times
    t0 = time.perf_counter()
    _compilation.compile_kernels([k for k in _KERNELS if k not in _BACKGROUND])
    if helper is not None:
        try:  # never hang on the helper: past the timeout, compile here instead
            helper.wait(timeout=_HELPER_TIMEOUT)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
    _compilation.compile_kernels(_BACKGROUND)
    if compiling:
        say(f"   compiled the kernels in {time.perf_counter() - t0:.1f} s (first run only)")
    t0 = time.perf_counter()
    tau = rnea(model, q, qd, qdd)
    t_rnea = time.perf_counter() - t0
    t0 = time.perf_counter()
    qdd_back = aba(model, q, qd, tau)
    t_aba = time.perf_counter() - t0
    H = crba(model, q)
    err = float(np.abs(qdd_back - qdd).max())
    sym = float(np.abs(H - np.swapaxes(H, -1, -2)).max())
    min_eig = float(np.linalg.eigvalsh(H).min())
    say(f"   model: {len(model.body_names)} bodies, nq = {model.nq}, nv = {model.nv}")
    say(
        f"   RNEA over {len(t)} frames in one call: {t_rnea * 1e3:.1f} ms; "
        f"ABA of those torques: {t_aba * 1e3:.1f} ms"
    )
    say(f"   |ABA(q, qd, RNEA(q, qd, qdd)) - qdd| max = {err:.1e} rad/s^2")
    say(f"   mass matrix: symmetric to {sym:.1e}, smallest eigenvalue {min_eig:.3g} kg m^2")
    checks.append(("ABA(RNEA) identity", err < 1e-8))
    checks.append(("mass matrix SPD", sym < 1e-10 and min_eig > 0))

    # 3. data conversion -------------------------------------------------------
    _step("Data: body origins as markers -> C3D -> HDF5 -> back", quiet)
    kin = forward_kinematics(model, q)
    markers = kin.transforms[..., :3, 3]  # (frames, bodies, 3), metres
    trial = Trial(
        points=markers,
        point_labels=[name.upper() for name in model.body_names],
        point_rate=100.0,
        events=[Event("Impact", 0.5, "General")],
        subject={"height": 1.8, "mass": 75.0},
    )
    with tempfile.TemporaryDirectory() as tmp:
        c3d_path = Path(tmp) / "demo.c3d"
        h5_path = Path(tmp) / "demo.h5"
        write_c3d(trial, c3d_path)
        from_c3d = read_c3d(c3d_path)
        save_trial(from_c3d, h5_path)
        from_h5 = load_trial(h5_path)
        c3d_err = float(np.nanmax(np.abs(from_c3d.points - markers)))
        same = np.array_equal(from_h5.points, from_c3d.points, equal_nan=True)
        say(
            f"   C3D: {from_c3d.n_frames} frames x {from_c3d.n_points} markers, "
            f"largest difference after the round trip {c3d_err:.1e} m"
        )
        say(
            f"   HDF5: identical to the C3D data: {same}; labels kept: "
            f"{from_h5.point_labels == trial.point_labels}"
        )
    checks.append(("C3D round trip", c3d_err < 1e-5))
    checks.append(("HDF5 round trip", bool(same) and from_h5.point_labels == trial.point_labels))

    # 4. gait analysis ---------------------------------------------------------
    _step("Gait: synthetic walking trial -> C3D -> full pipeline -> recovery of the truth", quiet)
    from ahbm.gait.demo import run_gait_demo

    status = run_gait_demo(out_dir, quiet=quiet)
    checks.append(("gait pipeline recovers angles (1 deg) and moments (2 % of peak)", status == 0))

    failed = [name for name, ok in checks if not ok]
    elapsed = time.perf_counter() - t_start
    if failed:
        print(f"ahbm demo: FAILED checks: {', '.join(failed)} ({elapsed:.1f} s)")
        return 1
    print(f"ahbm demo: all {len(checks)} checks passed ({elapsed:.1f} s)")
    return 0
