"""Velocity-level (nonholonomic) constraints ``A(t, q) q̇ = b(t, q)``.

The references are closed forms derived by hand and checked against the
classical literature:

* Rolling thin disk (mass m, radius R, ``A = mR²/4`` about a diameter,
  ``C = mR²/2`` about the axle), coordinates (x, y, heading θ, lean φ, spin ψ).
  Steady motions ``φ̇ = 0``, ``θ̇ = Ω``, ``ψ̇`` constant satisfy the balance of
  angular momentum about the centre, ``dH/dt = ω_frame × H = (contact −
  centre) × F`` with the contact force ``F = m a_O + m g ẑ``::

      A Ω² sin φ cos φ − (C + mR²) Ω (Ω sin φ + ψ̇) cos φ − m g R sin φ = 0

  (our derivation; the same condition as Routh, *Advanced Dynamics of a
  System of Rigid Bodies*, art. 244, and K. T. McDonald & A. J. McDonald,
  "The rolling motion of a disk on a horizontal plane", arXiv:physics/0008227).
  Special cases: upright straight rolling (φ = 0, Ω = 0, any ψ̇), and the
  centre at rest (Ω sin φ + ψ̇ = 0), for which ``Ω² = 4 g / (R cos φ)``, the
  classical ``Ω² = 4 g / (a sin α)`` of Euler's disk with α = π/2 − φ.
  The contact point then runs on a circle of radius ``R ψ̇ / Ω``.
* Knife edge / Chaplygin sleigh (contact point at the body origin, centre of
  mass a distance ``a`` ahead, inertia ``I`` about it, ``J = I + m a²``):
  ``u̇ = a ω²``, ``J ω̇ = −m a u ω`` (u forward speed, ω heading rate), so
  ``u = U tanh(k t + c)``, ``ω = ±U √(m/J) sech(k t + c)`` with ``U = √(2E/m)``,
  ``k = m a U / J``; the lateral constraint force is ``λ = m (u ω + a ω̇)``.
* Skate (a = 0) on a plane inclined along +x (in-plane gravity g'): ω constant,
  ``u = c + (g'/ω) sin θ`` and the contact point follows
  ``x = (c/ω) sin θ + g' sin²θ / (2ω²)``, ``y = −(c/ω) cos θ + g' (θ/2 − sin 2θ/4)/ω²``
  (plus constants): a cycloid-like path drifting across the slope.
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.dynamics import (
    ConstraintSet,
    PrescribedCoordinate,
    VelocityConstraint,
    simulate,
)
from ahbm.dynamics.constrained import (
    _LeanConstrained,
    constrained_forward_dynamics,
    project_positions,
    project_velocities,
)
from ahbm.dynamics.forward import crba
from ahbm.errors import AhbmError, DataError, ModelError
from ahbm.kinematics.forward import kinetic_energy, point_velocity, potential_energy
from ahbm.kinematics.model_file import save_model
from ahbm.models import knife_edge, rolling_disk

R, MASS, G = 0.3, 1.0, 9.81
IA, IC = MASS * R**2 / 4, MASS * R**2 / 2
# max_step: the dense output between t_eval points stays at the integrator accuracy
TIGHT = {"method": "DOP853", "rtol": 1e-12, "atol": 1e-12, "max_step": 0.2}


def _energy(model, r):
    return kinetic_energy(model, r.q, r.qd) + potential_energy(model, r.q)


def _steady_heading_rates(phi, spin_rate):
    """Both Ω of the steady relation (quadratic in Ω for given φ and ψ̇)."""
    s, c = np.sin(phi), np.cos(phi)
    coeffs = [(IA - IC - MASS * R**2) * s * c, -(IC + MASS * R**2) * spin_rate * c,
              -MASS * G * R * s]  # fmt: skip
    return np.roots(coeffs) if abs(coeffs[0]) > 0 else np.array([-coeffs[2] / coeffs[1]])


def _steady_disk(phi, heading_rate, spin_rate, t):
    """Closed-form steady rolling from x = y = θ = ψ = 0, shape (n, 5)."""
    th = heading_rate * t
    if heading_rate == 0.0:
        x, y = R * spin_rate * t, np.zeros_like(t)
    else:
        rho = R * spin_rate / heading_rate
        x, y = rho * np.sin(th), rho * (1.0 - np.cos(th))
    return np.stack([x, y, th, np.full_like(t, phi), spin_rate * t], axis=1)


def _run_steady(phi, heading_rate, spin_rate, t_end=10.0):
    model = rolling_disk(radius=R, mass=MASS)
    q0 = np.array([0.0, 0.0, 0.0, phi, 0.0])
    qd0 = np.array([R * spin_rate, 0.0, heading_rate, 0.0, spin_rate])
    t_eval = np.linspace(0.0, t_end, 201)
    r = simulate(model, (0.0, t_end), q0, qd0, t_eval=t_eval, **TIGHT)
    return model, r, _steady_disk(phi, heading_rate, spin_rate, r.t)


@pytest.mark.parametrize(
    "case",
    ["upright_straight", "steady_circle", "centre_at_rest"],
)
def test_rolling_disk_steady_motions_match_closed_form(case):
    if case == "upright_straight":
        phi, spin = 0.0, 10.0
        omega = 0.0
    elif case == "steady_circle":
        phi, spin = 0.2, 15.0
        omega = min(_steady_heading_rates(phi, spin), key=abs)  # the slow precession
    else:  # Euler's disk: Ω² = 4 g / (R cos φ), ψ̇ = −Ω sin φ
        phi = 0.3
        omega = np.sqrt(4 * G / (R * np.cos(phi)))
        spin = -omega * np.sin(phi)
        assert np.abs(_steady_heading_rates(phi, spin) - omega).min() <= 1e-12 * omega
    model, r, ref = _run_steady(phi, omega, spin)
    assert r.t[-1] == pytest.approx(10.0)
    assert np.abs(r.q - ref).max() <= 1e-8
    assert r.velocity_residual.max() <= 1e-10
    e = _energy(model, r)
    assert np.ptp(e) <= 1e-8
    if case == "centre_at_rest":  # the centre of the disk does not move
        centre = point_velocity(model, r.q, r.qd, "disk")
        assert np.abs(centre).max() <= 1e-8


def test_steady_relation_gives_zero_lean_acceleration():
    """The relation is exactly what ahbm's constrained dynamics need for φ̈ = 0."""
    model = rolling_disk(radius=R, mass=MASS)
    for phi, spin in [(0.1, 10.0), (0.25, -12.0), (0.4, 6.0)]:
        roots = _steady_heading_rates(phi, spin)
        assert np.all(np.isreal(roots))
        for omega in roots.real:
            q = np.array([0.0, 0.0, 0.0, phi, 0.0])
            qd = np.array([R * spin, 0.0, omega, 0.0, spin])
            qdd, _ = constrained_forward_dynamics(model, q, qd, None, None)
            # θ̈ = φ̈ = ψ̈ = 0; the contact point turns: ÿ = R ψ̇ Ω (at θ = 0)
            scale = 1.0 + abs(omega * spin)
            assert np.abs(qdd[[0, 2, 3, 4]]).max() <= 1e-12 * scale
            assert qdd[1] == pytest.approx(R * spin * omega, rel=1e-12, abs=1e-12)
        # a wrong spin rate leans the disk
        qd_bad = np.array([R * 1.1 * spin, 0.0, omega, 0.0, 1.1 * spin])
        assert abs(constrained_forward_dynamics(model, q, qd_bad, None, None)[0][3]) > 1e-3


