"""Models read by ``ahbm.opensim.read_osim`` against OpenSim itself (through the oracle).

For the shared ``subject01.osim`` (custom pelvis joint, the knees' spline
translations) and for ``tests/data/osim/all_joints.osim`` (every joint type,
offset frames on offset frames, every function type, a coordinate coupler),
at random states: body frame poses, marker positions, the mass matrix and
inverse-dynamics generalized forces (``osim.InverseDynamicsSolver``) agree to
1e-9 relative. OpenSim's speeds ``u`` are ahbm's ``qd`` except for the
BallJoint and FreeJoint rotations (``u = T(q) qd``,
:func:`ahbm.opensim.osim_speed_matrix`), so ``M = Tᵀ M_osim T`` and
``τ = Tᵀ τ_osim`` with ``u̇ = T q̈ + Ṫ qd`` (``Ṫ qd`` by complex step).
Models written by ``write_osim`` open in OpenSim with the same body poses.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from opensim_oracle import opensim_run
from sample_data import SHARED

from ahbm.dynamics import ConstraintSet, crba, rnea
from ahbm.errors import AhbmWarning
from ahbm.kinematics import forward_kinematics, point_position
from ahbm.kinematics.configuration import random_model
from ahbm.opensim import osim_coordinates, osim_speed_matrix, read_osim, write_osim
from ahbm.opensim.coordinate_table import _speed_matrix

DATA = Path(__file__).resolve().parents[1] / "data" / "osim"
SUBJECT01 = SHARED / "opensim"
SUBJECT01 = (SUBJECT01 / "subject01.osim").resolve()
RTOL = 1e-9

ORACLE = """
m = osim.Model(INPUTS["path"])
for f in m.getForceSet():
    f.set_appliesForce(False)
s = m.initSystem()
cs = m.getCoordinateSet()
names = [cs.get(i).getName() for i in range(cs.getSize())]

def index_of(setter, getter, n):
    out = []
    for c in names:
        base = np.array([getter()[i] for i in range(n())])
        setter(cs.get(c), 1.0)
        moved = np.array([getter()[i] for i in range(n())])
        setter(cs.get(c), 0.0)
        out.append(int(np.argmax(np.abs(moved - base))))
    return out

u_index = index_of(lambda c, v: c.setSpeedValue(s, v), s.getU, s.getNU)
OUT["u_names"] = [names[k] for k in np.argsort(u_index)]
OUT["motion"] = {c: str(cs.get(c).getMotionType()) for c in names}
OUT["default"] = {c: cs.get(c).getDefaultValue() for c in names}
OUT["range"] = {c: [cs.get(c).getRangeMin(), cs.get(c).getRangeMax()] for c in names}
bodies = [b.getName() for b in m.getBodySet()]
markers = [k.getName() for k in m.getMarkerSet()]
OUT["bodies"], OUT["markers"] = bodies, markers
ids = osim.InverseDynamicsSolver(m)
R, p, mk, M, tau, qerr = [], [], [], [], [], []
for q, u, udot in zip(INPUTS["q"], INPUTS["u"], INPUTS["udot"]):
    for c in names:
        if c in q:
            cs.get(c).setValue(s, q[c], False)
            cs.get(c).setSpeedValue(s, u[c])
    m.realizeAcceleration(s)
    Rk, pk = [], []
    for b in bodies:
        X = m.getBodySet().get(b).getTransformInGround(s)
        Rk.append([[X.R().get(i, j) for j in range(3)] for i in range(3)])
        pk.append([X.p().get(i) for i in range(3)])
    R.append(Rk); p.append(pk)
    mk.append([list(np.array([m.getMarkerSet().get(k).getLocationInGround(s).get(i)
                              for i in range(3)])) for k in markers])
    Mm = osim.Matrix()
    m.getMatterSubsystem().calcM(s, Mm)
    M.append([[Mm.get(i, j) for j in range(Mm.ncol())] for i in range(Mm.nrow())])
    ud = osim.Vector([udot.get(c, 0.0) for c in OUT["u_names"]])  # locked: 0
    t = ids.solve(s, ud)
    tau.append([t.get(i) for i in range(t.size())])
    qerr.append([s.getQErr()[i] for i in range(s.getNQErr())])
