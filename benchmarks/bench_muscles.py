"""Timing of ahbm's muscle moment arms and static optimization against OpenSim's.

Run: python benchmarks/bench_muscles.py [--repeat N] [--rounds R]

Inputs: the shared walking trial (../shared/data/opensim: subject01.osim with its
18 muscles, subject01_walk_IK.mot, subject01_walk_grf.mot/.xml). ahbm implements
Thelen's and De Groote's muscle curves, not Millard's, so a child process with
OpenSim first writes the model with its Millard2012EquilibriumMuscles replaced by
Thelen2003Muscles (same parameters and paths), a reserve-actuator file (one
CoordinateActuator per coordinate) and an AnalyzeTool setup with a
StaticOptimization analysis over the whole trial (0 to 2.5 s, 151 frames). Both
libraries then work on the same files and the same coordinates:

- moment arms: every muscle about every coordinate at every frame of the trial
  (151 x 18 x 10): OpenSim's ``Muscle.computeMomentArm(state, coordinate)`` in a
  loop over frames (state set and realized to position once per frame) against one
  call of ``ahbm.muscles.moment_arms(model, q)``;
- static optimization, whole tool: ``AnalyzeTool(setup).run()`` against
  ``ahbm.opensim.run_so_setup(setup)`` (read the model and data, filter and spline the
  coordinates, inverse dynamics, optimize, write the activation and force files);
  ahbm's library call ``static_optimization(...)`` on the processed trial is timed
  too;
- the solver: the trial's load-sharing problems solved by ahbm's batched dual
  Newton method against scipy's SLSQP frame by frame (warm-started from the
  previous frame), the scipy alternative the README weighs it against.

OpenSim runs in a child process (it cannot share an interpreter with casadi, and
ahbm never imports it). Each measurement runs once to warm up, then the best of
``--repeat`` runs is kept; OpenSim and ahbm alternate for ``--rounds`` rounds (best
of all rounds), so that a busy machine slows both alike. Prints the times, the
ratio OpenSim / ahbm (> 1: ahbm faster) and the largest differences of the results.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

# the OpenSim script fragment shared with the peer tests (opensim is only run in a child)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "peers"))
from opensim_oracle import MILLARD_TO_THELEN  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "opensim"
COORDINATES = [
    "pelvis_tilt", "pelvis_tx", "pelvis_ty", "hip_flexion_r", "knee_angle_r", "ankle_angle_r",
    "hip_flexion_l", "knee_angle_l", "ankle_angle_l", "lumbar_extension",
]  # fmt: skip
STRONG = {
    "pelvis_tilt": 1000.0,
    "pelvis_tx": 1000.0,
    "pelvis_ty": 1000.0,
    "lumbar_extension": 100.0,
}

PREPARE = (
    textwrap.dedent(
        """
    import sys
    import opensim as osim
    osim.Logger.setLevelString("error")
    source, target = sys.argv[1], sys.argv[2]
    m = osim.Model(source)
    m.initSystem()
    """
    )
    + MILLARD_TO_THELEN
    + textwrap.dedent(
        """
    m.printToXML(target)
    """
    )
)

OPENSIM_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    import numpy as np
    import opensim as osim
    osim.Logger.setLevelString("error")
    folder, repeat, inp, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    os.chdir(folder)
    with open(inp) as f:
        q = np.array(json.load(f)["q"])

    def best(f):
        f()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)

    model = osim.Model("thelen.osim")
    state = model.initSystem()
    muscles = [model.getMuscles().get(i) for i in range(model.getMuscles().getSize())]
    coords = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    names = [c.getName() for c in coords]
    R = np.zeros((q.shape[0], len(muscles), len(coords)))

    def moment_arms():
        for n in range(q.shape[0]):
            for k, c in enumerate(coords):
                c.setValue(state, q[n, k], False)
            model.realizePosition(state)
            for i, mus in enumerate(muscles):
                for k, c in enumerate(coords):
                    R[n, i, k] = mus.computeMomentArm(state, c)

    def so_tool():
        osim.AnalyzeTool("setup_so.xml").run()

    res = {"moment_arms": best(moment_arms), "so_tool": best(so_tool)}
    res["R"] = R.tolist()
    res["coordinates"] = names
    res["muscles"] = [m.getName() for m in muscles]
    with open(out, "w") as f:
        json.dump(res, f)
    """
)


