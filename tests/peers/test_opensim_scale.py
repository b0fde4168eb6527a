"""OpenSim's Scale tool against ahbm's: subject01.osim scaled again with its static trial.

The setup is written here (marker pairs taken from the model's markers) with
measurements that scale whole bodies and single axes, a non-uniform manual
scale, both mass options and a marker placer; OpenSim 4.6's ScaleTool runs it
in a child process (:mod:`opensim_oracle`) and ahbm's :func:`run_scale` runs
the same file. Compared: the scale factors, every body's mass, COM and
inertia, the joint frames and child offsets, the markers after scaling and
after placement, and body poses of the scaled model at random states (which
checks the scaled translation functions of the custom knee joints).
"""

import os
from pathlib import Path

import numpy as np
import pytest
from opensim_oracle import opensim_run
from sample_data import SHARED

DATA = SHARED / "opensim"
MODEL = DATA / "subject01.osim"
STATIC = DATA / "subject01_static.trc"

#: (name, marker pairs, {body: axes})
MEASUREMENTS = [
    ("pelvis_width", [("R.ASIS", "L.ASIS")], {"pelvis": "Z"}),
    ("pelvis_depth", [("R.ASIS", "V.Sacral"), ("L.ASIS", "V.Sacral")], {"pelvis": "X Y"}),
    ("thigh_r", [("R.ASIS", "R.Knee.Lat")], {"femur_r": "X Y Z"}),
    ("thigh_l", [("L.ASIS", "L.Knee.Lat")], {"femur_l": "X Y Z"}),
    ("shank_r", [("R.Knee.Lat", "R.Ankle.Lat"), ("R.Knee.Med", "R.Ankle.Med")],
     {"tibia_r": "X Y Z"}),
    ("shank_l", [("L.Knee.Lat", "L.Ankle.Lat"), ("L.Knee.Med", "L.Ankle.Med")],
     {"tibia_l": "X Y Z"}),
    ("foot_r", [("R.Heel", "R.Toe.Tip")], {"talus_r": "X Y Z", "calcn_r": "X Y Z",
                                           "toes_r": "X Y Z"}),
    ("foot_l", [("L.Heel", "L.Toe.Tip")], {"talus_l": "X Y Z", "calcn_l": "X Y Z",
                                           "toes_l": "X Y Z"}),
    ("unused", [("Sternum", "Top.Head")], {"torso": "X Y Z"}),
]  # fmt: skip
MANUAL = {"torso": (1.02, 0.97, 1.05)}
WEIGHTS = {"R.ASIS": 10, "L.ASIS": 10, "V.Sacral": 10, "R.Heel": 5, "L.Heel": 5, "Top.Head": 3}


def _setup(folder: Path, *, preserve: bool, mass: float = 72.6) -> Path:
    # relative names: OpenSim prefixes the setup's folder even to absolute ones
    model, static = (os.path.relpath(p, folder) for p in (MODEL, STATIC))
    meas = []
    for name, pairs, bodies in MEASUREMENTS:
        mp = "".join(f"<MarkerPair><markers>{a} {b}</markers></MarkerPair>" for a, b in pairs)
        bs = "".join(
            f'<BodyScale name="{b}"><axes>{ax}</axes></BodyScale>' for b, ax in bodies.items()
        )
        meas.append(
            f'<Measurement name="{name}"><apply>{"false" if name == "unused" else "true"}</apply>'
            f"<MarkerPairSet><objects>{mp}</objects><groups /></MarkerPairSet>"
            f"<BodyScaleSet><objects>{bs}</objects><groups /></BodyScaleSet></Measurement>"
        )
    scales = "".join(
        f"<Scale><scales>{' '.join(map(str, f))}</scales><segment>{b}</segment>"
        "<apply>true</apply></Scale>"
        for b, f in MANUAL.items()
    )
    markers = [line.split('"')[1] for line in MODEL.read_text().splitlines()
               if "<Marker name=" in line]  # fmt: skip
    tasks = "".join(
        f'<IKMarkerTask name="{m}"><apply>true</apply><weight>{WEIGHTS.get(m, 1)}</weight>'
        "</IKMarkerTask>"
        for m in markers
    )
    text = f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <ScaleTool name="subject01_rescaled">
    <mass>{mass}</mass>
    <height>-1</height>
    <age>-1</age>
    <GenericModelMaker>
      <model_file>{model}</model_file>
      <marker_set_file>Unassigned</marker_set_file>
    </GenericModelMaker>
    <ModelScaler>
      <apply>true</apply>
      <scaling_order> measurements manualScale</scaling_order>
      <MeasurementSet><objects>{"".join(meas)}</objects><groups /></MeasurementSet>
      <ScaleSet><objects>{scales}</objects><groups /></ScaleSet>
      <marker_file>{static}</marker_file>
      <time_range> 1 2</time_range>
      <preserve_mass_distribution>{"true" if preserve else "false"}</preserve_mass_distribution>
      <output_model_file>scaled_only.osim</output_model_file>
      <output_scale_file>scale_factors.xml</output_scale_file>
    </ModelScaler>
    <MarkerPlacer>
      <apply>true</apply>
      <IKTaskSet><objects>{tasks}</objects><groups /></IKTaskSet>
      <marker_file>{static}</marker_file>
      <coordinate_file>Unassigned</coordinate_file>
      <time_range> 1 2</time_range>
      <output_motion_file>static_pose.mot</output_motion_file>
      <output_model_file>scaled_placed.osim</output_model_file>
      <output_marker_file>Unassigned</output_marker_file>
      <max_marker_movement>-1</max_marker_movement>
    </MarkerPlacer>
  </ScaleTool>
