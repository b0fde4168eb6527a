import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ahbm.analysis import fill_gaps, fill_gaps_rigid, find_gaps
from ahbm.errors import DataError


def _smooth_markers(n=200, fs=100.0):
    t = np.arange(n) / fs
    p = np.stack(
        [
            np.stack(
                [
                    0.5 * t + 0.05 * np.sin(2 * np.pi * t),
                    0.02 * np.cos(2 * np.pi * t),
                    0.9 + 0.03 * np.sin(4 * np.pi * t),
                ],
                -1,
            ),
            np.stack([0.5 * t, 0.1 + 0.01 * t, 0.5 + 0.05 * np.cos(2 * np.pi * t)], -1),
        ],
        axis=1,
    )
    return t, p


def test_find_gaps():
    x = np.ones((10, 2, 3))
    x[0:2, 0, 1] = np.nan
    x[4:7, 1] = np.nan
    x[9, 1, 2] = np.nan
    gaps = find_gaps(x)
    assert [(g.channel, g.start, g.stop, g.leading, g.trailing) for g in gaps] == [
        (0, 0, 2, True, False),
        (1, 4, 7, False, False),
        (1, 9, 10, False, True),
    ]
    assert gaps[1].length == 3


@pytest.mark.parametrize("method,tol", [("spline", 2e-4), ("linear", 3e-3)])
def test_fill_reproduces_removed_data(method, tol):
    t, p = _smooth_markers()
    holed = p.copy()
    holed[50:58, 0] = np.nan
    holed[120:125, 1, :] = np.nan
    filled, rep = fill_gaps(holed, max_gap=10, method=method, time=t, labels=["A", "B"])
    assert np.isfinite(filled).all()
    np.testing.assert_allclose(filled, p, atol=tol)
    assert [(r.label, r.start, r.stop, r.filled, r.method) for r in rep] == [
        ("A", 50, 58, True, method),
        ("B", 120, 125, True, method),
    ]


def test_fill_refuses_long_gap_and_edges():
    t, p = _smooth_markers()
    holed = p.copy()
    holed[50:80, 0] = np.nan
    with pytest.raises(DataError, match="A at frames 50-79 is 30 frames long.*max_gap=10"):
        fill_gaps(holed, max_gap=10, labels=["A", "B"])
    holed[:3, 1] = np.nan
    filled, rep = fill_gaps(holed, max_gap=10, labels=["A", "B"], on_long_gap="skip")
    assert np.isnan(filled[50:80, 0]).all()
    assert np.isnan(filled[:3, 1]).all()  # never extrapolated
    reasons = {r.label: r.reason for r in rep}
    assert "max_gap" in reasons["A"] and "edge" in reasons["B"]
    assert not any(r.filled for r in rep)


def test_fill_1d_and_bad_args():
    y, rep = fill_gaps([0.0, 1.0, np.nan, np.nan, 4.0, 5.0], max_gap=2, method="spline")
    np.testing.assert_allclose(y, np.arange(6.0), atol=1e-12)
    with pytest.raises(DataError, match="method"):
        fill_gaps(np.ones(5), max_gap=2, method="cubic")
    with pytest.raises(DataError, match="max_gap"):
        fill_gaps(np.ones(5), max_gap=0)


def test_rigid_fill_exact_for_rigid_cluster():
    rng = np.random.default_rng(0)
    n = 120
    local = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.08, 0.01], [0.05, 0.04, 0.06]])
    rots = Rotation.from_rotvec(np.cumsum(rng.normal(0, 0.05, (n, 3)), axis=0))
    trans = np.cumsum(rng.normal(0, 0.01, (n, 3)), axis=0)
    pts = np.einsum("nij,mj->nmi", rots.as_matrix(), local) + trans[:, None, :]
    holed = pts.copy()
    holed[30:60, 3] = np.nan
    holed[:5, 3] = np.nan
    labels = ["D1", "D2", "D3", "T"]
    filled, rep = fill_gaps_rigid(holed, "T", ("D1", "D2", "D3"), max_gap=40, labels=labels)
    np.testing.assert_allclose(filled, pts, atol=1e-12)
    assert all(r.filled and r.method == "rigid" for r in rep)
    assert [(r.start, r.stop) for r in rep] == [(0, 5), (30, 60)]


def test_rigid_fill_donor_missing_and_errors():
    p = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1]]] * 10, float)
    p[4:6, 3] = np.nan
    p[5, 1] = np.nan
    filled, rep = fill_gaps_rigid(p, 3, (0, 1, 2), max_gap=5)
    assert np.isfinite(filled[4, 3]).all() and np.isnan(filled[5, 3]).all()
    assert not rep[0].filled and "donors" in rep[0].reason
    with pytest.raises(DataError, match="max_gap=1"):
        fill_gaps_rigid(p, 3, (0, 1, 2), max_gap=1)
    with pytest.raises(DataError, match="exactly 3"):
        fill_gaps_rigid(p, 3, (0, 1), max_gap=5)
    with pytest.raises(DataError, match="not found"):
        fill_gaps_rigid(p, "X", (0, 1, 2), max_gap=5, labels=["a", "b", "c", "d"])