def test_rolling_disk_wobbling_contact_point_has_no_velocity():
    """A generic motion: the disk's material contact point (ahbm kinematics) does not slip,
    energy is conserved, and the constraint residual stays at round-off after projection."""
    model = rolling_disk(radius=R, mass=MASS)
    q0 = np.array([0.1, -0.2, 0.3, 0.25, 0.0])
    spin = 12.0
    qd0 = np.array([0.0, 0.0, 1.5, 0.3, spin])
    kw = dict(TIGHT, rtol=1e-10, atol=1e-10)  # energy drift about 1e-9
    r = simulate(model, (0.0, 10.0), q0, qd0, t_eval=np.linspace(0, 10, 401), **kw)
    assert r.velocity_residual.max() <= 1e-10
    assert r.position_residual.max() == 0.0  # no position-level equation
    assert np.ptp(_energy(model, r)) <= 1e-8
    assert np.ptp(r.q[:, 3]) > 0.05  # the lean oscillates: not a steady motion
    # contact point in the disk frame: straight down the lean frame, turned by −ψ about y
    psi = r.q[:, 4]
    point = np.stack([R * np.sin(psi), np.zeros_like(psi), -R * np.cos(psi)], axis=1)
    v = np.stack([point_velocity(model, r.q[k], r.qd[k], "disk", point[k])
                  for k in range(0, r.t.size, 20)])  # fmt: skip
    assert np.abs(v).max() <= 1e-9