</OpenSimDocument>
"""
    path = folder / "subject01_Setup_Scale.xml"
    path.write_text(text)
    return path


#: OpenSim's ScaleTool run on INPUTS["setup"] (in the setup's folder).
RUN_TOOL = r"""
tool = osim.ScaleTool(INPUTS["setup"])
assert tool.run()
"""

#: model_data(path, q_list): bodies, joint offsets, markers, muscle points, body poses.
MODEL_DATA = r"""
def model_data(path, q_list):
    m = osim.Model(path)
    s = m.initSystem()
    out = {"bodies": {}, "joints": {}, "markers": {}, "poses": []}
    for b in m.getBodySet():
        I = b.getInertia()
        mom, prod = I.getMoments(), I.getProducts()
        out["bodies"][b.getName()] = {
            "mass": b.getMass(),
            "com": [b.getMassCenter()[k] for k in range(3)],
            "inertia": [mom[0], mom[1], mom[2], prod[0], prod[1], prod[2]],
        }
    for j in m.getJointSet():
        pf, cf = j.getParentFrame(), j.getChildFrame()
        zero = osim.Vec3(0.0, 0.0, 0.0)
        po = osim.PhysicalOffsetFrame.safeDownCast(pf)
        co = osim.PhysicalOffsetFrame.safeDownCast(cf)
        tp = po.get_translation() if po is not None else zero
        tc = co.get_translation() if co is not None else zero
        out["joints"][j.getName()] = {
            "parent": pf.findBaseFrame().getName(), "child": cf.findBaseFrame().getName(),
            "parent_position": [tp[k] for k in range(3)],
            "child_position": [tc[k] for k in range(3)],
        }
    for mk in m.getMarkerSet():
        loc = mk.get_location()
        out["markers"][mk.getName()] = {
            "body": mk.getParentFrame().findBaseFrame().getName(),
            "location": [loc[k] for k in range(3)],
        }
    out["path_points"] = {}
    for f in m.getForceSet():
        mus = osim.Muscle.safeDownCast(f)
        if mus is None:
            continue
        for pp in mus.getGeometryPath().getPathPointSet():
            mpp = osim.MovingPathPoint.safeDownCast(pp)
            if mpp is not None:
                xs = [-1.5, -0.7, -0.1, 0.05]
                vals = [[fn.calcValue(osim.Vector(1, x)) for x in xs] for fn in
                        (mpp.get_x_location(), mpp.get_y_location(), mpp.get_z_location())]
                out["path_points"][pp.getName()] = {"moving": vals, "x": xs}
            else:
                loc = osim.PathPoint.safeDownCast(pp).get_location()
                out["path_points"][pp.getName()] = {"location": [loc[k] for k in range(3)]}
    out["geometry"] = {}
    for b in m.getBodySet():
        for k in range(b.getPropertyByName("attached_geometry").size()):
            g = b.get_attached_geometry(k)
            f = g.get_scale_factors()
            out["geometry"][g.getName()] = [f[i] for i in range(3)]
    cs = m.getCoordinateSet()
    out["coordinates"] = [cs.get(k).getName() for k in range(cs.getSize())]
    out["defaults"] = [cs.get(k).getDefaultValue() for k in range(cs.getSize())]
    for q in q_list:
        for k in range(cs.getSize()):
            c = cs.get(k)
            if not c.getLocked(s):
                c.setValue(s, q[k], False)
        m.realizePosition(s)
        pose = {}
        for b in m.getBodySet():
            T = b.getTransformInGround(s)
            R, p = T.R(), T.p()
            pose[b.getName()] = [[R.get(i, j) for j in range(3)] for i in range(3)] + [
                [p[k] for k in range(3)]]
        out["poses"].append(pose)
    return out
