"""Custom joints and offset frames against OpenSim (through the oracle).

Each model is written here twice: as an ahbm model and as ``.osim`` XML text
(CustomJoints with every function type, axes in odd and non-unit directions,
parent and child offset frames, a weld with offsets). At random states OpenSim
gives the body poses, the mass matrix (``SimbodyMatterSubsystem.calcM``) and the
inverse-dynamics generalized forces (``InverseDynamicsSolver``); OpenSim's q and
u orders are found per coordinate name by the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest
from opensim_oracle import opensim_run

from ahbm import dynamics
from ahbm.kinematics import Model, forward_kinematics, point_position
from ahbm.kinematics import functions as fn
from ahbm.kinematics.rotations import euler_to_matrix


def _nums(v):
    return " ".join(repr(float(a)) for a in np.ravel(v))


def function_xml(f: fn.Function) -> str:
    """OpenSim XML of a function of ahbm.kinematics.functions."""
    d = f.to_dict()
    t = d["type"]
    if t == "Constant":
        body = f"<value>{d['value']!r}</value>"
    elif t == "LinearFunction":
        body = f"<coefficients>{_nums([d['slope'], d['intercept']])}</coefficients>"
    elif t == "PolynomialFunction":
        body = f"<coefficients>{_nums(d['coefficients'])}</coefficients>"
    elif t == "MultiplierFunction":
        body = f"<function>{function_xml(f.function)}</function><scale>{d['scale']!r}</scale>"
    else:
        body = f"<x>{_nums(d['x'])}</x><y>{_nums(d['y'])}</y>"
    return f"<{t}>{body}</{t}>"


_NAMES = ("rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3")


class _Builder:
    """One model as ahbm bodies and as OpenSim XML (bodies and joints in the same order)."""

    def __init__(self, gravity):
        self.model = Model("osim-peer", gravity=gravity)
        self.gravity = np.asarray(gravity, float)
        self.bodies_xml = []
        self.joints_xml = []

    def add(self, name, parent, joint, *, pos, ori, cpos, cori, mass, com, inertia6,
            raw_axes=None):  # fmt: skip
        """A body; ``ori``/``cori`` are OpenSim's body-fixed XYZ angles of the offset frames."""
        xx, yy, zz, xy, xz, yz = inertia6
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        self.model.add_body(
            name, parent, joint, position=pos, rotation=euler_to_matrix(ori, "XYZ"),
            child_position=cpos, child_rotation=euler_to_matrix(cori, "XYZ"), mass=mass,
            com=com, inertia=inertia,
        )  # fmt: skip
        self.bodies_xml.append(
            f'<Body name="{name}"><mass>{mass!r}</mass><mass_center>{_nums(com)}</mass_center>'
            f"<inertia>{_nums(inertia6)}</inertia></Body>"
        )
        ppath = "/ground" if parent == "ground" else f"/bodyset/{parent}"
        frames = (
            f'<frames><PhysicalOffsetFrame name="{name}_p"><socket_parent>{ppath}</socket_parent>'
            f"<translation>{_nums(pos)}</translation><orientation>{_nums(ori)}</orientation>"
            f'</PhysicalOffsetFrame><PhysicalOffsetFrame name="{name}_c"><socket_parent>'
            f"/bodyset/{name}</socket_parent><translation>{_nums(cpos)}</translation>"
            f"<orientation>{_nums(cori)}</orientation></PhysicalOffsetFrame></frames>"
        )
        sockets = (
            f"<socket_parent_frame>{name}_p</socket_parent_frame>"
            f"<socket_child_frame>{name}_c</socket_child_frame>"
        )
        if joint == "fixed":
            self.joints_xml.append(f'<WeldJoint name="{name}_j">{sockets}{frames}</WeldJoint>')
            return
        coords = "".join(
            f'<Coordinate name="{c}"><default_value>0</default_value></Coordinate>'
            for c in joint["coordinates"]
        )
        axes = ""
        for k, item in enumerate(joint["transform"]):
            axis = item["axis"] if raw_axes is None else raw_axes[k]
            c = item["coordinate"] or ""
            axes += (
                f'<TransformAxis name="{_NAMES[k]}"><coordinates>{c}</coordinates>'
                f"<axis>{_nums(axis)}</axis>{function_xml(item['function'])}</TransformAxis>"
            )
        self.joints_xml.append(
            f'<CustomJoint name="{name}_j">{sockets}<coordinates>{coords}</coordinates>{frames}'
            f"<SpatialTransform>{axes}</SpatialTransform></CustomJoint>"
        )

    def xml(self):
        return (
            '<?xml version="1.0" encoding="UTF-8" ?><OpenSimDocument Version="40000">'
            f'<Model name="peer"><gravity>{_nums(self.gravity)}</gravity>'
            '<Ground name="ground"/>'
            f"<BodySet><objects>{''.join(self.bodies_xml)}</objects></BodySet>"
            f"<JointSet><objects>{''.join(self.joints_xml)}</objects></JointSet>"
            "</Model></OpenSimDocument>"
        )


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _models():
    """Two models: a leg-like chain with spline knees and a branched tree of odd axes."""
    rng = np.random.default_rng(5)
    knee_x = np.radians([-120, -100, -80, -60, -40, -20, -10, 0, 10])
    tx = fn.SimmSpline(knee_x, [-0.0032, 0.0018, 0.0041, 0.0041, 0.0021, -0.001, -0.0031,
                                -0.0052, -0.0054])  # fmt: skip
    ty = fn.NaturalCubicSpline(knee_x[::2], [-0.4226, -0.4082, -0.399, -0.3976, -0.3966])
    out = []

    # 1: pelvis (6 coordinates through every kind of axis function) - femur - tibia (knee
    # with spline translations, a multiplier) - patella-like body (piecewise linear)
    b = _Builder(gravity=[0.3, -9.7, 0.8])
    L = fn.LinearFunction
    b.add("pelvis", "ground", {"type": "custom",
        "coordinates": ["p_tilt", "p_list", "p_rot", "p_tx", "p_ty", "p_tz"], "transform": [
            {"axis": [0, 0, 1], "coordinate": "p_tilt", "function": L(1.0, 0.0)},
            {"axis": [1, 0, 0], "coordinate": "p_list", "function": L(1.0, 0.0)},
            {"axis": [0, 1, 0], "coordinate": "p_rot", "function": L(1.0, 0.0)},
            {"axis": [1, 0, 0], "coordinate": "p_tx", "function": L(1.0, 0.0)},
            {"axis": [0, 1, 0], "coordinate": "p_ty", "function": L(1.0, 0.0)},
            {"axis": [0, 0, 1], "coordinate": "p_tz", "function": L(1.0, 0.0)}]},
        pos=[0.0, 0.9, 0.0], ori=[0, 0, 0], cpos=[0, 0, 0], cori=[0, 0, 0], mass=11.8,
        com=[-0.07, 0.01, 0.0], inertia6=[0.10, 0.09, 0.05, 0.002, -0.001, 0.003])  # fmt: skip
    b.add("femur", "pelvis", {"type": "custom", "coordinates": ["hip_add", "hip_flex"],
        "transform": [
            {"axis": [0, 0, 1], "coordinate": "hip_flex", "function": L(1.0, 0.0)},
            {"axis": _unit([1, 0.1, -0.05]), "coordinate": "hip_add",
             "function": fn.PolynomialFunction([0.05, -0.2, 1.0, 0.0])},
            {"axis": [0, 1, 0], "coordinate": None, "function": fn.Constant(0.12)},
            {"axis": [1, 0, 0], "coordinate": None, "function": fn.Constant(0.0)},
            {"axis": [0, 1, 0], "coordinate": None, "function": fn.Constant(-0.01)},
            {"axis": [0, 0, 1], "coordinate": "hip_flex",
             "function": fn.LinearFunction(0.004, 0.001)}]},
        pos=[-0.07, -0.066, 0.083], ori=[0.02, -0.1, 0.05], cpos=[0.01, 0.17, -0.004],
        cori=[0.0, 0.07, -0.03], mass=9.3, com=[0.0, -0.0, 0.0],
        inertia6=[0.13, 0.035, 0.14, 0.004, 0.001, -0.002])  # fmt: skip
    b.add("tibia", "femur", {"type": "custom", "coordinates": ["knee"], "transform": [
            {"axis": [0, 0, 1], "coordinate": "knee", "function": L(1.0, 0.0)},
            {"axis": [1, 0, 0], "coordinate": None, "function": fn.Constant(0.0)},
            {"axis": [0, 1, 0], "coordinate": None, "function": fn.Constant(0.0)},
            {"axis": [1, 0, 0], "coordinate": "knee", "function": fn.MultiplierFunction(tx, 1.1)},
            {"axis": [0, 1, 0], "coordinate": "knee", "function": ty},
            {"axis": [0, 0, 1], "coordinate": None, "function": fn.Constant(0.0)}]},
        pos=[0.0, 0.0, 0.0], ori=[0, 0, 0], cpos=[0.0, 0.0, 0.0], cori=[0, 0, 0], mass=3.7,
        com=[0.0, -0.187, 0.0], inertia6=[0.05, 0.005, 0.05, 0.0, 0.0, 0.0])  # fmt: skip
    b.add("patella", "tibia", {"type": "custom", "coordinates": ["pat"], "transform": [
            {"axis": _unit([0.2, 0.1, 1.0]), "coordinate": "pat",
             "function": fn.PiecewiseLinearFunction([-2.0, -1.0, 0.0, 0.5], [0.3, 0.25, 0, -0.2])},
            {"axis": [1, 0, 0], "coordinate": None, "function": fn.Constant(0.05)},
            {"axis": [0, 1, 0], "coordinate": None, "function": fn.Constant(0.0)},
            {"axis": [1, 0, 0], "coordinate": "pat", "function": fn.SimmSpline(
                [-2.0, -1.0, 0.0, 0.5], [0.05, 0.04, 0.02, 0.015])},
            {"axis": [0, 1, 0], "coordinate": "pat", "function": fn.SimmSpline(
                [-2.0, -1.5, -1.0, 0.0, 0.5], [-0.02, -0.021, -0.023, -0.025, -0.024])},
            {"axis": [0, 0, 1], "coordinate": None, "function": fn.Constant(0.002)}]},
        pos=[0.03, -0.02, 0.0], ori=[0.0, 0.0, 0.1], cpos=[0.0, 0.01, 0.0], cori=[0, 0, 0],
        mass=0.09, com=[0.001, 0.003, 0.0], inertia6=[1e-4, 2e-4, 1.5e-4, 0, 0, 0])  # fmt: skip
    b.add("foot", "tibia", "fixed", pos=[0.0, -0.43, 0.0], ori=[0.1, 0.2, -0.3],
          cpos=[0.05, 0.02, -0.01], cori=[-0.2, 0.1, 0.3], mass=1.25,
          com=[0.1, 0.03, 0.0], inertia6=[0.0014, 0.0039, 0.0041, 0.0, 0.0, 0.0])  # fmt: skip
    out.append((b, ["p_tilt", "p_list", "p_rot", "p_tx", "p_ty", "p_tz"]))

    # 2: a branched tree with axes in random (and non-unit) directions, coordinates listed
    # in another order than the ahbm default, functions of every type. Rotation k is driven
    # by the k-th listed coordinate (or, with one coordinate, rotations 1-2 by it): the
    # cases where Simbody's FunctionBased mobilizer computes Hdot exactly (see
    # test_opensim_bias_of_coupled_rotations_is_inexact).
    b = _Builder(gravity=rng.normal(size=3) * 5.0)
    kinds = [
        lambda: fn.LinearFunction(rng.uniform(0.5, 1.5), rng.normal() * 0.1),
        lambda: fn.SimmSpline(np.sort(rng.uniform(-2, 2, 5)), rng.normal(size=5) * 0.3),
        lambda: fn.NaturalCubicSpline(np.sort(rng.uniform(-2, 2, 4)), rng.normal(size=4) * 0.3),
        lambda: fn.PiecewiseLinearFunction(np.sort(rng.uniform(-2, 2, 4)), rng.normal(size=4)),
        lambda: fn.PolynomialFunction(rng.normal(size=3) * 0.3),
        lambda: fn.MultiplierFunction(fn.SimmSpline([-2, -1, 0, 1, 2], rng.normal(size=5)), 0.4),
    ]
    parents = ["ground", "b0", "b1", "b0", "b3"]
    for i, parent in enumerate(parents):
        listed = [f"b{i}_v", f"b{i}_u"][: 1 + i % 2]
        rot = [listed[0], listed[-1], listed[1] if len(listed) > 1 else None]
        items, raw = [], []
        for k in range(6):
            a = rng.normal(size=3)
            raw.append(a * rng.uniform(0.5, 2.0))  # OpenSim normalizes the axes too
            c = rot[k] if k < 3 else listed[(k + i) % len(listed)]
            if c is None or (k >= 3 and (i + k) % 4 == 0):
                c, f = None, fn.Constant(rng.normal() * 0.2)
            else:
                f = kinds[(i + 2 * k) % len(kinds)]()
            items.append({"axis": _unit(a), "coordinate": c, "function": f})
        d = rng.uniform(0.05, 0.2, 3)
        b.add(f"b{i}", parent, {"type": "custom", "coordinates": listed, "transform": items},
              raw_axes=raw, pos=rng.normal(size=3) * 0.2, ori=rng.normal(size=3),
              cpos=rng.normal(size=3) * 0.2, cori=rng.normal(size=3),
              mass=rng.uniform(0.5, 3.0), com=rng.normal(size=3) * 0.1,
              inertia6=[d[0] + d[1], d[1] + d[2], d[0] + d[2], 0.01, -0.005, 0.008])  # fmt: skip
    out.append((b, []))
    return out