OUT.update(R=R, p=p, markers_xyz=mk, M=M, tau=tau, qerr=qerr)
"""


def _read(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AhbmWarning)
        return read_osim(path)


def _states(model, n, rng):
    q = rng.uniform(-0.8, 0.8, size=(n, model.nq))
    for k, name in enumerate(model.coordinate_names):
        if name.endswith("_ty") and name.startswith("pelvis"):
            q[:, k] += 1.0
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def _tdot_qd(model, q, qd):
    """Ṫ(q) qd by complex step (exact to round-off)."""
    h = 1e-30
    T = _speed_matrix(model, q + 1j * h * qd)
    return np.einsum("nij,nj->ni", T.imag / h, qd)


def assert_rel(actual, desired, rtol=RTOL, what=""):
    actual, desired = np.asarray(actual, dtype=float), np.asarray(desired, dtype=float)
    assert actual.shape == desired.shape, (what, actual.shape, desired.shape)
    scale = max(float(np.abs(desired).max(initial=0.0)), 1e-12)
    err = float(np.abs(actual - desired).max(initial=0.0)) / scale
    assert err <= rtol, f"{what}: relative error {err:.3e} > {rtol:.0e}"


def _compare(path, n_states=3, seed=0, same_order=True):
    model = _read(path)
    rng = np.random.default_rng(seed)
    q, qd, qdd = _states(model, n_states, rng)
    T = osim_speed_matrix(model, q)
    u = np.einsum("nij,nj->ni", T, qd)
    udot = np.einsum("nij,nj->ni", T, qdd) + _tdot_qd(model, q, qd)
    names = model.coordinate_names
    out = opensim_run(
        ORACLE,
        path=str(path),
        q=[dict(zip(names, x, strict=True)) for x in q],
        u=[dict(zip(names, x, strict=True)) for x in u],
        udot=[dict(zip(names, x, strict=True)) for x in udot],
    )
    # the state vectors list the coordinates in the same order (for models read from OpenSim)
    if same_order:  # (locked coordinates are not in the model)
        assert [n for n in out["u_names"] if n in model.velocity_names] == model.velocity_names
    perm = [out["u_names"].index(n) for n in model.velocity_names]
    kin = forward_kinematics(model, q)
    for b, name in enumerate(out["bodies"]):
        i = model.body_index(name)
        assert_rel(kin.rotations[:, i], np.asarray(out["R"])[:, b], what=f"R {name}")
        assert_rel(kin.positions[:, i], np.asarray(out["p"])[:, b], what=f"p {name}")
    where = {mk: b.name for b in model.bodies for mk in b.markers}
    for k, name in enumerate(out["markers"]):
        body = where[name]
        xyz = point_position(model, q, body, model.bodies[model.body_index(body)].markers[name])
        assert_rel(xyz, np.asarray(out["markers_xyz"])[:, k], what=f"marker {name}")
    Mo = np.asarray(out["M"])[:, perm][:, :, perm]
    assert_rel(crba(model, q), np.einsum("nki,nkl,nlj->nij", T, Mo, T), what="mass matrix")
    tau_o = np.einsum("nki,nk->ni", T, np.asarray(out["tau"])[:, perm])
    assert_rel(rnea(model, q, qd, qdd), tau_o, what="inverse dynamics")
    return model, q, out


@pytest.mark.parametrize(
    "path",
    [SUBJECT01, DATA / "all_joints.osim", DATA / "legacy33.osim"],
    ids=lambda p: p.stem,
)
def test_read_osim_matches_opensim(path):
    if not path.exists():
        pytest.skip(f"{path} is not available")
    model, q, out = _compare(path)
    table = osim_coordinates(model)
    kinds = {"1": "rotational", "2": "translational", "3": "coupled"}
    for name in model.coordinate_names:
        assert table.loc[name, "motion_type"] == kinds[out["motion"][name]], name
        assert table.loc[name, "default_value"] == out["default"][name]
        assert [table.loc[name, "range_min"], table.loc[name, "range_max"]] == out["range"][name]
    if model.constraints:  # the coordinate coupler: same residual as OpenSim's (up to sign)
        g = ConstraintSet(model.constraints).position(model, q)
        qerr = np.asarray(out["qerr"])
        assert qerr.shape == g.shape
        assert_rel(np.abs(g), np.abs(qerr), what="coupler residual")


def test_write_osim_opens_in_opensim(tmp_path):
    """Models written by write_osim (read ones, and ahbm's own joint types) match OpenSim."""
    rng = np.random.default_rng(3)
    types = ("revolute", "prismatic", "universal", "euler", "free_euler", "planar", "fixed")
    own = random_model(8, rng=rng, joint_types=types)
    for i, b in enumerate(own.bodies):
        own.update_body(i, markers={f"m{i}": rng.normal(size=3) * 0.1})
    for k, model in enumerate([_read(DATA / "all_joints.osim"), own]):
        path = write_osim(model, tmp_path / f"written{k}.osim")
        # OpenSim orders a CustomJoint's coordinates by its transform axes: ahbm's
        # free_euler and planar joints (translations first) come back rotations first
        _compare(path, n_states=2, seed=k, same_order=k == 0)


def test_locked_coordinates_match_opensim(tmp_path):
    """Locked coordinates (a pin, one axis of a custom joint, a free joint's translation) are
    fixed at their defaults: the free part of the model moves as in OpenSim."""
    text = (DATA / "all_joints.osim").read_text()
    for name in ("pin_q", "custom_add", "free_ty"):
        text = text.replace(
            f'<Coordinate name="{name}">', f'<Coordinate name="{name}"><locked>true</locked>'
        )
        text = text.replace(
            f'<Coordinate name="{name}" />',
            f'<Coordinate name="{name}"><locked>true</locked></Coordinate>',
        )
    path = tmp_path / "locked.osim"
    path.write_text(text)
    model, _, _ = _compare(path)
    assert "pin_q" not in model.coordinate_names and model.nq == 20
    # written back: the pin without coordinates is a WeldJoint (OpenSim 4.6 crashes in
    # initSystem on a CustomJoint without coordinates); the same model in OpenSim. (Not with
    # custom_add locked: its constant, non-zero middle rotation makes OpenSim's own body
    # velocities differ from the derivative of its own poses by ~1e-2 rad/s.)
    text = (DATA / "all_joints.osim").read_text()
    for name in ("pin_q", "free_ty"):
        text = text.replace(
            f'<Coordinate name="{name}">', f'<Coordinate name="{name}"><locked>true</locked>'
        ).replace(
            f'<Coordinate name="{name}" />',
            f'<Coordinate name="{name}"><locked>true</locked></Coordinate>',
        )
    path = tmp_path / "locked2.osim"
    path.write_text(text)
    written = write_osim(_read(path), tmp_path / "locked_written.osim")
    back = _read(written)
    assert back.bodies[back.body_index("pin_body")].joint.type == "fixed"
    _compare(written)


def test_coupler_of_a_locked_coordinate_matches_opensim(tmp_path):
    """The coupler's independent coordinate locked: OpenSim's assembly puts the dependent
    coordinate at f(locked value), and read_osim fixes it there (MoBL_ARMS' wrist)."""
    text = (DATA / "all_joints.osim").read_text()
    old = '<Coordinate name="custom_flex">'
    assert text.count(old) == 1
    text = text.replace(old, old + "<locked>true</locked><default_value>0.3</default_value>")
    path = tmp_path / "locked_coupler.osim"
    path.write_text(text)
    model, _, _ = _compare(path)
    assert "coupled_q" not in model.coordinate_names and not model.constraints


def test_written_legacy_forces_open_in_opensim(tmp_path):
    """A 3.x muscle (disabled, min_control 0, a conditional path point naming its coordinate)
    read and written as 4.x: OpenSim opens the written file with the same muscle as when it
    updates the 3.x file itself (appliesForce, min_control, path lengths)."""
    text = (DATA / "legacy33.osim").read_text()
    old = '<Thelen2003Muscle name="vasti">\n'
    text = text.replace(old, old + "<isDisabled>true</isDisabled><min_control>0</min_control>\n")
    old = '<PathPoint name="insertion">'
    text = text.replace(
        old,
        '<ConditionalPathPoint name="mid"><location> 0.04 -0.3 0.01</location><body>thigh</body>'
        "<coordinate>knee_angle</coordinate><range>-2 0</range></ConditionalPathPoint>" + old,
    )
    legacy = tmp_path / "legacy_forces.osim"
    legacy.write_text(text)
    written = write_osim(_read(legacy), tmp_path / "legacy_forces_4x.osim")
    script = """
    out = []
    for p in (INPUTS["a"], INPUTS["b"]):
        m = osim.Model(p); s = m.initSystem(); cs = m.getCoordinateSet()
        mu = osim.Thelen2003Muscle.safeDownCast(m.getForceSet().get("vasti"))
        lengths = []
        for knee in (-1.0, 0.5):
            cs.get("knee_angle").setValue(s, knee, False)
            m.realizePosition(s)
            lengths.append(mu.getLength(s))
        out.append([mu.get_appliesForce(), mu.get_min_control(), lengths])
    OUT["a"], OUT["b"] = out
    """
    out = opensim_run(script, a=str(legacy), b=str(written))
    assert out["a"][:2] == out["b"][:2] == [False, 0.01]
    assert_rel(out["b"][2], out["a"][2], rtol=1e-12, what="muscle lengths")
    assert out["a"][2][0] != out["a"][2][1]


def test_legacy_numbers_match_opensim(tmp_path):
    """A 3.x file with 10-11 significant digits: OpenSim 4 converts the inertia elements and
    the joints' locations/orientations through 6-digit text, and so does read_osim; poses,
    markers, M and ID agree to 1e-9 (they differed by ~1e-7 relative before: MoBL_ARMS)."""
    text = (DATA / "legacy33.osim").read_text()
    for a, b in [
        ("<inertia_xx>0.11<", "<inertia_xx>0.1123456789<"),
        ("<inertia_xy>0.002<", "<inertia_xy>0.00212345678<"),
        ("<location_in_parent> 0 1 0<", "<location_in_parent> 0 1.123456789123 0<"),
        ("<orientation_in_parent> 0.1 0 0.2<", "<orientation_in_parent> 0.1234567891 0 0.2<"),
        ("<location> 0.01 0.02 0<", "<location> 0.0123456789 0.02 0<"),
        ("<mass>7.5<", "<mass>7.51234567891<"),
        ("<location> 0.0 -0.4 0.05<", "<location> 0.0123456789 -0.4 0.05<"),
    ]:
        assert text.count(a) == 1, a
        text = text.replace(a, b)
    path = tmp_path / "legacy_digits.osim"
    path.write_text(text)
    _compare(path)


def test_written_subject01_keeps_its_muscles(tmp_path):
    """The kept forces are written back: OpenSim finds the same 18 muscle paths (lengths at
    random poses, through conditional and moving path points)."""
    if not SUBJECT01.exists():
        pytest.skip("shared subject01.osim is absent")
    model = _read(SUBJECT01)
    path = write_osim(model, tmp_path / "subject01_written.osim")
    q = np.random.default_rng(4).uniform(-0.6, 0.3, size=(3, model.nq))
    q[:, model.coordinate_names.index("pelvis_ty")] += 1.0
    script = """
    out = []
    for p in (INPUTS["a"], INPUTS["b"]):
        m = osim.Model(p); s = m.initSystem(); cs = m.getCoordinateSet()
        lengths = []
        for q in INPUTS["q"]:
            for c, v in q.items():
                cs.get(c).setValue(s, v, False)
            m.realizePosition(s)
            lengths.append([m.getMuscles().get(i).getLength(s)
                            for i in range(m.getMuscles().getSize())])
        out.append(lengths)
    OUT["a"], OUT["b"] = out
    """
    names = model.coordinate_names
    out = opensim_run(
        script, a=str(SUBJECT01), b=str(path), q=[dict(zip(names, x, strict=True)) for x in q]
    )
    a, b = np.asarray(out["a"]), np.asarray(out["b"])
    assert a.shape == (3, 18)
    assert_rel(b, a, rtol=1e-12, what="muscle lengths")