"""

#: Runs the tool, then reads both output models, ahbm's model and the scale file.
SCRIPT = (
    RUN_TOOL
    + MODEL_DATA
    + r"""
OUT["scaled"] = model_data(INPUTS["folder"] + "/scaled_only.osim", INPUTS["q"])
OUT["placed"] = model_data(INPUTS["folder"] + "/scaled_placed.osim", [])
OUT["ahbm_placed"] = model_data(INPUTS["ahbm_model"], [])
ss = osim.ScaleSet(INPUTS["folder"] + "/scale_factors.xml")
OUT["factors"] = {}
for k in range(ss.getSize()):
    f = ss.get(k).getScaleFactors()
    OUT["factors"][ss.get(k).getSegmentName()] = [f[0], f[1], f[2]]
sto = tool.getMarkerPlacer().getOutputStorage()  # the static pose at full precision
labels = sto.getColumnLabels()
row = sto.getStateVector(0).getData()
OUT["static"] = {labels.get(k + 1): row.get(k) for k in range(row.getSize())}
OUT["static_in_degrees"] = sto.isInDegrees()
OUT["muscle_lengths"] = {}
for path in ("/scaled_only.osim", "/scaled_placed.osim"):
    mm = osim.Model(INPUTS["folder"] + path)
    ms = mm.getMuscles()
    OUT["muscle_lengths"][path] = {
        ms.get(k).getName(): [ms.get(k).getOptimalFiberLength(), ms.get(k).getTendonSlackLength()]
        for k in range(ms.getSize())
    }
