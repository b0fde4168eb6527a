"""The single-state (lean) path and the multi-threaded batch RNEA of the kernels."""

import numba
import numpy as np
import pytest

from ahbm._engine import compilation as _compilation
from ahbm._engine import dispatch as _dispatch
from ahbm.dynamics import (
    aba,
    crba,
    forward_dynamics,
    gravity_torques,
    nonlinear_effects,
    reference,
    rnea,
)
from ahbm.errors import AhbmError, DataError, ModelError, SimulationError
from ahbm.kinematics import Model
from ahbm.kinematics.configuration import random_model, random_q
from ahbm.kinematics.joints import JOINT_TYPES


def _state(seed, n_bodies=9):
    rng = np.random.default_rng(seed)
    model = random_model(n_bodies, rng=rng, joint_types=tuple(JOINT_TYPES))
    q = random_q(model, rng=rng)
    qd = rng.normal(size=model.nv)
    qdd = rng.normal(size=model.nv)
    return model, q, qd, qdd


@pytest.mark.parametrize("seed", range(4))
def test_lean_path_equals_full_path_exactly(seed):
    """One float64 state (lean path) == the same state through full validation."""
    model, q, qd, qdd = _state(seed)
    assert _dispatch.rnea_single(model, q, qd, qdd) is not None  # the lean path is taken
    # a (1, n) batch and a list go through the full validation
    tau = rnea(model, q, qd, qdd)
    np.testing.assert_array_equal(tau, rnea(model, q[None], qd[None], qdd[None])[0])
    np.testing.assert_array_equal(tau, rnea(model, list(q), list(qd), list(qdd)))
    np.testing.assert_array_equal(
        nonlinear_effects(model, q, qd), nonlinear_effects(model, q[None], qd[None])[0]
    )
    np.testing.assert_array_equal(gravity_torques(model, q), gravity_torques(model, q[None])[0])
    np.testing.assert_array_equal(crba(model, q), crba(model, q[None])[0])
    acc = aba(model, q, qd, tau)
    np.testing.assert_array_equal(acc, aba(model, q[None], qd[None], tau[None])[0])
    np.testing.assert_array_equal(forward_dynamics(model, q, qd, tau), acc)
    # and the independent reference recursions agree
    scale = max(1.0, np.abs(tau).max())
    np.testing.assert_allclose(tau, reference.rnea(model, q, qd, qdd), atol=1e-10 * scale)
    np.testing.assert_allclose(crba(model, q), reference.crba(model, q), atol=1e-10)
    np.testing.assert_allclose(acc, qdd, atol=1e-8)


def test_lean_path_equals_batch_path():
    """Single states agree with the frame-block kernels of a long batch."""
    model, *_ = _state(7, n_bodies=12)
    rng = np.random.default_rng(8)
    n = 80
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    tau = rnea(model, q, qd, qdd)
    acc = aba(model, q, qd, tau)
    H = crba(model, q)
    for k in (0, 17, n - 1):
        t1 = rnea(model, q[k], qd[k], qdd[k])
        np.testing.assert_allclose(t1, tau[k], rtol=0, atol=1e-12 * max(1.0, np.abs(t1).max()))
        np.testing.assert_allclose(aba(model, q[k], qd[k], tau[k]), acc[k], atol=1e-9)
        np.testing.assert_array_equal(crba(model, q[k]), H[k])


@pytest.mark.parametrize(
    "make",
    [
        lambda x: list(x),
        lambda x: x.astype(np.float32),
        lambda x: np.repeat(x, 2)[::2],  # not contiguous
        lambda x: x[None],
        lambda x: x.astype(np.int64),
    ],
)
def test_other_inputs_take_the_full_path(make):
    model, q, qd, qdd = _state(11)
    assert _dispatch.rnea_single(model, make(q), qd, qdd) is None
    assert _dispatch.crba_single(model, make(q)) is None
    assert _dispatch.aba_single(model, q, make(qd), qdd) is None