def test_finite_difference_gamma_matches_analytic():
    model = rolling_disk(radius=R, mass=MASS)
    analytic = model.constraints[0]
    fd = VelocityConstraint(analytic.A, size=2)
    rng = np.random.default_rng(7)
    q = rng.uniform(-1, 1, (6, 5))
    qd = rng.normal(0, 5, (6, 5))
    cs_a, cs_f = ConstraintSet([analytic]), ConstraintSet([fd])
    g_a, g_f = cs_a.gamma(model, q, qd), cs_f.gamma(model, q, qd)
    assert np.abs(g_f - g_a).max() <= 1e-9 * np.abs(g_a).max()
    # rheonomic: b(t) = 0.3 sin(2t) on the first row gives γ = 0.6 cos(2t) more
    rh = VelocityConstraint(analytic.A, lambda t, q: [0.3 * np.sin(2 * t), 0.0], size=2,
                            rheonomic=True)  # fmt: skip
    t = 0.7
    g_r = ConstraintSet([rh]).gamma(model, q, qd, t=t)
    assert np.abs(g_r - g_a - [0.6 * np.cos(2 * t), 0.0]).max() <= 1e-9


def test_vectorized_callables_match_per_state():
    model = knife_edge()
    per_state = model.constraints[0]

    def A(t, q):
        th = q[:, 2]
        return np.stack([-np.sin(th), np.cos(th), np.zeros_like(th)], axis=-1)[:, None, :]

    vec = VelocityConstraint(A, lambda t, q: 0.1 * q[:, :1], vectorized=True, name="vec")
    one = VelocityConstraint(per_state.A, lambda t, q: 0.1 * q[:1], name="one")
    rng = np.random.default_rng(1)
    q, qd = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))
    terms = [ConstraintSet([c]).assemble(model, q, qd) for c in (vec, one)]
    for name in ("G", "nu", "gamma"):
        assert np.allclose(getattr(terms[0], name), getattr(terms[1], name), atol=1e-12)
    assert vec.size(model) == 1 and vec.residual(model, q[0], qd[0]).shape == (4, 1)


def test_knife_edge_multiplier_hand_derived():
    """The lateral force λ of the sleigh and of the skate on an inclined plane."""
    m_, I_, a = 2.0, 0.07, 0.15
    J = I_ + m_ * a**2
    th, u, w = 0.4, 1.3, -0.8
    qd = np.array([u * np.cos(th), u * np.sin(th), w])
    q = np.array([0.3, -0.1, th])
    sleigh = knife_edge(mass=m_, inertia=I_, offset=a)
    qdd, lam = constrained_forward_dynamics(sleigh, q, qd, None, None)
    wdot = -m_ * a * u * w / J
    assert qdd[2] == pytest.approx(wdot, rel=1e-12)
    assert lam[0] == pytest.approx(m_ * (u * w + a * wdot), rel=1e-12)
    # forward acceleration u̇ = a ω²: ẍ cos θ + ÿ sin θ
    assert qdd[0] * np.cos(th) + qdd[1] * np.sin(th) == pytest.approx(a * w**2, rel=1e-12)
    gp = 2.0
    skate = knife_edge(mass=m_, inertia=I_, gravity=(gp, 0.0, -9.0))
    for method in ("direct", "range_space", "null_space"):
        qdd, lam = constrained_forward_dynamics(skate, q, qd, None, None, method=method)
        # lateral balance: m u ω = λ + m g' (x̂ · ê_lat) with ê_lat = (−sin θ, cos θ)
        assert lam[0] == pytest.approx(m_ * u * w + m_ * gp * np.sin(th), rel=1e-12)
        assert qdd[2] == pytest.approx(0.0, abs=1e-13)