"""
)


RNG_Q = np.random.default_rng(11).uniform(-0.6, 0.6, (4, 10))


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(scope="module", params=[True, False], ids=["preserve_mass", "volume_mass"])
def runs(request, tmp_path_factory):
    from ahbm.opensim.scale_tool import run_scale

    if not MODEL.is_file() or not STATIC.is_file():
        pytest.skip(f"shared OpenSim walking trial not available ({DATA})")
    preserve = request.param
    ah_dir, os_dir = tmp_path_factory.mktemp("ahbm"), tmp_path_factory.mktemp("opensim")
    res = run_scale(_setup(ah_dir, preserve=preserve))
    ref = opensim_run(
        SCRIPT,
        setup=str(_setup(os_dir, preserve=preserve)),
        folder=str(os_dir),
        q=RNG_Q,
        ahbm_model=str(ah_dir / "scaled_placed.osim"),
        cwd=str(os_dir),
    )
    ref["dirs"] = (ah_dir, os_dir)  # the folders of the two runs' files
    return res, ref, preserve


def test_scale_factors_match_opensims_scale_file(runs):
    res, ref, _ = runs
    for body, f in res.factors.items():
        # OpenSim writes its scale file with 6 significant digits
        np.testing.assert_allclose(f, ref["factors"][body], rtol=6e-6, err_msg=body)
    np.testing.assert_array_equal(res.factors["torso"], MANUAL["torso"])
    assert "unused" not in res.measurement_factors


def _check_bodies(model, data, *, markers=True, rtol=1e-12):
    for b in model.bodies:
        r = data["bodies"][b.name]
        assert b.mass == pytest.approx(r["mass"], rel=rtol), b.name
        np.testing.assert_allclose(b.com, r["com"], rtol=rtol, atol=1e-15, err_msg=b.name)
        I = b.inertia
        mine = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        assert _rel(mine, r["inertia"]) < rtol, b.name
        j = data["joints"][b.joint.name]
        assert j["parent"] == (model.bodies[b.parent].name if b.parent >= 0 else "ground")
        np.testing.assert_allclose(b.position, j["parent_position"], rtol=rtol, atol=1e-15)
        np.testing.assert_allclose(b.child_position, j["child_position"], rtol=rtol, atol=1e-15)
        if markers:
            for k, v in b.markers.items():
                assert data["markers"][k]["body"] == b.name
                np.testing.assert_allclose(v, data["markers"][k]["location"], rtol=rtol,
                                           atol=1e-15, err_msg=k)  # fmt: skip
    assert len(data["bodies"]) == model.n_bodies


def test_scaled_model_matches_opensim_to_round_off(runs):
    res, ref, preserve = runs
    _check_bodies(res.scaled_model, ref["scaled"])
    assert res.scaled_model.total_mass == pytest.approx(72.6, rel=1e-13)


def test_scaled_custom_joints_place_the_bodies_as_opensim(runs):
    from ahbm.kinematics import forward_kinematics

    res, ref, _ = runs
    model = res.scaled_model
    order = [ref["scaled"]["coordinates"].index(c) for c in model.coordinate_names]
    kin = forward_kinematics(model, RNG_Q[:, order])
    for k, pose in enumerate(ref["scaled"]["poses"]):
        for i, b in enumerate(model.bodies):
            R = np.array(pose[b.name][:3])
            p = np.array(pose[b.name][3])
            np.testing.assert_allclose(kin.rotations[k, i], R, atol=1e-12, err_msg=b.name)
            np.testing.assert_allclose(kin.positions[k, i], p, atol=1e-12, err_msg=b.name)


def test_marker_placement_matches_opensim_within_its_fit(runs):
    from ahbm.io import read_trc
    from ahbm.kinematics import forward_kinematics
    from ahbm.kinematics.marker_model import marker_jacobians

    res, ref, _ = runs
    model = res.scaled_model
    trial = read_trc(STATIC)
    t = np.asarray(trial.time)
    frames = (t >= 1.0 - 1e-9) & (t <= 2.0 + 1e-9)
    x = np.nanmean(trial.points[frames], axis=0)
    labels = list(trial.point_labels)
    names = [n for b in model.bodies for n in b.markers]
    X = x[[labels.index(n) for n in names]]
    w = np.array([WEIGHTS.get(n, 1.0) for n in names])
    static = ref["static"]
    joint_of = {c: b.joint.name for b in model.bodies for c in b.joint.coordinates}
    q_os = np.array([static[f"/jointset/{joint_of[c]}/{c}/value"] for c in model.coordinate_names])

    def cost(q):
        p, _ = marker_jacobians(model, q, marker_names=names)
        return float(np.sum(w * np.sum((p - X) ** 2, axis=1)))

    # ahbm's static pose fits at least as well as OpenSim's (whose assembler stops earlier)
    assert cost(res.q_static) <= cost(q_os) * (1 + 1e-9)
    # the placement itself: markers moved to the trial in OpenSim's pose = OpenSim's markers
    kin = forward_kinematics(model, q_os)
    for i, b in enumerate(model.bodies):
        for k in b.markers:
            local = kin.rotations[i].T @ (X[names.index(k)] - kin.positions[i])
            np.testing.assert_allclose(local, ref["placed"]["markers"][k]["location"], atol=1e-9)
    # ahbm's placed markers: within the difference of the two fits (0.5 mm seen)
    for b in res.model.bodies:
        for k, v in b.markers.items():
            assert np.max(np.abs(v - ref["placed"]["markers"][k]["location"])) < 1.5e-3, k
    _check_bodies(res.model, ref["placed"], markers=False)


def test_the_written_model_opens_in_opensim_with_the_same_bodies_and_markers(runs):
    res, ref, _ = runs
    _check_bodies(res.model, ref["ahbm_placed"])


def _path_points(model):
    """Path points of the muscles kept in the "opensim" section: name -> JSON object."""
    out = {}

    def walk(node):
        if isinstance(node, list):
            for x in node:
                walk(x)
        elif isinstance(node, dict):
            if str(node.get("type", "")).endswith("PathPoint"):
                out[node["name"]] = node
            for v in node.values():
                walk(v)

    for item in model.section("opensim"):
        if item.kind == "force":
            walk(item.data)
    return out


def _function_values(d, x):
    """Values of an OpenSim function kept as JSON (MultiplierFunction of a SimmSpline)."""
    from ahbm.kinematics.functions import SimmSpline

    d = d[0] if isinstance(d, list) else d
    if d["type"] == "MultiplierFunction":
        return float(d["scale"]) * _function_values(d["function"], x)
    assert d["type"] == "SimmSpline", d["type"]
    return SimmSpline(d["x"], d["y"])(np.asarray(x))


def test_muscle_path_points_are_scaled_with_their_bodies(runs):
    res, ref, _ = runs
    mine = _path_points(res.scaled_model)
    theirs = ref["scaled"]["path_points"]
    assert set(mine) == set(theirs) and len(mine) == 60
    moving = 0
    for name, r in theirs.items():
        if "location" in r:
            np.testing.assert_allclose(mine[name]["location"], r["location"], rtol=1e-12,
                                       atol=1e-15, err_msg=name)  # fmt: skip
        else:
            moving += 1
            for k, axis in enumerate("xyz"):
                got = _function_values(mine[name][f"{axis}_location"], r["x"])
                np.testing.assert_allclose(got, r["moving"][k], rtol=1e-12, atol=1e-15)
    assert moving == 4


def _toy_model():
    """Custom joints with a spline, a linear and a skew constant translation axis, a child
    offset, products of inertia and a massless body: what a model scale must get right."""
    from ahbm.kinematics.tree import Model

    def axis(a, coordinate, function):
        return {"axis": a, "coordinate": coordinate, "function": function}

    one = {"type": "LinearFunction", "slope": 1.0, "intercept": 0.0}
    zero = {"type": "Constant", "value": 0.0}
    spline = {"type": "SimmSpline", "x": [-1.0, 0.0, 0.5, 1.2], "y": [0.01, 0.0, 0.02, 0.05]}
    m = Model("toy")
    m.add_body(
        "base", "ground",
        {"type": "custom", "coordinates": ["rz", "tx"], "transform": [
            axis([0, 0, 1], "rz", one), axis([1, 0, 0], None, zero), axis([0, 1, 0], None, zero),
            axis([1, 0, 0], "tx", one), axis([0, 1, 0], None, {"type": "Constant", "value": 0.9}),
            axis([0, 0, 1], None, zero)]},
        mass=5.0, com=[0.01, 0.1, -0.02],
        inertia=[[0.05, 0.002, -0.001], [0.002, 0.03, 0.0015], [-0.001, 0.0015, 0.04]],
        markers={"B1": [0.1, 0.2, 0.05], "B2": [-0.1, 0.0, 0.1]},
    )  # fmt: skip
    m.add_body(
        "arm", "base",
        {"type": "custom", "coordinates": ["flex"], "transform": [
            axis([0, 0, 1], "flex", one), axis([1, 0, 0], None, zero), axis([0, 1, 0], None, zero),
            axis([0.6, -0.8, 0], None, {"type": "Constant", "value": 0.3}),
            axis([0, 1, 0], "flex", spline),
            axis([0, 0, 1], "flex", {"type": "LinearFunction", "slope": 0.5, "intercept": 0.01})]},
        position=[0.05, -0.3, 0.1], child_position=[0.0, 0.25, 0.01],
        mass=2.0, com=[0.0, -0.15, 0.0], inertia=np.diag([0.02, 0.004, 0.021]),
        markers={"A1": [0.03, -0.2, 0.0], "A2": [0.0, -0.35, 0.02]},
    )  # fmt: skip
    m.add_body("tip", "arm", "fixed", position=[0.0, -0.4, 0.0], mass=0.0,
               markers={"T1": [0.0, -0.05, 0.0]})  # fmt: skip
    return m


def test_manual_scales_of_custom_joints_and_offsets_match_opensim(tmp_path):
    from ahbm.kinematics import forward_kinematics
    from ahbm.opensim import write_osim
    from ahbm.opensim.scale_tool import run_scale

    write_osim(_toy_model(), tmp_path / "toy.osim")
    scales = {"ground": (1.0, 1.0, 1.0), "base": (1.1, 0.9, 1.3), "arm": (0.8, 1.2, 1.05),
              "tip": (2.0, 2.0, 2.0)}  # fmt: skip
    rows = "".join(
        f"<Scale><scales>{' '.join(map(str, f))}</scales><segment>{b}</segment>"
        "<apply>true</apply></Scale>"
        for b, f in scales.items()
    )
    (tmp_path / "setup.xml").write_text(f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><ScaleTool name="toy">
  <mass>20</mass>
  <GenericModelMaker><model_file>toy.osim</model_file></GenericModelMaker>
  <ModelScaler><apply>true</apply><scaling_order> manualScale</scaling_order>
    <ScaleSet><objects>{rows}</objects></ScaleSet>
    <marker_file>Unassigned</marker_file>
    <preserve_mass_distribution>false</preserve_mass_distribution>
    <output_model_file>toy_scaled.osim</output_model_file>
  </ModelScaler>
</ScaleTool></OpenSimDocument>
""")
    res = run_scale(tmp_path / "setup.xml", write=False)
    q = np.random.default_rng(5).uniform(-0.9, 0.9, (5, 3))
    script = RUN_TOOL + MODEL_DATA + 'OUT["scaled"] = model_data("toy_scaled.osim", INPUTS["q"])'
    ref = opensim_run(script, setup="setup.xml", q=q, cwd=str(tmp_path))["scaled"]
    model = res.scaled_model
    _check_bodies(model, ref)
    assert model.total_mass == pytest.approx(20.0, rel=1e-14)
    order = [ref["coordinates"].index(c) for c in model.coordinate_names]
    kin = forward_kinematics(model, q[:, order])
    for k, pose in enumerate(ref["poses"]):
        for i, b in enumerate(model.bodies):
            np.testing.assert_allclose(kin.rotations[k, i], pose[b.name][:3], atol=1e-12)
            np.testing.assert_allclose(kin.positions[k, i], pose[b.name][3], atol=1e-12,
                                       err_msg=b.name)  # fmt: skip