@pytest.mark.parametrize("name", ["q", "qd", "qdd"])
def test_lean_path_reports_non_finite_input_by_name(name):
    model, q, qd, qdd = _state(12)
    args = {"q": q, "qd": qd, "qdd": qdd}
    args[name] = args[name].copy()
    args[name][1] = np.nan
    assert _dispatch.rnea_single(model, args["q"], args["qd"], args["qdd"]) is None
    with pytest.raises(DataError, match=f"`{name}`"):
        rnea(model, args["q"], args["qd"], args["qdd"])
    with pytest.raises(DataError, match=f"`{'tau' if name == 'qdd' else name}`"):
        aba(model, args["q"], args["qd"], args["qdd"])
    if name == "q":
        with pytest.raises(DataError, match="`q`"):
            crba(model, args["q"])


def test_lean_path_reports_bad_shapes_models_and_quaternions():
    m = Model("ball")
    m.add_body("a", "ground", {"type": "spherical"}, mass=1.0, com=[0, 0, -0.5])
    q = np.array([0.0, 0.0, 0.0, 1.0])
    z = np.zeros(3)
    with pytest.raises(DataError, match="quaternion"):
        rnea(m, np.zeros(4), z, z)
    with pytest.raises(DataError, match="quaternion"):
        crba(m, np.zeros(4))
    with pytest.raises(DataError, match="quaternion"):
        aba(m, np.zeros(4), z, z)
    with pytest.raises(DataError, match="`qdd`"):
        rnea(m, q, z, np.zeros(4))
    with pytest.raises(DataError, match="`q`"):
        crba(m, np.zeros(3))
    with pytest.raises(ModelError):
        rnea("model", q, z, z)
    with pytest.raises(AhbmError, match="f_ext_frame"):
        rnea(m, q, z, z, f_ext_frame="body")


def test_lean_aba_reports_a_singular_joint():
    m = Model("arm")
    m.add_body("upper", "ground", {"type": "revolute", "axis": [0, 1, 0]}, mass=2.0)
    m.add_body("tip", "upper", {"type": "spherical"}, position=[0, 0, -0.3], mass=0.0)
    q = np.array([0.0, 0, 0, 0, 1])
    assert _dispatch.aba_single(m, q, np.zeros(4), np.ones(4)) is None
    with pytest.raises(SimulationError, match="tip"):
        aba(m, q, np.zeros(4), np.ones(4))


def test_results_are_not_shared_between_calls():
    model, q, qd, qdd = _state(13)
    t1 = rnea(model, q, qd, qdd)
    t2 = rnea(model, q, qd, qdd)
    assert t1 is not t2 and not np.shares_memory(t1, t2)
    H1, H2 = crba(model, q), crba(model, q)
    assert not np.shares_memory(H1, H2)
    a1, a2 = aba(model, q, qd, t1), aba(model, q, qd, t1)
    assert not np.shares_memory(a1, a2)


def test_a_model_change_between_calls_is_seen():
    """Masses, joints and gravity changed after a call change the next results."""
    model, q, qd, qdd = _state(14, n_bodies=6)
    tau0 = rnea(model, q, qd, qdd)
    H0 = crba(model, q)
    acc0 = aba(model, q, qd, tau0)
    b = next(i for i, body in enumerate(model.bodies) if body.mass > 0)
    model.update_body(b, mass=model.bodies[b].mass * 2.0)
    for fn, old in (
        (lambda: rnea(model, q, qd, qdd), tau0),
        (lambda: crba(model, q), H0),
        (lambda: aba(model, q, qd, tau0), acc0),
    ):
        new = fn()
        assert np.abs(new - old).max() > 1e-9
    np.testing.assert_allclose(
        rnea(model, q, qd, qdd),
        reference.rnea(model, q, qd, qdd),
        atol=1e-10 * max(1.0, np.abs(tau0).max()),
    )
    np.testing.assert_allclose(crba(model, q), reference.crba(model, q), atol=1e-10)
    g0 = gravity_torques(model, q)
    model.gravity = 2.0 * np.asarray(model.gravity)
    np.testing.assert_allclose(gravity_torques(model, q), 2 * g0, atol=1e-12 * np.abs(g0).max())