_ORACLE = """
m = osim.Model(INPUTS["path"])
s = m.initSystem()
cs = m.getCoordinateSet()
names = INPUTS["names"]
nq = s.getNQ()
# OpenSim's q and u index of each coordinate (by name)
qidx, uidx = [], []
for n in names:
    c = cs.get(n)
    for k in range(cs.getSize()):
        cs.get(k).setValue(s, 0.0, False)
        cs.get(k).setSpeedValue(s, 0.0)
    c.setValue(s, 0.5, False)
    c.setSpeedValue(s, 1.0)
    qidx.append(int(np.argmax(np.abs([s.getQ().get(i) for i in range(nq)]))))
    uidx.append(int(np.argmax(np.abs([s.getU().get(i) for i in range(s.getNU())]))))
OUT["qidx"], OUT["uidx"] = qidx, uidx
matter = m.getMatterSubsystem()
solver = osim.InverseDynamicsSolver(m)
poses, Ms, taus = [], [], []
for q, qd, qdd in zip(INPUTS["q"], INPUTS["qd"], INPUTS["qdd"]):
    for n, v, w in zip(names, q, qd):
        cs.get(n).setValue(s, v, False)
        cs.get(n).setSpeedValue(s, w)
    m.realizeVelocity(s)
    frame = []
    for b in INPUTS["bodies"]:
        T = m.getBodySet().get(b).getTransformInGround(s)
        frame.append([[T.R().get(i, j) for j in range(3)] + [T.p().get(i)] for i in range(3)])
    poses.append(frame)
    M = osim.Matrix()
    matter.calcM(s, M)
    Ms.append([[M.get(i, j) for j in range(M.ncol())] for i in range(M.nrow())])
    udot = osim.Vector(s.getNU(), 0.0)
    for k, a in zip(uidx, qdd):
        udot.set(k, a)
    tau = solver.solve(s, udot)
    taus.append([tau.get(i) for i in range(tau.size())])
OUT["poses"], OUT["M"], OUT["tau"] = poses, Ms, taus
"""