def test_display_geometry_is_scaled_with_its_body(runs):
    res, ref, _ = runs
    mine = {
        g["name"]: g["scale_factors"]
        for item in res.scaled_model.section("opensim")
        if item.kind == "geometry"
        for g in item.data["attached_geometry"]
    }
    assert set(mine) == set(ref["scaled"]["geometry"]) and mine
    for name, f in ref["scaled"]["geometry"].items():
        np.testing.assert_allclose(mine[name], f, rtol=1e-14, err_msg=name)


def test_muscle_fiber_and_tendon_lengths_follow_the_path_as_in_opensim(runs):
    """OpenSim's postScale: optimal fiber and tendon slack lengths × L_scaled / L_generic."""
    from ahbm.opensim import read_osim

    res, ref, _ = runs
    generic = {mu.name: mu for mu in read_osim(MODEL).muscles}
    models = (("/scaled_only.osim", res.scaled_model), ("/scaled_placed.osim", res.model))
    for path, model in models:
        theirs = ref["muscle_lengths"][path]
        mine = {it.get("name"): it for it in model.section("opensim") if it.kind == "force"}
        assert set(theirs) <= set(mine) and len(theirs) == 18
        changed = 0
        for name, (fiber, tendon) in theirs.items():
            got = (mine[name].get("optimal_fiber_length"), mine[name].get("tendon_slack_length"))
            np.testing.assert_allclose(got, (fiber, tendon), rtol=1e-12, err_msg=name)
            mu = {m.name: m for m in model.muscles}[name]
            assert (mu.optimal_fiber_length, mu.tendon_slack_length) == got
            changed += abs(fiber / generic[name].optimal_fiber_length - 1.0) > 1e-3
        assert changed >= 5  # 7 of 18 move by more than 0.1 % on this trial's factors