def test_chaplygin_sleigh_matches_closed_form():
    from scipy.integrate import quad

    m_, I_, a = 1.0, 0.05, 0.2
    J = I_ + m_ * a**2
    model = knife_edge(mass=m_, inertia=I_, offset=a)
    u0, w0 = 0.3, 2.0
    q0, qd0 = np.zeros(3), np.array([u0, 0.0, w0])
    t = np.linspace(0.0, 10.0, 101)
    r = simulate(model, (0.0, 10.0), q0, qd0, t_eval=t, **TIGHT)
    E = 0.5 * m_ * u0**2 + 0.5 * J * w0**2
    U = np.sqrt(2 * E / m_)
    k, c = m_ * a * U / J, np.arctanh(u0 / U)

    def gd(x):
        return 2.0 * np.arctan(np.tanh(x / 2.0))

    def theta(s):
        return np.sign(w0) * U * np.sqrt(m_ / J) / k * (gd(k * s + c) - gd(c))

    def speed(s):
        return U * np.tanh(k * s + c)

    x = [quad(lambda s: speed(s) * np.cos(theta(s)), 0, tk, epsabs=1e-13, epsrel=1e-13)[0]
         for tk in t]  # fmt: skip
    y = [quad(lambda s: speed(s) * np.sin(theta(s)), 0, tk, epsabs=1e-13, epsrel=1e-13)[0]
         for tk in t]  # fmt: skip
    ref = np.stack([x, y, theta(t)], axis=1)
    assert np.abs(r.q - ref).max() <= 1e-8
    assert r.velocity_residual.max() <= 1e-10
    assert np.ptp(_energy(model, r)) <= 1e-8
    # the speed approaches U and the heading rate dies out
    u_end = r.qd[-1, 0] * np.cos(r.q[-1, 2]) + r.qd[-1, 1] * np.sin(r.q[-1, 2])
    assert u_end == pytest.approx(speed(10.0), rel=1e-8)


def test_skate_on_inclined_plane_drifts_across_the_slope():
    gp, w = 1.5, 2.0
    model = knife_edge(mass=1.0, inertia=0.05, gravity=(gp, 0.0, -9.0))
    u0 = 0.5
    t = np.linspace(0.0, 10.0, 201)
    r = simulate(model, (0.0, 10.0), np.zeros(3), [u0, 0.0, w], t_eval=t, **TIGHT)
    th = w * t
    cst = u0  # c = u0 − (g'/ω) sin θ0, θ0 = 0
    x = cst / w * np.sin(th) + gp * np.sin(th) ** 2 / (2 * w**2)
    y = -cst / w * (np.cos(th) - 1.0) + gp / w**2 * (th / 2 - np.sin(2 * th) / 4)
    ref = np.stack([x, y, th], axis=1)
    assert np.abs(r.q - ref).max() <= 1e-8
    assert r.velocity_residual.max() <= 1e-10
    assert np.ptp(_energy(model, r)) <= 1e-8
    assert r.q[-1, 1] > 1.0 and abs(r.q[-1, 0]) < 0.5  # across the slope, not down it