@pytest.fixture(scope="module", params=[0, 1], ids=["leg", "tree"])
def peer(request, tmp_path_factory):
    builder, _ = _models()[request.param]
    model = builder.model
    path = tmp_path_factory.mktemp("osim") / "peer.osim"
    path.write_text(builder.xml())
    rng = np.random.default_rng(10 + request.param)
    n = 6
    q = rng.normal(size=(n, model.nq)) * 0.8
    q[:, 0] = np.linspace(-2.5, 0.8, n)  # through the spline ranges and beyond them
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    out = opensim_run(
        _ORACLE, path=path, names=model.coordinate_names, bodies=model.body_names,
        q=q, qd=qd, qdd=qdd,
    )  # fmt: skip
    return model, q, qd, qdd, out


def test_body_poses_match_opensim(peer):
    model, q, qd, _, out = peer
    kin = forward_kinematics(model, q)
    T = np.array(out["poses"])  # (n, nb, 3, 4)
    np.testing.assert_allclose(kin.rotations, T[..., :3], rtol=0, atol=1e-9)
    np.testing.assert_allclose(kin.positions, T[..., 3], rtol=0, atol=1e-9)
    # a point given in OpenSim's body frame lands where OpenSim puts it
    p = np.array([0.01, -0.2, 0.03])
    b = model.n_bodies - 1
    np.testing.assert_allclose(
        point_position(model, q, b, p), np.einsum("nij,j->ni", T[:, b, :, :3], p) + T[:, b, :, 3],
        rtol=0, atol=1e-9,
    )  # fmt: skip


