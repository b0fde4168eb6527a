"""Path kinematics: lengths against a frame-by-frame reference, moment arms and lengthening
speeds against finite differences of the lengths, wrapping against wrap_path_segment."""

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.kinematics import body_jacobian, forward_kinematics, point_position
from ahbm.kinematics.configuration import integrate_q
from ahbm.kinematics.functions import LinearFunction, PolynomialFunction, SimmSpline
from ahbm.kinematics.tree import Model
from ahbm.muscles import (
    ConditionalPathPoint,
    MovingPathPoint,
    Muscle,
    PathPoint,
    PathWrap,
    WrapObject,
    lengthening_speeds,
    moment_arms,
    muscle_lengths,
    path_loads,
    path_points,
    wrap_path_segment,
)

PARAMS = dict(max_isometric_force=1000.0, optimal_fiber_length=0.1, tendon_slack_length=0.2)


def _rot(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i] = R[j, j] = c
    R[i, j], R[j, i] = -s, s
    return R


def leg(free_root=False) -> Model:
    """Pelvis (fixed or free), thigh (hip ZXY), shank (knee about z), foot (ankle about z)."""
    m = Model("leg", gravity=(0, -9.81, 0))
    root = {"type": "free"} if free_root else {"type": "fixed"}
    m.add_body("pelvis", "ground", root, mass=10.0, inertia=np.eye(3) * 0.1, position=(0, 1, 0))
    m.add_body("thigh", "pelvis", {"type": "euler", "sequence": "ZXY"}, mass=8.0,
               inertia=np.diag([0.1, 0.02, 0.1]), position=(0, -0.08, 0.08))  # fmt: skip
    m.add_body("shank", "thigh", {"type": "revolute", "axis": [0, 0, 1]}, mass=3.5,
               inertia=np.diag([0.05, 0.01, 0.05]), position=(0, -0.42, 0))  # fmt: skip
    m.add_body("foot", "shank", {"type": "revolute", "axis": [0, 0, 1]}, mass=1.0,
               inertia=np.eye(3) * 0.01, position=(0, -0.4, 0), rotation=_rot(0, 0.1))  # fmt: skip
    return m


def point_muscles(m: Model) -> list:
    knee = m.bodies[2].joint.coordinates[0]
    ankle = m.bodies[3].joint.coordinates[0]
    hip = m.bodies[1].joint.coordinates
    return [
        Muscle(
            "glut",
            (
                PathPoint("o", "pelvis", (-0.1, 0.05, 0.05)),
                PathPoint("v", "thigh", (-0.03, -0.05, 0.02)),
                PathPoint("i", "thigh", (-0.01, -0.15, 0.03)),
            ),
            **PARAMS,
        ),  # fmt: skip
        Muscle(
            "rect_fem",
            (
                PathPoint("o", "pelvis", (0.03, -0.03, 0.1)),
                ConditionalPathPoint("c", "thigh", (0.04, -0.40, 0.0), knee, (-2.6, -1.2)),
                MovingPathPoint(
                    "pat",
                    "shank",
                    (0.0, 0.0, 0.002),
                    x=(
                        knee,
                        SimmSpline(
                            [-2.1, -1.5, -1.0, -0.5, 0.0, 0.2],
                            [0.016, 0.028, 0.037, 0.045, 0.062, 0.070],
                        ),
                    ),
                    y=(knee, PolynomialFunction([0.003, 0.01, 0.02]), (-2.0, 0.1)),
                ),
            ),
            **PARAMS,
        ),  # fmt: skip
        Muscle(
            "gastroc",
            (
                PathPoint("o", "thigh", (-0.02, -0.38, -0.02)),
                ConditionalPathPoint("c1", "shank", (-0.03, -0.05, -0.02), knee, (-0.5, 0.3)),
                ConditionalPathPoint("c2", "shank", (-0.02, -0.2, -0.02), hip[0], (-3, 3)),
                PathPoint("i", "foot", (-0.05, 0.02, 0.0)),
            ),
            **PARAMS,
        ),
        Muscle(
            "tib_ant",
            (
                PathPoint("o", "shank", (0.02, -0.1, 0.01)),
                MovingPathPoint(
                    "m", "foot", (0.08, 0.0, 0.0), y=(ankle, LinearFunction(0.02, 0.01))
                ),  # fmt: skip
                PathPoint("i", "foot", (0.12, -0.02, 0.0)),
            ),
            **PARAMS,
        ),
        Muscle(
            "ground_to_foot",
            (PathPoint("o", "ground", (0.2, 0.0, 0.0)), PathPoint("i", "foot", (0.0, -0.03, 0.0))),
            **PARAMS,
        ),  # fmt: skip
    ]