@pytest.mark.parametrize("method", ["direct", "range_space", "null_space"])
def test_steered_skate_mixes_holonomic_and_velocity_rows(method):
    """A prescribed heading (rheonomic, holonomic) with the no-slip row: a circle."""
    model = knife_edge(mass=1.5, inertia=0.05)
    w, u = 0.8, 1.2
    steer = PrescribedCoordinate("heading", (lambda t: 0.1 + w * t, lambda t: w + 0 * t,
                                             lambda t: 0 * t))  # fmt: skip
    cs = ConstraintSet([steer, *model.constraints])
    assert cs.row_names(model) == ["prescribed_heading[0]", "no_slip[0]"]
    assert cs.holonomic_part().constraints == [steer]
    q0 = np.array([0.0, 0.0, 0.1])
    qd0 = np.array([u * np.cos(0.1), u * np.sin(0.1), w]) + 0.01  # slightly off: projected
    t = np.linspace(0.0, 10.0, 101)
    r = simulate(model, (0.0, 10.0), q0, qd0, constraints=cs, t_eval=t,
                 constraint_method=method, **TIGHT)  # fmt: skip
    assert r.position_residual.max() <= 1e-10
    assert r.velocity_residual.max() <= 1e-10
    u1 = r.qd[0, 0] * np.cos(0.1) + r.qd[0, 1] * np.sin(0.1)  # the projected speed
    th = 0.1 + w * t
    ref = np.stack([u1 / w * (np.sin(th) - np.sin(0.1)),
                    -u1 / w * (np.cos(th) - np.cos(0.1)), th], axis=1)  # fmt: skip
    assert np.abs(r.q - ref).max() <= 1e-8
    # the multipliers: heading torque 0 (a = 0), lateral force m u ω
    assert np.abs(r.lam[:, 0]).max() <= 1e-9
    assert np.abs(r.lam[:, 1] - 1.5 * u1 * w).max() <= 1e-8


@pytest.mark.parametrize("analytic", [True, False])
def test_single_state_path_equals_general_path(analytic):
    """The lean single-state path (simulate's right-hand side and projection) against the
    batched general path, with holonomic rows (rheonomic) mixed in and Baumgarte terms."""
    model = knife_edge(mass=1.5, inertia=0.05, offset=0.1)
    blade = model.constraints[0]
    if not analytic:
        blade = VelocityConstraint(blade.A, lambda t, q: [0.05 * q[0]], name="drifting")
    steer = PrescribedCoordinate("heading", lambda t: 0.3 * np.sin(t))
    cs = ConstraintSet([steer, blade])
    rng = np.random.default_rng(11)
    q, qd, tau, t = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), 0.7
    for bg in (None, (2.0, 3.0)):
        lean = _LeanConstrained.build(model, cs, "direct", bg)
        assert lean is not None
        x, lam = lean(t, q, qd, tau)
        x_ref, lam_ref = constrained_forward_dynamics(model, q[None], qd[None], tau[None], cs,
                                                      t=t, baumgarte=bg)  # fmt: skip
        assert np.allclose(x, x_ref[0], atol=1e-10) and np.allclose(lam, lam_ref[0], atol=1e-10)
    qp, vp = lean.project(t, q, qd, 1e-13)
    q_ref = project_positions(model, q, cs, t=t, tol=1e-13)
    v_ref = project_velocities(model, q_ref, qd, cs, t=t)
    assert np.allclose(qp, q_ref, atol=1e-12) and np.allclose(vp, v_ref, atol=1e-12)
    assert qp[2] == pytest.approx(0.3 * np.sin(t), abs=1e-13)  # the velocity row: no say
    assert np.abs(ConstraintSet([blade]).assemble(model, qp, vp, t=t).G @ vp
                  - blade._b_one(model, t, qp)).max() <= 1e-14  # fmt: skip