def test_mass_matrix_matches_opensim(peer):
    model, q, _, _, out = peer
    u = np.array(out["uidx"])
    H_os = np.array(out["M"])[:, u][:, :, u]  # OpenSim's mobility order -> ahbm's order
    H = dynamics.crba(model, q)
    scale = np.abs(H_os).max()
    np.testing.assert_allclose(H, H_os, rtol=0, atol=1e-9 * scale)


def test_inverse_dynamics_matches_opensim(peer):
    model, q, qd, qdd, out = peer
    u = np.array(out["uidx"])
    tau_os = np.array(out["tau"])[:, u]
    tau = dynamics.rnea(model, q, qd, qdd)
    scale = np.abs(tau_os).max()
    np.testing.assert_allclose(tau, tau_os, rtol=0, atol=1e-9 * scale)
    # one state at a time (the single-state path) gives the same
    np.testing.assert_allclose(dynamics.rnea(model, q[2], qd[2], qdd[2]), tau_os[2],
                               rtol=0, atol=1e-9 * scale)  # fmt: skip


_BIAS = """
m = osim.Model(INPUTS["path"]); s = m.initSystem()
c = m.getCoordinateSet().get("u")
b = m.getBodySet().get("a")
matter = m.getMatterSubsystem()

def velocity(q, w):
    c.setValue(s, q, False); c.setSpeedValue(s, w); m.realizeVelocity(s)
    V = b.getVelocityInGround(s)
    return [V.get(0).get(i) for i in range(3)] + [V.get(1).get(i) for i in range(3)]

q, w, h = INPUTS["q"], INPUTS["w"], 1e-6
fd = (np.array(velocity(q + w * h, w)) - np.array(velocity(q - w * h, w))) / (2 * h)
OUT["fd"] = fd.tolist()
OUT["velocity"] = velocity(q, w)
A = osim.VectorOfSpatialVec()
matter.calcBodyAccelerationFromUDot(s, osim.Vector(1, 0.0), A)
a = A.get(int(b.getMobilizedBodyIndex()))
OUT["bias"] = [a.get(0).get(i) for i in range(3)] + [a.get(1).get(i) for i in range(3)]
"""