def test_static_pose_and_scale_set_files_have_opensims_layout(runs):
    """The marker placer's static pose is a states file; the ScaleSet lists every frame."""
    import re

    from ahbm.opensim import read_mot

    _, ref_data, _ = runs
    ah_dir, os_dir = ref_data["dirs"]
    mine = read_mot(ah_dir / "static_pose.mot", angle_columns=[])
    ref = read_mot(os_dir / "static_pose.mot", angle_columns=[])
    assert mine.columns == ref.columns and not mine.in_degrees and not ref.in_degrees
    assert mine.name == ref.name and np.allclose(mine.time, ref.time)
    values = [c for c in ref.columns if c.endswith("/value")]
    other = [c for c in ref.columns if not c.endswith("/value")]  # speeds, muscle defaults
    np.testing.assert_array_equal(mine.data[other].to_numpy(), ref.data[other].to_numpy())
    # the two static-pose fits differ slightly (see the placement test above)
    np.testing.assert_allclose(mine.data[values].to_numpy(), ref.data[values].to_numpy(),
                               atol=5e-3)  # fmt: skip

    def rows(path):
        text = Path(path).read_text()
        pat = r"<scales>([^<]*)</scales>\s*<segment>([^<]*)</segment>"
        return [(m.group(2), np.array(m.group(1).split(), float)) for m in re.finditer(pat, text)]

    a, b = rows(ah_dir / "scale_factors.xml"), rows(os_dir / "scale_factors.xml")
    assert [n for n, _ in a] == [n for n, _ in b]  # ground, bodies, each offset frame
    for (name, f), (_, g) in zip(a, b, strict=True):
        np.testing.assert_allclose(f, g, rtol=6e-6, err_msg=name)  # OpenSim's 6 digits