def states(m: Model, n: int, rng, shape=None):
    """Random states away from the joint limits; knee negative (flexion)."""
    q = np.zeros((n, m.nq))
    names = m.coordinate_names
    for k, c in enumerate(names):
        q[:, k] = rng.uniform(-0.6, 0.6, n)
    knee = names.index(m.bodies[2].joint.coordinates[0])
    q[:, knee] = rng.uniform(-2.2, 0.1, n)
    if m.bodies[0].joint.type == "free":
        q[:, :3] = rng.normal(size=(n, 3)) * 0.1
        quat = rng.normal(size=(n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q if shape is None else q.reshape(shape + (m.nq,))


def reference_lengths(m: Model, q: np.ndarray) -> np.ndarray:
    """Frame by frame: world points through point_position, active points only."""
    out = np.empty((len(q), len(m.muscles)))
    names = m.coordinate_names
    for n, qn in enumerate(q):
        for k, mus in enumerate(m.muscles):
            pts = []
            for p in mus.points:
                if isinstance(p, ConditionalPathPoint):
                    x = qn[names.index(p.coordinate)]
                    if not p.range[0] - 1e-5 <= x <= p.range[1] + 1e-5:
                        continue
                loc = np.array(p.location, dtype=float)
                if isinstance(p, MovingPathPoint):
                    for axis, spec in enumerate(p.axes):
                        if spec is not None:
                            x = qn[names.index(spec[0])]
                            if len(spec) == 3:
                                x = min(max(x, spec[2][0]), spec[2][1])
                            loc[axis] = spec[1](x)
                pts.append(loc if p.body == "ground" else point_position(m, qn, p.body, loc))
            out[n, k] = sum(np.linalg.norm(b - a) for a, b in zip(pts, pts[1:], strict=False))
    return out


def fd_moment_arms(m: Model, q: np.ndarray, h=1e-6, **kw) -> np.ndarray:
    """-dl/dv by central differences along each generalized velocity (integrate_q)."""
    r = np.empty(q.shape[:-1] + (len(kw.get("muscles") or m.muscles), m.nv))
    for j in range(m.nv):
        v = np.zeros(m.nv)
        v[j] = h
        lp = muscle_lengths(m, integrate_q(m, q, v), **kw)
        lm = muscle_lengths(m, integrate_q(m, q, -v), **kw)
        r[..., j] = -(lp - lm) / (2 * h)
    return r


@pytest.fixture
def model():
    m = leg()
    m.muscles = point_muscles(m)
    return m


def test_lengths_match_a_frame_by_frame_reference(model):
    q = states(model, 40, np.random.default_rng(0))
    np.testing.assert_allclose(muscle_lengths(model, q), reference_lengths(model, q), atol=1e-14)


def test_conditional_points_switch_on_and_off(model):
    q = states(model, 200, np.random.default_rng(1))
    knee = q[:, model.coordinate_names.index("shank_q") if "shank_q" in model.coordinate_names
             else model.coordinate_names.index(model.bodies[2].joint.coordinates[0])]  # fmt: skip
    pts = path_points(model, q, "rect_fem")
    on = (knee >= -2.6 - 1e-5) & (knee <= -1.2 + 1e-5)
    assert on.any() and (~on).any()
    np.testing.assert_array_equal(np.isnan(pts[:, 1, 0]), ~on)
    assert not np.isnan(pts[:, [0, 2]]).any()


@pytest.mark.parametrize("free_root", [False, True])
def test_moment_arms_are_minus_the_length_derivative(free_root):
    m = leg(free_root)
    m.muscles = point_muscles(m)
    q = states(m, 25, np.random.default_rng(2))
    r = moment_arms(m, q)
    assert r.shape == (25, 5, m.nv)
    fd = fd_moment_arms(m, q)
    np.testing.assert_allclose(r, fd, atol=2e-9)
    # a muscle does not act on coordinates it does not span
    hip = [m.velocity_names.index(c) for c in m.bodies[1].joint.coordinates]
    assert np.all(np.abs(r[:, 3, hip]) < 1e-14)  # tib_ant: shank to foot (round-off)


def test_lengthening_speed_is_the_time_derivative_of_the_length(model):
    t = np.linspace(0.0, 1.0, 11)
    rng = np.random.default_rng(3)
    a, w, ph = (
        rng.uniform(0.2, 0.5, model.nq),
        rng.uniform(1, 4, model.nq),
        rng.uniform(0, 6, model.nq),
    )
    knee = model.coordinate_names.index(model.bodies[2].joint.coordinates[0])

    def q_of(t):
        q = a * np.sin(w * t[:, None] + ph)
        q[:, knee] = -1.0 + 0.5 * np.sin(2 * t)  # stays inside or outside the conditional range
        return q

    def qd_of(t):
        qd = a * w * np.cos(w * t[:, None] + ph)
        qd[:, knee] = np.cos(2 * t)
        return qd

    h = 1e-6
    fd = (muscle_lengths(model, q_of(t + h)) - muscle_lengths(model, q_of(t - h))) / (2 * h)
    speeds = lengthening_speeds(model, q_of(t), qd_of(t))
    np.testing.assert_allclose(speeds, fd, atol=1e-8)
    np.testing.assert_allclose(
        speeds, -np.einsum("nmv,nv->nm", moment_arms(model, q_of(t)), qd_of(t)), atol=1e-14
    )


def test_batch_shapes_subsets_and_a_shared_state(model):
    q = states(model, 6, np.random.default_rng(4), shape=(2, 3))
    lengths = muscle_lengths(model, q)
    assert lengths.shape == (2, 3, 5)
    sub = muscle_lengths(model, q, muscles=["tib_ant", "glut"])
    np.testing.assert_array_equal(sub, lengths[..., [3, 0]])
    assert muscle_lengths(model, q[0, 0]).shape == (5,)
    np.testing.assert_array_equal(muscle_lengths(model, q[0, 0]), lengths[0, 0])
    kin = forward_kinematics(model, q)
    np.testing.assert_array_equal(muscle_lengths(model, None, kin=kin), lengths)
    np.testing.assert_allclose(moment_arms(model, None, kin=kin), moment_arms(model, q), atol=0)
    assert moment_arms(model, q, muscles=["glut"]).shape == (2, 3, 1, model.nv)
    assert path_points(model, q, "gastroc").shape == (2, 3, 4, 3)


def test_bad_arguments_raise_data_errors(model):
    q = np.zeros(model.nq)
    with pytest.raises(DataError, match="'soleus' is not a muscle of model 'leg'"):
        muscle_lengths(model, q, muscles=["soleus"])
    with pytest.raises(DataError, match="`q`"):
        muscle_lengths(model, np.zeros(model.nq + 1))
    with pytest.raises(DataError, match="`muscle`"):
        path_points(model, q, 3)
    with pytest.raises(DataError, match="`muscle`: 'soleus' is not a muscle"):
        path_points(model, q, "soleus")
    with pytest.raises(DataError, match="qd"):
        lengthening_speeds(model, q, np.zeros(model.nv + 2))


def test_a_model_without_muscles_gives_empty_arrays():
    m = leg()
    assert muscle_lengths(m, np.zeros((4, m.nq))).shape == (4, 0)
    assert moment_arms(m, np.zeros((4, m.nq))).shape == (4, 0, m.nv)


# ----------------------------------------------------------------------------
# wrapping
# ----------------------------------------------------------------------------


def wrap_objects():
    return [
        WrapObject("knee_cyl", "thigh", "cylinder", (0.0, -0.42, 0.0), _rot(1, 0.2), (0.035, 0.2),
                   quadrant="+x"),
        WrapObject("hip_sphere", "pelvis", "sphere", (0.02, -0.06, 0.08), np.eye(3), (0.05,)),
        WrapObject("heel_ell", "foot", "ellipsoid", (-0.03, 0.03, 0.0), _rot(2, 0.3),
                   (0.03, 0.05, 0.04), quadrant="-x"),
        WrapObject("shank_cyl", "shank", "cylinder", (0.0, -0.15, 0.0), np.eye(3), (0.03, 0.5),
                   quadrant="all"),
    ]  # fmt: skip


def wrap_muscles():
    return [
        Muscle(
            "vasti",
            (
                PathPoint("o", "thigh", (0.03, -0.2, 0.02)),
                PathPoint("i", "shank", (0.05, -0.06, 0.0)),
            ),
            (PathWrap("knee_cyl"),),
            **PARAMS,
        ),  # fmt: skip
        Muscle(
            "psoas",
            (
                PathPoint("o", "pelvis", (0.0, 0.1, 0.08)),
                PathPoint("v", "pelvis", (0.06, -0.02, 0.08)),
                PathPoint("i", "thigh", (-0.005, -0.06, 0.0)),
            ),
            (PathWrap("hip_sphere", range=(2, 3)),),
            **PARAMS,
        ),  # fmt: skip
        Muscle(
            "soleus",
            (
                PathPoint("o", "shank", (-0.02, -0.1, 0.0)),
                PathPoint("i", "foot", (-0.05, 0.0, 0.0)),
            ),
            (PathWrap("heel_ell", method="midpoint"),),
            **PARAMS,
        ),  # fmt: skip
        Muscle(
            "two_wraps",
            (
                PathPoint("o", "thigh", (0.04, -0.25, 0.0)),
                PathPoint("i", "foot", (0.05, 0.02, 0.0)),
            ),
            (PathWrap("knee_cyl"), PathWrap("shank_cyl")),
            **PARAMS,
        ),  # fmt: skip
    ]


@pytest.fixture
def wrapped():
    m = leg()
    m.wrap_objects = wrap_objects()
    m.muscles = wrap_muscles()
    return m


def _world_to_wrap(m, q, w: WrapObject):
    """World -> wrap frame (rotation, origin) at one state, through point_position."""
    o = point_position(m, q, w.body, w.translation)
    Rb = np.column_stack(
        [point_position(m, q, w.body, np.array(w.translation) + e) - o for e in np.eye(3)]
    )
    return Rb @ np.array(w.rotation), o


def test_single_wraps_match_wrap_path_segment_in_the_wrap_frame(wrapped):
    m = wrapped
    q = states(m, 30, np.random.default_rng(5))
    lengths = muscle_lengths(m, q)
    objs = {w.name: w for w in m.wrap_objects}
    n_active = 0
    for k, mus in enumerate(m.muscles[:3]):
        w = objs[mus.wraps[0].wrap_object]
        for n in range(len(q)):
            pts = [point_position(m, q[n], p.body, p.location) for p in mus.points]
            R, o = _world_to_wrap(m, q[n], w)
            first, last = mus.wraps[0].point_range(len(pts))
            # the one segment of the range (ranges here span 2 points)
            a, b = (pts[-2], pts[-1]) if first == len(pts) - 2 else (pts[0], pts[1])
            res = wrap_path_segment(w.kind, w.dimensions, w.quadrant, R.T @ (a - o),
                                    R.T @ (b - o), method=mus.wraps[0].method)  # fmt: skip
            other = sum(np.linalg.norm(y - x) for x, y in zip(pts, pts[1:], strict=False))
            expected = other - np.linalg.norm(b - a) + float(res.length)
            n_active += bool(res.active)
            assert lengths[n, k] == pytest.approx(expected, abs=1e-12)
    assert n_active > 20  # the test exercises active wraps


def test_wrapped_moment_arms_match_finite_differences(wrapped):
    m = wrapped
    q = states(m, 30, np.random.default_rng(6))
    r = moment_arms(m, q)
    fd = fd_moment_arms(m, q, h=1e-6)
    # frames where a wrap switches on/off within the step are kinks: there the one-sided
    # derivatives differ; elsewhere the analytic derivative must agree
    fd2 = fd_moment_arms(m, q, h=2e-6)
    smooth = np.all(np.abs(fd - fd2) < 1e-6, axis=-1)
    assert smooth.mean() > 0.9
    # cylinder, sphere and the two cylinders: analytic through wrap_length_gradient; the
    # ellipsoid's surface length is OpenSim's polyline of ~1 mm chords, whose length is
    # only piecewise smooth: its derivative agrees to a few micrometres per radian
    tol = np.array([1e-8, 1e-8, 2e-5, 1e-8])
    err = np.abs(r - fd).max(axis=-1)
    assert np.all(np.where(smooth, err, 0.0) <= tol), np.where(smooth, err, 0.0).max(axis=0)


def test_two_wraps_on_one_segment_are_applied_in_order(wrapped):
    m = wrapped
    q = states(m, 50, np.random.default_rng(7))
    both = muscle_lengths(m, q, muscles=["two_wraps"])[:, 0]
    straight = np.linalg.norm(
        path_points(m, q, "two_wraps")[:, 1] - path_points(m, q, "two_wraps")[:, 0], axis=-1
    )
    assert np.all(both >= straight - 1e-12)
    assert np.any(both > straight + 1e-3)


def test_inactive_wrap_objects_are_ignored(wrapped):
    m = wrapped
    q = states(m, 10, np.random.default_rng(8))
    objs = [
        WrapObject(**{**w.to_dict(), "active": False}) if w.name == "hip_sphere" else w
        for w in m.wrap_objects
    ]
    m2 = leg()
    m2.wrap_objects = objs
    m2.muscles = wrap_muscles()
    pts = path_points(m2, q, "psoas")
    straight = np.linalg.norm(np.diff(pts, axis=1), axis=-1).sum(-1)
    np.testing.assert_allclose(muscle_lengths(m2, q, muscles=["psoas"])[:, 0], straight, atol=1e-15)


@pytest.mark.parametrize("wraps", [False, True])
def test_path_loads_give_the_moment_arms_through_the_body_jacobians(model, wrapped, wraps):
    m = wrapped if wraps else model
    q = states(m, 12, np.random.default_rng(9))
    body, coord = path_loads(m, q)
    assert body.shape == (12, len(m.muscles), m.n_bodies, 6)
    tau = coord.copy()
    for b in range(m.n_bodies):
        J = body_jacobian(m, q, b, frame="world")  # (N, 6, nv)
        tau += np.einsum("niv,nmi->nmv", J, body[:, :, b])
    np.testing.assert_allclose(tau, moment_arms(m, q), atol=1e-13)
    # a path between moving bodies loads them with no net force (ground_to_foot: the ground
    # takes the rest)
    free = [k for k, mu in enumerate(m.muscles) if "ground" not in mu.bodies()]
    np.testing.assert_allclose(body[:, free].sum(axis=2)[..., 3:], 0.0, atol=1e-13)
    if not wraps:
        assert np.abs(body[:, 4].sum(axis=1)[..., 3:]).max() > 0.5
    if not wraps:
        assert np.any(coord != 0.0)  # moving points


def test_path_points_with_the_wrap_tangent_points(model, wrapped):
    # without wraps: the active points in order, NaN rows after the end
    q = states(model, 30, np.random.default_rng(10))
    plain = path_points(model, q, "rect_fem")
    drawn = path_points(model, q, "rect_fem", wrap_points=True)
    assert drawn.shape == plain.shape
    for n in range(len(q)):
        rows = plain[n][~np.isnan(plain[n, :, 0])]
        np.testing.assert_array_equal(drawn[n, : len(rows)], rows)
        assert np.isnan(drawn[n, len(rows) :]).all()
    # a cylinder wrap: (origin, t1, t2, insertion) where it wraps; t1, t2 on the surface
    q = states(wrapped, 30, np.random.default_rng(11))
    drawn = path_points(wrapped, q, "vasti", wrap_points=True)
    assert drawn.shape == (30, 4, 3)
    on = ~np.isnan(drawn[:, 3, 0])
    assert 5 < on.sum() < 30
    cyl = wrapped.wrap_objects[0]
    lengths = muscle_lengths(wrapped, q, muscles=["vasti"])[:, 0]
    for n in np.flatnonzero(on):
        R, o = _world_to_wrap(wrapped, q[n], cyl)
        for t in drawn[n, 1:3]:
            local = R.T @ (t - o)
            assert np.hypot(local[0], local[1]) == pytest.approx(cyl.dimensions[0], abs=1e-12)
        d = np.linalg.norm(np.diff(drawn[n], axis=0), axis=-1)
        arc = lengths[n] - d[0] - d[2]
        assert arc >= d[1] - 1e-12  # the surface path is no shorter than its chord
    np.testing.assert_allclose(
        np.linalg.norm(drawn[~on][:, 1] - drawn[~on][:, 0], axis=-1), lengths[~on], atol=1e-14
    )


def test_opensims_wrap_order_swap(monkeypatch):
    """After the first pass, a first wrap that missed and a second with a path point inside
    its object are swapped for the later passes (GeometryPath::applyWrapObjects)."""
    import ahbm.muscles.wrapping as wrapping

    m = leg()
    m.wrap_objects = [
        WrapObject("far", "thigh", "sphere", (1.0, 0.0, 0.0), np.eye(3), (0.02,)),
        WrapObject(
            "around_origin", "thigh", "cylinder", (0.0, -0.1, 0.0), np.eye(3), (0.05, 0.3)
        ),  # fmt: skip
        WrapObject("far2", "thigh", "sphere", (-1.0, 0.0, 0.0), np.eye(3), (0.02,)),
    ]
    path = (PathPoint("o", "thigh", (0.0, -0.1, 0.0)), PathPoint("i", "shank", (0.0, -0.1, 0.0)))
    m.muscles = [
        Muscle("swapped", path, (PathWrap("far"), PathWrap("around_origin")), **PARAMS),
        Muscle("kept", path, (PathWrap("far"), PathWrap("far2")), **PARAMS),
    ]
    calls = []
    real = wrapping.wrap_path_segment

    def spy(kind, *args, **kwargs):
        calls.append(kind)
        return real(kind, *args, **kwargs)

    monkeypatch.setattr(wrapping, "wrap_path_segment", spy)
    q = np.zeros(m.nq)
    length = muscle_lengths(m, q, muscles=["swapped"])
    # pass 1 in the given order, pass 2 swapped; the length no longer changes: stop
    assert calls == ["sphere", "cylinder", "cylinder", "sphere"]
    calls.clear()
    muscle_lengths(m, q, muscles=["kept"])
    assert calls == ["sphere", "sphere", "sphere", "sphere"]
    straight = np.linalg.norm(np.diff(path_points(m, q, "swapped"), axis=0), axis=-1).sum()
    assert length[0] == pytest.approx(straight, abs=1e-15)
