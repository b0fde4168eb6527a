"""``out=`` of rnea_derivatives / aba_derivatives: bitwise the values of a call without it."""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import (
    ABADerivatives,
    RNEADerivatives,
    aba_derivatives,
    rnea_derivatives,
)
from ahbm.errors import DataError
from ahbm.kinematics import Model, random_q
from ahbm.kinematics.configuration import random_model
from ahbm.kinematics.joints import JOINT_TYPES

ALL = tuple(t for t in JOINT_TYPES if t != "custom")
MODELS = {
    "revolute chain": (("revolute",), False),
    "every joint type": (ALL, True),
    "quaternions": (("spherical", "free", "revolute"), True),
    "prismatic": (("prismatic", "revolute"), True),
    "custom joints": (("custom", "revolute", "spherical"), True),
}
# single frame, fewer frames than a block, one block, blocks + rest, two batch axes with
# more frames than the thread threshold
BATCHES = [(), (1,), (3,), (16,), (37,), (3, 200)]
RNEA_FIELDS = ("dtau_dq", "dtau_dqd", "mass_matrix", "tau")
ABA_FIELDS = ("dqdd_dq", "dqdd_dqd", "minv", "qdd")


def _principal_axes_model():
    m = Model("principal")
    m.add_body("pelvis", "ground", {"type": "free"}, mass=10.0, inertia=np.diag([0.1, 0.2, 0.15]))
    parent = "pelvis"
    for k, axis in enumerate(([1, 0, 0], [0, 1, 0], [0, 0, 1])):
        m.add_body(
            f"b{k}", parent, {"type": "revolute", "axis": axis}, position=(0.0, 0.1 * k, -0.3),
            mass=2.0 + k, com=[0.01, 0.02, -0.2], inertia=np.diag([0.02, 0.03, 0.01]),
        )  # fmt: skip
        parent = f"b{k}"
    return m


def _model(name):
    rng = np.random.default_rng(len(name))
    if name == "principal axes":
        return _principal_axes_model(), rng
    types, offsets = MODELS[name]
    return random_model(6, rng=rng, joint_types=types, child_offsets=offsets), rng


def _state(model, rng, batch):
    n = int(np.prod(batch, dtype=int))
    q = random_q(model, rng=rng, size=n).reshape(batch + (model.nq,))
    return q, rng.normal(size=batch + (model.nv,)), rng.normal(size=batch + (model.nv,))


def _nan_out(model, batch):
    """Output arrays full of NaN: an entry the kernels do not write shows."""
    nv = model.nv
    return tuple(np.full(batch + s, np.nan) for s in ((nv, nv), (nv, nv), (nv, nv), (nv,)))


def _same_bits(a, b, fields):
    for f in fields:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape, f
        assert x.tobytes() == y.tobytes(), f


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("name", [*MODELS, "principal axes"])
def test_rnea_out_bitwise_equal_and_reusable(name, batch):
    model, rng = _model(name)
    q, qd, qdd = _state(model, rng, batch)
    fresh = rnea_derivatives(model, q, qd, qdd)
    arrays = _nan_out(model, batch)
    d = rnea_derivatives(model, q, qd, qdd, out=arrays)
    assert isinstance(d, RNEADerivatives)
    assert all(getattr(d, f) is a for f, a in zip(RNEA_FIELDS, arrays, strict=True))
    _same_bits(d, fresh, RNEA_FIELDS)
    # the same out again, after another state was written into it: the first values back
    q2, qd2, qdd2 = _state(model, rng, batch)
    other = rnea_derivatives(model, q2, qd2, qdd2, out=d)
    assert other.dtau_dq is arrays[0]
    _same_bits(other, rnea_derivatives(model, q2, qd2, qdd2), RNEA_FIELDS)
    again = rnea_derivatives(model, q, qd, qdd, out=d)
    _same_bits(again, fresh, RNEA_FIELDS)


@pytest.mark.parametrize("batch", [(), (3,), (37,), (3, 200)], ids=str)
@pytest.mark.parametrize("name", ["every joint type", "quaternions", "custom joints"])
def test_aba_out_bitwise_equal_and_reusable(name, batch):
    model, rng = _model(name)
    q, qd, tau = _state(model, rng, batch)
    fresh = aba_derivatives(model, q, qd, tau)
    arrays = _nan_out(model, batch)
    d = aba_derivatives(model, q, qd, tau, out=arrays)
    assert isinstance(d, ABADerivatives)
    assert all(getattr(d, f) is a for f, a in zip(ABA_FIELDS, arrays, strict=True))
    _same_bits(d, fresh, ABA_FIELDS)
    aba_derivatives(model, *_state(model, rng, batch), out=d)
    _same_bits(aba_derivatives(model, q, qd, tau, out=d), fresh, ABA_FIELDS)