def write_inputs(folder: Path) -> Path:
    items = "".join(
        f'<CoordinateActuator name="reserve_{c}"><coordinate>{c}</coordinate>'
        f"<optimal_force>{STRONG.get(c, 1.0)}</optimal_force></CoordinateActuator>"
        for c in COORDINATES
    )
    (folder / "reserves.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
        f'<ForceSet name="reserves"><objects>{items}</objects></ForceSet></OpenSimDocument>\n'
    )
    setup = folder / "setup_so.xml"
    setup.write_text(
        f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <AnalyzeTool name="subject01_walk">
    <model_file>thelen.osim</model_file>
    <replace_force_set>false</replace_force_set>
    <force_set_files>reserves.xml</force_set_files>
    <results_directory>Results</results_directory>
    <initial_time>0</initial_time>
    <final_time>2.5</final_time>
    <AnalysisSet name="Analyses"><objects>
      <StaticOptimization name="StaticOptimization"><on>true</on>
        <use_model_force_set>true</use_model_force_set><activation_exponent>2</activation_exponent>
        <use_muscle_physiology>true</use_muscle_physiology>
        <optimizer_convergence_criterion>0.0001</optimizer_convergence_criterion>
        <optimizer_max_iterations>100</optimizer_max_iterations></StaticOptimization>
    </objects></AnalysisSet>
    <ControllerSet name="Controllers"><objects /></ControllerSet>
    <external_loads_file>{DATA / "subject01_walk_grf.xml"}</external_loads_file>
    <coordinates_file>{DATA / "subject01_walk_IK.mot"}</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>
  </AnalyzeTool>
</OpenSimDocument>
"""
    )
    return setup


def best(f, repeat: int) -> float:
    f()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def slsqp_frames(tau, R, F, reserves, lo):
    """Per-frame SLSQP (scipy) of the same problems, warm-started from the previous frame."""
    from scipy.optimize import minimize

    n, nm, nv = R.shape
    x = np.concatenate([np.full(nm, 0.1), np.zeros(nv)])
    out = np.zeros((n, nm))
    bounds = [(lo, 1.0)] * nm + [(None, None)] * nv
    for i in range(n):
        A = np.concatenate([R[i].T * F[i], np.diag(reserves)], axis=1)
        b = tau[i]
        sol = minimize(
            lambda z: z @ z,
            x,
            jac=lambda z: 2 * z,
            constraints=[
                {"type": "eq", "fun": lambda z, A=A, b=b: A @ z - b, "jac": lambda z, A=A: A}
            ],  # fmt: skip
            bounds=bounds,
            method="SLSQP",
            options={"ftol": 1e-10, "maxiter": 500},
        )
        x = sol.x
        out[i] = sol.x[:nm]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"shared data not found at {DATA}")
        return 1
    from ahbm.muscles import moment_arms, static_optimization
    from ahbm.muscles.force_sharing import load_sharing
    from ahbm.muscles.hill import force_coefficients
    from ahbm.muscles.hill_curves import MuscleParameters
    from ahbm.muscles.paths import lengthening_speeds, muscle_lengths
    from ahbm.opensim import (
        inverse_dynamics_opensim,
        read_external_loads,
        read_mot,
        read_osim,
        run_so_setup,
    )
    from ahbm.opensim.id_tool import coordinates_to_radians

    with tempfile.TemporaryDirectory(prefix="ahbm-bench-muscles-") as tmp:
        folder = Path(tmp)
        thelen = folder / "thelen.osim"
        subprocess.run([sys.executable, "-c", PREPARE, str(DATA / "subject01.osim"), str(thelen)],
                       check=True)  # fmt: skip
        setup = write_inputs(folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = read_osim(folder / "thelen.osim")
        coords = coordinates_to_radians(
            model, read_mot(DATA / "subject01_walk_IK.mot", angle_columns=[])
        )
        # the same q for both: the IK file's coordinates in OpenSim's CoordinateSet order
        q_model = coords.data[model.coordinate_names].to_numpy(dtype=float)
        q_json = folder / "q.json"
        q_json.write_text(json.dumps({"q": coords.data[COORDINATES].to_numpy().tolist()}))
        ahbm_times = {"moment_arms": [], "so_tool": [], "so_library": []}
        osim_times = {"moment_arms": [], "so_tool": []}
        ids = inverse_dynamics_opensim(
            model, coords, external_loads=read_external_loads(DATA / "subject01_walk_grf.xml"),
            cutoff=6.0,
        )  # fmt: skip
        reserves = {c: STRONG.get(c, 1.0) for c in COORDINATES}
        osim = None
        for _ in range(args.rounds):
            out = folder / "osim.json"
            subprocess.run(
                [sys.executable, "-c", OPENSIM_SCRIPT, str(folder), str(args.repeat), str(q_json),
                 str(out)],
                check=True,
            )  # fmt: skip
            osim = json.loads(out.read_text())
            for k in osim_times:
                osim_times[k].append(osim[k])
            ahbm_times["moment_arms"].append(best(lambda: moment_arms(model, q_model), args.repeat))
            ahbm_times["so_tool"].append(
                best(lambda: run_so_setup(setup, output_dir=folder / "ahbm"), args.repeat)
            )
            ahbm_times["so_library"].append(
                best(
                    lambda: static_optimization(
                        model, ids.q, ids.qd, ids.qdd, tau=ids.tau, reserves=reserves
                    ),
                    args.repeat,
                )
            )
        # differences of the results
        R = moment_arms(model, q_model)
        order = [model.coordinate_names.index(c) for c in osim["coordinates"]]
        mus = [[m.name for m in model.muscles].index(n) for n in osim["muscles"]]
        dR = np.abs(R[:, mus][:, :, order] - np.array(osim["R"])).max()
        act_o = read_mot(
            folder / "Results" / "subject01_walk_StaticOptimization_activation.sto",
            angle_columns=[],
        )
        act_a = read_mot(
            folder / "ahbm" / "subject01_walk_StaticOptimization_activation.sto",
            angle_columns=[],
        )
        names = osim["muscles"]
        d = act_a.data[names].to_numpy() - act_o.data[names].to_numpy()
        rms = np.sqrt(np.mean(d**2, axis=0))
        # the solver alone: batched dual Newton vs per-frame SLSQP on the same problems
        params = MuscleParameters.from_muscles(model.muscles)
        Fa, _ = force_coefficients(
            params, muscle_lengths(model, ids.q), lengthening_speeds(model, ids.q, ids.qd),
            curves="thelen2003",
        )  # fmt: skip
        Rm = moment_arms(model, ids.q)
        res_v = np.array([reserves[c] for c in model.coordinate_names])
        t_newton = best(
            lambda: load_sharing(ids.tau, Rm, Fa, reserves=res_v, min_activation=0.01),
            args.repeat,
        )
        t0 = time.perf_counter()
        a_slsqp = slsqp_frames(ids.tau, Rm, Fa, res_v, 0.01)
        t_slsqp = time.perf_counter() - t0
        a_newton = load_sharing(ids.tau, Rm, Fa, reserves=res_v, min_activation=0.01).activations

    n_frames = q_model.shape[0]
    print(f"shared walking trial: {n_frames} frames, {len(model.muscles)} muscles, "
          f"{model.nv} coordinates (best of {args.repeat} x {args.rounds} rounds)")  # fmt: skip
    rows = [
        ("moment arms, whole trial", "moment_arms"),
        ("static optimization tool", "so_tool"),
    ]
    for label, key in rows:
        o, a = min(osim_times[key]), min(ahbm_times[key])
        print(
            f"{label:28s} OpenSim {o * 1e3:9.2f} ms   ahbm {a * 1e3:8.2f} ms   ratio {o / a:6.1f}x"
        )
    a = min(ahbm_times["so_library"])
    print(f"{'static_optimization (library)':28s} ahbm {a * 1e3:8.2f} ms   "
          f"(OpenSim tool / library: {min(osim_times['so_tool']) / a:.1f}x)")  # fmt: skip
    print(f"solver on the trial's problems: ahbm dual Newton {t_newton * 1e3:.2f} ms, scipy SLSQP "
          f"per frame {t_slsqp * 1e3:.1f} ms ({t_slsqp / t_newton:.0f}x); max |Δa| "
          f"{np.abs(a_newton - a_slsqp).max():.1e}")  # fmt: skip
    print(f"max |moment arm difference| {dR:.2e} m; activation RMS difference per muscle: "
          f"max {rms.max():.1e} ({names[int(np.argmax(rms))]})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