def test_a_joint_change_between_calls_is_seen():
    m = Model("pendulum")
    m.add_body("a", "ground", {"type": "revolute", "axis": [0, 1, 0]}, mass=1.0, com=[0, 0, -1])
    q = np.array([0.3])
    g1 = gravity_torques(m, q)
    m.update_body("a", joint={"type": "revolute", "axis": [1, 0, 0]})
    g2 = gravity_torques(m, q)
    assert abs(g1[0] - g2[0]) < 1e-12  # same pendulum about another horizontal axis
    m.update_body("a", joint={"type": "euler", "sequence": "YXZ"})
    assert gravity_torques(m, np.array([0.3, 0.0, 0.0])).shape == (3,)
    np.testing.assert_allclose(gravity_torques(m, np.array([0.3, 0.0, 0.0]))[0], g1[0])


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("f_ext", [False, True])
def test_threaded_batch_rnea_equals_serial_bitwise(monkeypatch, threads, f_ext):
    model, *_ = _state(15, n_bodies=10)
    rng = np.random.default_rng(16)
    n = 1000  # not a multiple of the block
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    f = rng.normal(size=(n, model.n_bodies, 6)) if f_ext else None
    monkeypatch.setattr(_dispatch, "_PARALLEL_MIN", 10**9)
    serial = rnea(model, q, qd, qdd, f_ext=f)
    monkeypatch.setattr(_dispatch, "_PARALLEL_MIN", 100)
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
    assert _dispatch._threads() == threads
    parallel = rnea(model, q, qd, qdd, f_ext=f)
    np.testing.assert_array_equal(parallel, serial)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 4097])
@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_thread_split_covers_the_frames_in_whole_blocks(n, workers):
    ranges = _dispatch._split(n, workers, 64)
    assert ranges[0][0] == 0 and ranges[-1][1] == n and len(ranges) <= workers
    for (a, b), (c, _) in zip(ranges, ranges[1:], strict=False):
        assert b == c and (b - a) % 64 == 0


def test_compilation_ahead_of_use(monkeypatch):
    """compile_kernels makes is_compiled true; an unknown cache state counts as not compiled."""
    _compilation.compile_kernels(("rnea_single", "crba"))
    assert _compilation.is_compiled(("rnea_single", "crba"))

    @numba.njit
    def never_cached(x):  # no disk cache and never called: not compiled
        return x

    monkeypatch.setitem(_compilation.KERNELS, "rnea_single", never_cached)
    assert not _compilation.is_compiled(("rnea_single",))


def test_compile_in_background_process():
    proc = _compilation.compile_in_background(("crba",))
    assert proc.wait(timeout=600) == 0


@pytest.mark.parametrize("n", [2, 40, 3000])
def test_batch_lean_path_equals_full_validation_and_reports_bad_values(monkeypatch, n):
    """A float64 C-contiguous batch is checked in the kernels; bad values still name it."""
    model, *_ = _state(17, n_bodies=8)
    rng = np.random.default_rng(18)
    q = random_q(model, rng=rng, size=n)
    qd = rng.normal(size=(n, model.nv))
    qdd = rng.normal(size=(n, model.nv))
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    assert _dispatch.rnea_single(model, q, qd, qdd) is not None
    tau = rnea(model, q, qd, qdd)
    # Fortran-ordered copies go through the full validation
    np.testing.assert_array_equal(
        tau, rnea(model, np.asfortranarray(q), np.asfortranarray(qd), np.asfortranarray(qdd))
    )
    np.testing.assert_array_equal(nonlinear_effects(model, q, qd), rnea(model, q, qd, 0 * qdd))
    np.testing.assert_array_equal(gravity_torques(model, q), rnea(model, q, 0 * qd, 0 * qdd))
    for name, arr in (("qd", qd), ("qdd", qdd)):
        bad = arr.copy()
        bad[-1, 0] = np.inf  # in the last range of frames
        args = {"qd": qd, "qdd": qdd, name: bad}
        assert _dispatch.rnea_single(model, q, args["qd"], args["qdd"]) is None
        with pytest.raises(DataError, match=f"`{name}`"):
            rnea(model, q, args["qd"], args["qdd"])


def test_batch_lean_path_reports_a_zero_quaternion():
    m = Model("ball")
    m.add_body("a", "ground", {"type": "spherical"}, mass=1.0, com=[0, 0, -0.5])
    q = np.tile([0.0, 0.0, 0.0, 1.0], (50, 1))
    q[30] = 0.0
    z = np.zeros((50, 3))
    with pytest.raises(DataError, match="quaternion"):
        rnea(m, q, z, z)
