"""Tests of draw_model, model_skeleton, geometry_mesh and stick_view(model=...)."""

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.graphics import draw_model, geometry_mesh, model_skeleton, stick_view
from ahbm.kinematics import Model, forward_kinematics
from ahbm.models import double_pendulum_3d


def _pendulum(geometry=None):
    """Two links swinging about x: joint 2 at 1 m below joint 1, COMs halfway."""
    m = Model("two_links")
    m.add_body(
        "upper",
        "ground",
        {"type": "revolute", "axis": [1, 0, 0]},
        mass=1.0,
        com=[0, 0, -0.5],
        inertia=np.eye(3) * 0.1,
        geometry=geometry,
    )
    m.add_body(
        "lower",
        "upper",
        {"type": "revolute", "axis": [1, 0, 0]},
        position=[0, 0, -1.0],
        mass=1.0,
        com=[0, 0, -0.5],
        inertia=np.eye(3) * 0.1,
        markers={"tip": [0.0, 0.0, -1.0]},
    )
    return m


def _expected(a, b):
    """Closed form of the pendulum: (knee, leaf COM, tip) in the world."""
    Ra = Rotation.from_rotvec([a, 0, 0]).as_matrix()
    Rab = Rotation.from_rotvec([a + b, 0, 0]).as_matrix()
    knee = Ra @ [0, 0, -1.0]
    return knee, knee + Rab @ [0, 0, -0.5], knee + Rab @ [0, 0, -1.0]


def _by_gid(ax, gid):
    found = [a for a in [*ax.lines, *ax.collections] if a.get_gid() == gid]
    assert len(found) == 1, gid
    return found[0]


def test_skeleton_follows_the_closed_form():
    m = _pendulum()
    q = np.array([[0.3, -0.7], [1.0, 0.5]])
    T = forward_kinematics(m, q).transforms
    sticks = model_skeleton(m, T)
    assert sticks.shape == (2, 2, 2, 3)
    for k, (a, b) in enumerate(q):
        knee, com, _ = _expected(a, b)
        np.testing.assert_allclose(sticks[k, 0], [[0, 0, 0], knee], atol=1e-12)
        np.testing.assert_allclose(sticks[k, 1], [knee, com], atol=1e-12)


