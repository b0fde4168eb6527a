"""Tests of ahbm.kinematics.markers: segment pose, local coordinates, anatomical
frames and homogeneous transforms."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sample_data import SHARED
from scipy.spatial.transform import Rotation

from ahbm.errors import AhbmWarning, DataError
from ahbm.kinematics.markers import (
    apply_transform,
    fit_segment_pose,
    frame_from_landmarks,
    invert_transform,
    local_coordinates,
    make_transform,
    static_local_markers,
    transform_to_pose,
)

LOCAL = np.array([[0.08, 0.01, 0.02], [-0.03, 0.09, 0.0], [0.0, -0.02, 0.11], [0.05, 0.05, -0.04]])


def _trajectory(rng, n, local=LOCAL):
    R = Rotation.random(n, random_state=rng.integers(1 << 31)).as_matrix()
    p = rng.normal(size=(n, 3))
    X = np.einsum("nij,mj->nmi", R, local) + p[:, None, :]
    return R, p, X


@pytest.mark.parametrize("batch", [(), (7,), (3, 5)])
def test_noise_free_pose_exact(batch):
    rng = np.random.default_rng(0)
    n = int(np.prod(batch)) if batch else 1
    R, p, X = _trajectory(rng, n)
    R = R.reshape(batch + (3, 3))
    p = p.reshape(batch + (3,))
    X = X.reshape(batch + (4, 3))
    pose = fit_segment_pose(X, LOCAL)
    np.testing.assert_allclose(pose.R, R, atol=1e-9)
    np.testing.assert_allclose(pose.origin, p, atol=1e-9)
    assert pose.rms.shape == batch and np.all(pose.rms < 1e-9)
    assert pose.residuals.shape == batch + (4,)
    assert pose.valid.all()
    np.testing.assert_allclose(np.linalg.det(pose.R), 1.0, atol=1e-12)
    T = pose.transform
    assert T.shape == batch + (4, 4)


def test_noisy_pose_matches_scipy_align_vectors():
    rng = np.random.default_rng(1)
    n = 50
    R, p, X = _trajectory(rng, n)
    X = X + rng.normal(scale=0.002, size=X.shape)
    w = np.array([1.0, 2.0, 0.5, 1.5])
    pose = fit_segment_pose(X, LOCAL, weights=w)
    for k in range(n):
        # scipy: rotation minimizing sum w |a - R b|^2 on centred vectors
        xbar = (w[:, None] * X[k]).sum(0) / w.sum()
        lbar = (w[:, None] * LOCAL).sum(0) / w.sum()
        rot, _ = Rotation.align_vectors(X[k] - xbar, LOCAL - lbar, weights=w)
        np.testing.assert_allclose(pose.R[k], rot.as_matrix(), atol=1e-10)
        np.testing.assert_allclose(pose.origin[k], xbar - rot.as_matrix() @ lbar, atol=1e-10)
        fitted = LOCAL @ rot.as_matrix().T + pose.origin[k]
        res = np.linalg.norm(X[k] - fitted, axis=1)
        np.testing.assert_allclose(pose.residuals[k], res, atol=1e-10)
        np.testing.assert_allclose(pose.rms[k], np.sqrt(np.mean(res**2)), atol=1e-10)


def test_proper_rotation_for_reflected_planar_markers():
    # planar markers measured with a mirror image: the unconstrained fit is a
    # reflection; the determinant correction must keep det = +1
    local = np.array([[0.1, 0, 0], [0, 0.1, 0], [-0.1, 0, 0], [0, -0.12, 0]])
    X = local * np.array([1.0, 1.0, -1.0]) + rng_noise(local.shape, 2, 1e-3)
    pose = fit_segment_pose(X, local)
    np.testing.assert_allclose(np.linalg.det(pose.R), 1.0, atol=1e-12)
    np.testing.assert_allclose(pose.R @ pose.R.T, np.eye(3), atol=1e-12)


def rng_noise(shape, seed, scale):
    return np.random.default_rng(seed).normal(scale=scale, size=shape)


def test_missing_markers_per_frame():
    rng = np.random.default_rng(3)
    R, p, X = _trajectory(rng, 6)
    X[1, 0] = np.nan  # 3 markers left: still valid
    X[2, :2] = np.nan  # 2 left: invalid
    X[3, 1, 2] = np.nan  # one coordinate missing = marker missing
    X[4] = np.nan
    with pytest.warns(AhbmWarning, match=r"2 of 6 frame\(s\).*\[2, 4\]"):
        pose = fit_segment_pose(X, LOCAL)
    np.testing.assert_array_equal(pose.valid, [True, True, False, True, False, True])
    np.testing.assert_array_equal(pose.n_visible, [4, 3, 2, 3, 0, 4])
    ok = pose.valid
    np.testing.assert_allclose(pose.R[ok], R[ok], atol=1e-9)
    np.testing.assert_allclose(pose.origin[ok], p[ok], atol=1e-9)
    assert np.isnan(pose.R[~ok]).all() and np.isnan(pose.origin[~ok]).all()
    assert np.isnan(pose.rms[~ok]).all() and np.isnan(pose.residuals[~ok]).all()
    assert np.isnan(pose.residuals[1, 0]) and np.isfinite(pose.residuals[1, 1:]).all()


def test_collinear_visible_markers_are_invalid():
    local = np.array([[0, 0, 0], [0.1, 0, 0], [0.2, 0, 0], [0, 0.1, 0.0]])
    X = np.array([local, local])
    X[1, 3] = np.nan
    with pytest.warns(AhbmWarning):
        pose = fit_segment_pose(X, local)
    np.testing.assert_array_equal(pose.valid, [True, False])


def test_zero_weight_marker_ignored():
    rng = np.random.default_rng(4)
    R, p, X = _trajectory(rng, 3)
    X[:, 3] += 0.5  # a wrong marker
    pose = fit_segment_pose(X, LOCAL, weights=[1, 1, 1, 0])
    np.testing.assert_allclose(pose.R, R, atol=1e-9)
    assert np.all(pose.residuals[:, 3] > 0.1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"markers": np.zeros((5, 4, 2))}, "markers"),
        ({"local": LOCAL[:3]}, "same markers"),
        ({"local": np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0.0]])}, "collinear"),
        ({"weights": [1, 1, -1, 1]}, "non-negative"),
        ({"weights": [1, 1]}, "weights"),
        ({"min_markers": 2}, "min_markers"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"markers": np.zeros((5, 4, 3)), "local": LOCAL}
    args.update(kwargs)
    markers = args.pop("markers")
    local = args.pop("local")
    with pytest.raises(DataError, match=match):
        fit_segment_pose(markers, local, **args)


def test_local_coordinates_roundtrip_and_static():
    rng = np.random.default_rng(5)
    R, p, X = _trajectory(rng, 10)
    np.testing.assert_allclose(
        local_coordinates(X, R, p), np.broadcast_to(LOCAL, X.shape), atol=1e-12
    )
    Xn = X + rng.normal(scale=1e-3, size=X.shape)
    Xn[2, 1] = np.nan
    est = static_local_markers(Xn, R, p)
    assert est.shape == (4, 3)
    np.testing.assert_allclose(est, LOCAL, atol=2e-3)
    # the mean ignores the missing sample
    loc = local_coordinates(Xn, R, p)
    np.testing.assert_allclose(est[1], np.nanmean(loc[:, 1], axis=0))


def test_static_marker_never_visible():
    X = np.zeros((3, 4, 3))
    X[:, 2] = np.nan
    with pytest.raises(DataError, match="'RKNE' is missing in every static frame"):
        static_local_markers(X, np.eye(3), np.zeros(3), names=["a", "b", "RKNE", "d"])


def test_transforms_roundtrip():
    rng = np.random.default_rng(6)
    R = Rotation.random(8, random_state=7).as_matrix()
    p = rng.normal(size=(8, 3))
    T = make_transform(R, p)
    Ti = invert_transform(T)
    np.testing.assert_allclose(T @ Ti, np.broadcast_to(np.eye(4), T.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.inv(T), Ti, atol=1e-12)
    pts = rng.normal(size=(8, 5, 3))
    hom = np.concatenate([pts, np.ones((8, 5, 1))], axis=-1)
    expected = np.einsum("nij,nkj->nki", T, hom)[..., :3]
    np.testing.assert_allclose(apply_transform(T, pts), expected, atol=1e-12)
    np.testing.assert_allclose(apply_transform(T, pts[:, 0]), expected[:, 0], atol=1e-12)
    R2, p2 = transform_to_pose(T)
    np.testing.assert_allclose(R2, R)
    np.testing.assert_allclose(p2, p)


@pytest.mark.parametrize("axes", ["zx", "xz", "xy", "yx", "yz", "zy"])
def test_frame_from_landmarks(axes):
    rng = np.random.default_rng(8)
    o = rng.normal(size=(20, 3))
    p1 = o + rng.normal(size=(20, 3))
    p2 = o + rng.normal(size=(20, 3))
    T = frame_from_landmarks(o, p1, p2, axes=axes)
    R = T[..., :3, :3]
    np.testing.assert_allclose(
        np.swapaxes(R, -1, -2) @ R, np.broadcast_to(np.eye(3), R.shape), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(R), 1.0)
    np.testing.assert_allclose(T[..., :3, 3], o)
    a, b = "xyz".index(axes[0]), "xyz".index(axes[1])
    d1 = (p1 - o) / np.linalg.norm(p1 - o, axis=1, keepdims=True)
    np.testing.assert_allclose(R[..., a], d1, atol=1e-12)  # exactly along the primary
    # secondary axis in the plane, towards the plane point
    normal = np.cross(p1 - o, p2 - o)
    np.testing.assert_allclose(np.sum(R[..., b] * normal, axis=1), 0.0, atol=1e-12)
    assert np.all(np.sum(R[..., b] * (p2 - o), axis=1) > 0)
    # same frame when directions are given instead of points
    T2 = frame_from_landmarks(
        o, p1 - o, p2 - o, axes=axes, primary_is_axis=True, plane_is_axis=True
    )
    np.testing.assert_allclose(T2, T, atol=1e-12)


def test_frame_from_landmarks_nan_and_collinear():
    o = np.zeros((3, 3))
    p1 = np.array([[0, 0, 1.0]] * 3)
    p2 = np.array([[1.0, 0, 0], [np.nan, 0, 0], [1.0, 0, 0]])
    T = frame_from_landmarks(o, p1, p2)
    assert np.isnan(T[1]).all() and np.isfinite(T[[0, 2]]).all()
    p2[2] = [0, 0, 2.0]
    with pytest.raises(DataError, match=r"collinear in frame\(s\) \[2\]"):
        frame_from_landmarks(o, p1, p2)
    with pytest.raises(DataError, match="axes"):
        frame_from_landmarks(o, p1, p2, axes="zz")
    with pytest.raises(DataError, match=r"coincident or collinear in frame\(s\) \[1\]"):
        frame_from_landmarks(o, np.array([[0, 0, 1.0], [0, 0, 0], [0, 0, 1]]), [1.0, 0, 0])


DATA = SHARED


@pytest.mark.skipif(not (DATA / "c3d" / "gait-raw.c3d").exists(), reason="shared data absent")
def test_real_trial_pelvis_and_shank():
    from ahbm.io import read_c3d

    trial = read_c3d(DATA / "c3d" / "gait-raw.c3d")
    labels = list(trial.point_labels)
    for names in (["SACR", "LASI", "RASI"], ["RKNE", "RTIB", "RANK"]):
        X = trial.points[:, [labels.index(n) for n in names]]
        full = np.isfinite(X).all(axis=(1, 2))
        k0 = int(np.argmax(full))
        # anatomical-style frame from the first complete frame, then local coordinates
        T0 = frame_from_landmarks(X[k0, 0], X[k0, 1], X[k0, 2], axes="xy")
        local = local_coordinates(X[k0][None], T0[None, :3, :3], T0[None, :3, 3])[0]
        if full.all():
            pose = fit_segment_pose(X, local)
        else:
            with pytest.warns(AhbmWarning, match="fewer than 3"):
                pose = fit_segment_pose(X, local)
        np.testing.assert_array_equal(pose.valid, full)
        assert np.isnan(pose.R[~full]).all()
        assert np.nanmax(pose.rms) < 0.02  # skin markers move by millimetres to a centimetre
        for k in np.nonzero(full)[0][::10]:
            rot, _ = Rotation.align_vectors(X[k] - X[k].mean(0), local - local.mean(0))
            np.testing.assert_allclose(pose.R[k], rot.as_matrix(), atol=1e-9)


def test_apply_transform_shapes():
    rng = np.random.default_rng(9)
    T = make_transform(Rotation.random(4, random_state=3).as_matrix(), rng.normal(size=(4, 3)))
    pts = rng.normal(size=(6, 3))
    out = apply_transform(T, pts[None])  # six shared points, four transforms
    assert out.shape == (4, 6, 3)
    np.testing.assert_allclose(out[2], pts @ T[2, :3, :3].T + T[2, :3, 3])
    one = apply_transform(T, pts[0])  # one shared point
    np.testing.assert_allclose(one, out[:, 0])
    single = apply_transform(T[0], pts)  # one transform, several points
    np.testing.assert_allclose(single, out[0])


@settings(max_examples=40, deadline=None)
@given(
    n_markers=st.integers(3, 8),
    seed=st.integers(0, 2**31 - 1),
    scale=st.floats(0.01, 10.0),
)
def test_exact_recovery_property(n_markers, seed, scale):
    rng = np.random.default_rng(seed)
    local = rng.normal(scale=scale, size=(n_markers, 3))
    s = np.linalg.svd(local - local.mean(0), compute_uv=False)
    assume(s[1] > 1e-3 * s[0])  # not collinear
    R = Rotation.random(random_state=seed).as_matrix()
    p = rng.normal(scale=scale, size=3)
    pose = fit_segment_pose(local @ R.T + p, local)
    np.testing.assert_allclose(pose.R, R, atol=1e-9)
    np.testing.assert_allclose(pose.origin, p, atol=1e-9 * max(1.0, scale))


def test_per_frame_weights_equal_missing_markers():
    rng = np.random.default_rng(12)
    R, p, X = _trajectory(rng, 5)
    X = X + rng.normal(scale=1e-3, size=X.shape)
    mask = np.ones((5, 4))
    mask[1, 2] = 0.0
    mask[3, 0] = 0.0
    Xn = X.copy()
    Xn[mask == 0] = np.nan
    a = fit_segment_pose(X, LOCAL, weights=mask)
    b = fit_segment_pose(Xn, LOCAL)
    np.testing.assert_allclose(a.R, b.R, atol=1e-12)
    np.testing.assert_allclose(a.rms, b.rms, atol=1e-12)
    np.testing.assert_array_equal(a.n_visible, b.n_visible)


def test_segment_pose_is_a_result_object():
    local = np.array([[0.0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]])
    pose = fit_segment_pose(local[None] + [1.0, 2.0, 3.0], local)
    assert repr(pose).startswith("SegmentPose(R=array(1, 3, 3) float64, origin=array(1, 3)")
    np.testing.assert_allclose(pose.origin, [[1.0, 2.0, 3.0]], atol=1e-12)