def test_opensim_bias_of_coupled_rotations_is_inexact(tmp_path):
    """Where ahbm and OpenSim differ, ahbm's numbers are the derivatives of OpenSim's own.

    Simbody's ``FunctionBased`` mobilizer (behind OpenSim's CustomJoint) builds
    ``Ḣ`` with the angular velocity of the first mobility (and of all but the
    third) in place of the angular velocity of the frames after the first (and
    second) rotation axis; that is exact only when rotation k is driven by
    mobility k alone (or the extra terms are parallel to the axis they cross).
    For one coordinate driving all three rotation axes, OpenSim's bias
    acceleration differs from the time derivative of OpenSim's own body
    velocity, while ahbm's equals it: so ahbm's inverse dynamics differ from
    OpenSim's there (by the velocity-product terms), and are the consistent ones.
    """
    b = _Builder([0.0, -9.81, 0.0])
    lin = fn.LinearFunction
    axes = [[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    spline = fn.SimmSpline([-2, -1, 0, 1, 2], [0.1, -0.2, 0.3, 0, 0.2])
    funcs = [lin(1.0, 0.0), lin(0.5, 0.0), spline]
    items = [{"axis": axes[k], "coordinate": "u", "function": funcs[k]} for k in range(3)]
    zero = fn.Constant(0.0)
    items += [{"axis": axes[k], "coordinate": None, "function": zero} for k in (3, 4, 5)]
    b.add("a", "ground", {"type": "custom", "coordinates": ["u"], "transform": items},
          pos=[0, 0, 0], ori=[0, 0, 0], cpos=[0.1, 0.2, 0.0], cori=[0, 0, 0], mass=2.0,
          com=[0.3, 0.1, 0.05], inertia6=[0.1, 0.2, 0.15, 0, 0, 0])  # fmt: skip
    path = tmp_path / "coupled.osim"
    path.write_text(b.xml())
    q, w = 0.37, 1.3
    out = opensim_run(_BIAS, path=path, q=q, w=w)
    kin = forward_kinematics(b.model, [q], [w])
    R = kin.rotations[0]
    v = np.concatenate([R @ kin.velocities[0, :3], R @ kin.velocities[0, 3:]])
    np.testing.assert_allclose(v, out["velocity"], rtol=0, atol=1e-12)  # same velocities
    a = kin.bias_accelerations[0]
    alpha = R @ a[:3]
    acc = R @ (a[3:] + np.cross(kin.velocities[0, :3], kin.velocities[0, 3:]))
    fd = np.array(out["fd"])
    np.testing.assert_allclose(np.concatenate([alpha, acc]), fd, rtol=0, atol=1e-7)
    assert np.abs(np.array(out["bias"]) - fd).max() > 1e-3  # OpenSim's own bias is off