def test_draw_model_places_joints_com_markers_and_frames():
    m = _pendulum()
    a, b = 0.4, -0.9
    ax = draw_model(m, [a, b], triad_length=0.2)
    knee, com2, tip = _expected(a, b)
    joints = np.array(_by_gid(ax, "joints").get_data_3d()).T
    np.testing.assert_allclose(joints, [[0, 0, 0], knee], atol=1e-12)
    com = np.array(_by_gid(ax, "com").get_data_3d()).T
    com1 = Rotation.from_rotvec([a, 0, 0]).apply([0, 0, -0.5])
    np.testing.assert_allclose(com, [com1, com2], atol=1e-12)
    np.testing.assert_allclose(np.array(_by_gid(ax, "markers").get_data_3d()).T, [tip])
    frames = np.asarray(_by_gid(ax, "frames")._segments3d)
    assert frames.shape == (6, 2, 3)
    R2 = Rotation.from_rotvec([a + b, 0, 0]).as_matrix()
    np.testing.assert_allclose(frames[3:, 1] - frames[3:, 0], 0.2 * R2.T, atol=1e-12)
    lims = np.array([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
    np.testing.assert_allclose(np.ptp(lims, axis=1), np.ptp(lims[0]))


def test_draw_model_default_is_the_neutral_pose_and_accepts_an_axes():
    import matplotlib.pyplot as plt

    fig = plt.figure()
    ax = fig.add_subplot(projection="3d")
    model = double_pendulum_3d()
    assert draw_model(model, ax=ax) is ax
    T = forward_kinematics(model, np.zeros(model.nq)).transforms
    joints = np.array(_by_gid(ax, "joints").get_data_3d()).T
    np.testing.assert_allclose(joints, T[:, :3, 3])


def test_geometry_box_ellipsoid_cylinder():
    box = geometry_mesh({"type": "box", "size": [0.2, 0.4, 0.6], "position": [1, 2, 3]})
    corners = np.unique(box.reshape(-1, 3).round(12), axis=0)
    assert corners.shape == (8, 3)
    np.testing.assert_allclose(np.abs(corners - [1, 2, 3]), np.tile([0.1, 0.2, 0.3], (8, 1)))
    R = Rotation.from_euler("xyz", [0.3, -0.2, 1.0]).as_matrix()
    ell = geometry_mesh({"type": "ellipsoid", "radii": [0.1, 0.2, 0.3], "rotation": R.tolist()})
    local = ell.reshape(-1, 3) @ R  # back to the ellipsoid axes
    np.testing.assert_allclose(np.sum((local / [0.1, 0.2, 0.3]) ** 2, axis=1), 1.0)
    cyl = geometry_mesh({"type": "cylinder", "radius": 0.05, "length": 0.4, "axis": "x"})
    pts = cyl.reshape(-1, 3)
    np.testing.assert_allclose(np.hypot(pts[:, 1], pts[:, 2]), 0.05)
    np.testing.assert_allclose(sorted(set(pts[:, 0].round(12))), [-0.2, 0.2])


def test_draw_model_moves_geometry_with_the_body():
    geom = [{"type": "box", "size": [0.1, 0.1, 1.0], "position": [0, 0, -0.5]}]
    m = _pendulum(geometry=geom)
    a = 0.6
    ax = draw_model(m, [a, 0.0])
    coll = _by_gid(ax, "geometry:upper")
    R = Rotation.from_rotvec([a, 0, 0]).as_matrix()
    np.testing.assert_allclose(coll.ahbm_faces, geometry_mesh(geom[0]) @ R.T, atol=1e-12)
    assert coll in ax.collections


def test_unknown_geometry_warns_and_bad_geometry_raises():
    m = _pendulum(geometry={"type": "mesh", "file": "femur.stl"})
    with pytest.warns(AhbmWarning, match="'mesh' cannot be drawn"):
        draw_model(m, [0.0, 0.0])
    m = _pendulum(geometry={"type": "box", "size": [0.1, -0.1, 1.0]})
    with pytest.raises(ModelError, match="body 'upper'.*'size' must be positive"):
        draw_model(m, [0.0, 0.0])
    with pytest.raises(ModelError, match="unknown geometry type"):
        geometry_mesh({"type": "torus"})


def test_draw_model_rejects_a_trajectory():
    with pytest.raises(DataError, match=r"shape \(2,\)"):
        draw_model(_pendulum(), np.zeros((5, 2)))


def test_stick_view_animates_the_model():
    m = _pendulum()
    t = np.linspace(0, 1, 6)
    q = np.c_[0.5 * np.sin(2 * np.pi * t), 0.3 * t]
    viewer = stick_view(model=m, q=q, rate=5.0)
    assert viewer.points.shape == (6, 0, 3)
    for i in (0, 4):
        viewer.show_frame(i)
        knee, com, tip = _expected(*q[i])
        joints = np.array(viewer.artists["joints"].get_data_3d()).T
        np.testing.assert_allclose(joints, [[0, 0, 0], knee], atol=1e-12)
        sticks = np.asarray(viewer.artists["model"]._segments3d)
        np.testing.assert_allclose(sticks[1], [knee, com], atol=1e-12)
        np.testing.assert_allclose(
            np.array(viewer.artists["model_markers"].get_data_3d()).T, [tip], atol=1e-12
        )
        triads = np.asarray(viewer.artists["triads"]._segments3d)
        assert triads.shape == (6, 2, 3)


def test_stick_view_model_with_markers_and_bad_q():
    m = _pendulum()
    pts = np.zeros((4, 1, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        viewer = stick_view(pts, model=m, q=np.zeros((4, 2)))
    assert "model" in viewer.artists
    with pytest.raises(DataError, match="4 marker frames|per marker frame"):
        stick_view(pts, model=m, q=np.zeros((3, 2)))
    with pytest.raises(DataError, match=r"\(n_frames, 2\)"):
        stick_view(model=m, q=np.zeros((3, 5)))
    with pytest.raises(DataError, match="together"):
        stick_view(pts, model=m)