@pytest.mark.parametrize("frame", ["world", "local"])
@pytest.mark.parametrize("name", ["every joint type", "custom joints"])
def test_out_with_external_forces(name, frame):
    model, rng = _model(name)
    q, qd, qdd = _state(model, rng, (37,))
    kw = {"f_ext": rng.normal(size=(37, model.n_bodies, 6)), "f_ext_frame": frame}
    fresh = rnea_derivatives(model, q, qd, qdd, **kw)
    d = rnea_derivatives(model, q, qd, qdd, out=_nan_out(model, (37,)), **kw)
    _same_bits(d, fresh, RNEA_FIELDS)
    fresh = aba_derivatives(model, q, qd, qdd, **kw)
    d = aba_derivatives(model, q, qd, qdd, out=_nan_out(model, (37,)), **kw)
    _same_bits(d, fresh, ABA_FIELDS)


def _bad_outs(model, q, qd, qdd):
    nv, N = model.nv, q.shape[0]
    good = _nan_out(model, (N,))

    def swap(k, a):
        return good[:k] + (a,) + good[k + 1 :]

    ro = np.zeros((N, nv))
    ro.flags.writeable = False
    big = np.zeros((N, nv, 2 * nv))
    shared = np.zeros((N, nv, nv))
    return [
        ("an int", 3, r"`out` to be a RNEADerivatives .* got int"),
        ("3 arrays", good[:3], r"tuple of 4 arrays .* got a tuple of 3 items"),
        ("ABA result", ABADerivatives(*good), r"`out` to be a RNEADerivatives .*ABADerivatives"),
        ("a list item", swap(0, [[0.0] * nv] * N), r"`out\[0\]` \(dtau_dq\) to be a numpy array"),
        ("shape", swap(1, np.zeros((N + 1, nv, nv))), r"`out\[1\]` \(dtau_dqd\) to have shape"),
        ("dtype", swap(3, np.zeros((N, nv), np.float32)), r"`out\[3\]` \(tau\) .* float64"),
        ("Fortran", swap(2, np.zeros((N, nv, nv), order="F")), r"`out\[2\]` .* C-contiguous"),
        ("strided", swap(0, big[:, :, ::2]), r"`out\[0\]` \(dtau_dq\) to be C-contiguous"),
        ("read-only", swap(3, ro), r"`out\[3\]` \(tau\) to be writeable"),
        ("aliased", swap(2, good[0]), r"`out\[0\]` \(dtau_dq\) and `out\[2\]` .* share memory"),
        ("same buffer", (shared, good[1], shared, good[3]), r"share memory"),
        ("qdd", swap(3, qdd), r"`out\[3\]` \(tau\) shares memory with the input `qdd`"),
        ("qd", swap(3, qd), r"shares memory with the input `qd`"),
    ]


@pytest.mark.parametrize("i", range(13))
def test_bad_out_is_refused_before_anything_is_written(i):
    model, rng = _model("quaternions")
    q, qd, qdd = _state(model, rng, (5,))
    _, bad, match = _bad_outs(model, q, qd, qdd)[i]
    before = [x.copy() for x in (q, qd, qdd)]
    with pytest.raises(DataError, match=match):
        rnea_derivatives(model, q, qd, qdd, out=bad)
    for x, y in zip((q, qd, qdd), before, strict=True):
        np.testing.assert_array_equal(x, y)


def test_bad_out_names_the_result_field_and_the_batch_shape():
    model, rng = _model("revolute chain")
    q, qd, qdd = _state(model, rng, (4,))
    earlier = rnea_derivatives(model, q[:3], qd[:3], qdd[:3])
    nv = model.nv
    with pytest.raises(DataError, match=rf"`out.dtau_dq` to have shape \(4, {nv}, {nv}\)"):
        rnea_derivatives(model, q, qd, qdd, out=earlier)
    with pytest.raises(DataError, match=r"`out.tau` shares memory with the input `qdd`"):
        rnea_derivatives(model, q[:3], qd[:3], earlier.tau, out=earlier)
    buf = np.zeros(4 * model.n_bodies * 6 + 4 * nv)
    f = buf[: 4 * model.n_bodies * 6].reshape(4, model.n_bodies, 6)
    tau = buf[-4 * nv - 1 : -1].reshape(4, nv)  # the last force entries and one more
    with pytest.raises(DataError, match=r"`out\[3\]` \(tau\) shares memory with the input `f_ext`"):
        rnea_derivatives(model, q, qd, qdd, f_ext=f, out=_nan_out(model, (4,))[:3] + (tau,))
    aba_earlier = aba_derivatives(model, q, qd, qdd)
    with pytest.raises(DataError, match=r"`out.minv` shares memory with the input `tau`"):
        flat = aba_earlier.minv.reshape(-1)[: 4 * nv].reshape(4, nv)
        aba_derivatives(model, q, qd, flat, out=aba_earlier)
    with pytest.raises(DataError, match=r"`out` to be a ABADerivatives"):
        aba_derivatives(model, q, qd, qdd, out=rnea_derivatives(model, q, qd, qdd))