def test_projections_and_baumgarte():
    model = rolling_disk(radius=R, mass=MASS)
    c = model.constraints[0]
    q = np.array([0.2, 0.1, 0.7, 0.3, 1.1])
    qd = np.array([0.5, -0.4, 1.0, 0.2, 3.0])
    # positions: nothing to project (no position-level equation)
    assert np.array_equal(project_positions(model, q, None), q)
    # velocities: argmin ½ (v − q̇)ᵀ H (v − q̇) with A v = 0 (closed form)
    v = project_velocities(model, q, qd, None)
    H, A = crba(model, q), c.matrices(model, q[None])[0][0]
    Hi = np.linalg.inv(H)
    ref = qd - Hi @ A.T @ np.linalg.solve(A @ Hi @ A.T, A @ qd)
    assert np.allclose(v, ref, atol=1e-12)
    assert np.abs(A @ v).max() <= 1e-14
    # Baumgarte: A q̈ = γ − 2α (A q̇ − b)
    alpha = 3.0
    qdd, _ = constrained_forward_dynamics(model, q, qd, None, None, baumgarte=(alpha, 5.0))
    gamma = ConstraintSet(model.constraints).gamma(model, q, qd)
    assert np.allclose(A @ qdd, gamma - 2 * alpha * (A @ qd), atol=1e-12)


def test_bad_input_names_the_argument(tmp_path):
    model = knife_edge()
    q, qd = np.zeros(3), np.ones(3)

    def fd(c):
        return constrained_forward_dynamics(model, q, qd, None, [c])

    with pytest.raises(DataError, match="`A`.*shape"):
        fd(VelocityConstraint(lambda t, q: np.ones((1, 4))))
    with pytest.raises(DataError, match="`A`.*shape"):
        fd(VelocityConstraint(lambda t, q: np.ones((1, 3)), size=2))
    with pytest.raises(DataError, match="`b`.*shape"):
        fd(VelocityConstraint(lambda t, q: np.ones((1, 3)), lambda t, q: [0.0, 1.0]))
    with pytest.raises(DataError, match="`A`.*non-finite"):
        fd(VelocityConstraint(lambda t, q: [[np.nan, 1.0, 0.0]], size=1))
    with pytest.raises(DataError, match="`b`.*non-finite"):
        fd(VelocityConstraint(np.ones((1, 3)), lambda t, q: [np.inf]))
    with pytest.raises(DataError, match="`gamma`.*shape"):
        fd(VelocityConstraint(np.ones((1, 3)), gamma=lambda t, q, qd: [1.0, 2.0]))
    with pytest.raises(DataError, match="`gamma`.*non-finite"):
        fd(VelocityConstraint(np.ones((1, 3)), gamma=lambda t, q, qd: [np.nan]))
    with pytest.raises(DataError, match="`A`.*matrix"):
        fd(VelocityConstraint(lambda t, q: [1.0, 0.0, 0.0]))
    with pytest.raises(DataError, match="`A`.*shape"):
        fd(VelocityConstraint(np.ones((1, 2))))
    # a function singular at the neutral configuration is fine where it is defined
    ok = VelocityConstraint(lambda t, q: [[1.0 / q[2], 0.0, 0.0]])
    with np.errstate(divide="ignore"):  # the rows are counted at q = 0
        lam = constrained_forward_dynamics(model, [0, 0, 1.0], [0, 1.0, 1.0], None, [ok])[1]
    assert lam.shape == (1,)
    with pytest.raises(DataError, match="`A`.*numbers"):
        fd(VelocityConstraint(lambda t, q: "abc"))
    with pytest.raises(DataError, match="`A`"):
        VelocityConstraint(np.ones(3))
    with pytest.raises(DataError, match="`gamma`"):
        VelocityConstraint(np.ones((1, 3)), gamma=np.ones(1))
    with pytest.raises(DataError, match="`A` and `b`"):
        VelocityConstraint(np.ones((1, 3)), np.zeros(2))
    with pytest.raises(DataError, match="size"):
        VelocityConstraint(np.ones((1, 3)), size=0)
    with pytest.raises(AhbmError, match="A"):  # during a simulation, at the state it fails
        simulate(model, (0, 1), q, qd, constraints=[VelocityConstraint(
            lambda t, q: [[1.0, 0.0, 0.0 if t < 0.5 else np.nan]])])  # fmt: skip
    with pytest.raises(ModelError, match="cannot be stored"):
        save_model(model, tmp_path / "skate.json")
