"""Smooth foot–ground contact of OpenSim models: read from ``.osim`` or placed on the feet.

:func:`osim_smooth_contacts` turns the ``SmoothSphereHalfSpaceForce``
elements of a model read by :func:`~ahbm.opensim.osim.read_osim` (kept in
its ``"opensim"`` section with their ``ContactSphere`` and
``ContactHalfSpace`` geometry) into
:class:`~ahbm.dynamics.smooth_contact.SmoothSphereContact` force elements;
:func:`opensim_foot_spheres` places the contact spheres of Falisse et al.
(2019) on the calcaneus and toes of a gait2392-like model.

References
----------
A. Falisse et al., "Rapid predictive simulations with complex
musculoskeletal models suggest that diverse healthy and pathological human
gaits can emerge from similar control strategies", *J. R. Soc. Interface* 16
(2019) 20190402 (six contact spheres per foot, radius 0.032 m).
"""

from __future__ import annotations

import warnings

import numpy as np

from ahbm.dynamics.smooth_contact import (
    HuntCrossleySphereContact,
    SmoothContactParameters,
    SmoothSphereContact,
)
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.kinematics.tree import Model
from ahbm.opensim._osim_values import _euler_xyz, _xyz_angles
from ahbm.opensim.osim_section import OSIM_SECTION, OsimItem

__all__ = [
    "osim_smooth_contacts",
    "add_osim_smooth_contacts",
    "opensim_foot_spheres",
    "FALISSE_FOOT_SPHERES",
    "FALISSE_MTP",
    "FALISSE_RADIUS",
]

_PARAMETER_KEYS = ("stiffness", "dissipation", "static_friction", "dynamic_friction",
                   "viscous_friction", "transition_velocity", "constant_contact_force",
                   "hertz_smoothing", "hunt_crossley_smoothing")  # fmt: skip

#: Contact spheres of the right foot of Falisse et al. (2019) (their OpenSim
#: model's ``sphere_1_r`` ... ``sphere_6_r``): ``(body, centre (m, body frame))``;
#: radius 0.032 m each. The model's ``toes`` frame is at ``FALISSE_MTP``
#: (m) in the ``calcn`` frame; the left foot mirrors z.
FALISSE_FOOT_SPHERES = (
    ("calcn", (0.00190115788407966, -0.021859, -0.00382630379623308)),
    ("calcn", (0.148386399942063, -0.021859, -0.028713422052654)),
    ("calcn", (0.133001170607051, -0.021859, 0.0516362473449566)),
    ("toes", (0.06, -0.0214476, -0.0187603084619177)),
    ("calcn", (0.0662346661991635, -0.021859, 0.0263641606741698)),
    ("toes", (0.045, -0.0214476, 0.0618569567549652)),
)
#: Origin of the right toes frame in the calcaneus frame of Falisse et al.'s model, m.
FALISSE_MTP = (0.16341, -0.0018278, 0.00098704)
#: Radius of their contact spheres, m.
FALISSE_RADIUS = 0.032


def _geometry(items: dict, path, force: str, kind: str) -> dict:
    if not isinstance(path, str) or not path:
        raise ModelError(f"SmoothSphereHalfSpaceForce {force!r}: no {kind} socket")
    name = path.rstrip("/").rsplit("/", 1)[-1]
    g = items.get(name)
    if g is None:
        raise ModelError(
            f"SmoothSphereHalfSpaceForce {force!r}: its {kind} {path!r} is not a contact "
            f"geometry of the model (known: {sorted(items)})"
        )
    return g


def _hunt_crossley(model: Model, f: dict, geometry: dict, skipped: list) -> list:
    """HuntCrossleySphereContact elements of the sphere–half-space pairs of a HuntCrossleyForce."""
    name = f.get("name", "contact")
    pset = f.get("HuntCrossleyForce::ContactParametersSet") or {}
    groups = []
    for k, cp in enumerate(pset.get("objects") or []):
        names = str(cp.get("geometry") or "").split()
        params = {"stiffness": float(cp.get("stiffness", 0.0)),
                  "dissipation": float(cp.get("dissipation", 0.0)),
                  "static_friction": float(cp.get("static_friction", 0.0)),
                  "dynamic_friction": float(cp.get("dynamic_friction", 0.0)),
                  "viscous_friction": float(cp.get("viscous_friction", 0.0))}  # fmt: skip
        for g in names:
            if g not in geometry:
                raise ModelError(f"HuntCrossleyForce {name!r}: contact parameters {k} name "
                                 f"{g!r}, which is not a contact geometry of the model "
                                 f"(known: {sorted(geometry)})")  # fmt: skip
            groups.append((g, params))
    vt = float(f.get("transition_velocity", 0.01))
    out = []
    spheres = [(g, p) for g, p in groups if geometry[g].get("type") == "ContactSphere"]
    halves = [(g, p) for g, p in groups if geometry[g].get("type") == "ContactHalfSpace"]
    pairs = [(s, h) for s in spheres for h in halves
             if geometry[s[0]].get("body") != geometry[h[0]].get("body")]  # fmt: skip
    for (sname, sp), (hname, hp) in pairs:
        if sp != hp:  # Simbody combines unequal materials (and moves the contact point)
            skipped.append(f"HuntCrossleyForce {name!r}: {sname}-{hname} (unequal materials)")
            continue
        sph, half = geometry[sname], geometry[hname]
        R = _euler_xyz(half.get("orientation", (0.0, 0.0, 0.0)))
        label = name if len(pairs) == 1 else f"{name}.{sname}.{hname}"
        out.append(HuntCrossleySphereContact(
            sph.get("body"), sph.get("location", (0.0, 0.0, 0.0)), float(sph.get("radius", 0.0)),
            plane_body=half.get("body", "ground"), plane_point=half.get("location", (0.0,) * 3),
            plane_normal=-R[:, 0], name=label,
            parameters=SmoothContactParameters(transition_velocity=vt, **sp),
        ))  # fmt: skip
    kinds = {geometry[g].get("type") for g, _ in groups}
    if kinds - {"ContactSphere", "ContactHalfSpace"} or len(spheres) > 1:
        skipped.append(f"HuntCrossleyForce {name!r}: pairs other than sphere-half-space")
    return out


def osim_smooth_contacts(model: Model, *, include_disabled: bool = False) -> list:
    """The contact spheres of a model read from an ``.osim`` file, as force elements.

    Parameters
    ----------
    model : Model
        From :func:`ahbm.opensim.read_osim` (its ``"opensim"`` section).
    include_disabled : bool, optional
        Also forces with ``appliesForce`` false (default: only those OpenSim applies).

    Returns
    -------
    list of SmoothSphereContact
        In file order: one per ``SmoothSphereHalfSpaceForce``, named like it,
        and a :class:`~ahbm.dynamics.smooth_contact.HuntCrossleySphereContact`
        per sphere–half-space pair of a ``HuntCrossleyForce`` (named like the
        force, or ``<force>.<sphere>.<half-space>`` when it has several
        pairs; both geometries with the same contact parameters, OpenSim's
        stiffness being the plane-strain modulus ``E`` here too). Each has
        the sphere's body, centre (its ``ContactSphere`` location in the body frame) and radius,
        the half-space's body, point (its location) and outward normal
        ``−R x`` (``R`` its orientation, body-fixed X-Y-Z angles; OpenSim's
        half-space fills ``x > 0`` of its frame), and the force's nine
        parameters (:class:`~ahbm.dynamics.SmoothContactParameters`).

    Raises
    ------
    ModelError
        A force names a geometry the model does not have or of the wrong kind,
        or a body the model does not have.

    Warns
    -----
    AhbmWarning
        Contacts that are not converted: ``ElasticFoundationForce`` elements,
        and pairs of a ``HuntCrossleyForce`` other than sphere–half-space or
        between geometries with different contact parameters (Simbody
        combines unequal materials); the warning names them.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> osim_smooth_contacts(Model())  # no "opensim" section, no contacts
    []
    """
    if not isinstance(model, Model):
        raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
    section = model.section(OSIM_SECTION)
    geometry = {it.get("name"): it.data for it in section if it.kind == "contact_geometry"}
    out: list = []
    skipped = [f"{it.get('type')} {it.get('name')!r}" for it in section if it.kind == "force"
               and it.get("type") == "ElasticFoundationForce"]  # fmt: skip
    for it in section:
        kind = it.get("type") if it.kind == "force" else None
        if kind not in ("SmoothSphereHalfSpaceForce", "HuntCrossleyForce"):
            continue
        f = it.data
        if not include_disabled and f.get("appliesForce", True) in (False, "false", 0):
            continue
        if kind == "HuntCrossleyForce":
            out += _hunt_crossley(model, f, geometry, skipped)
        else:
            out.append(_smooth_sphere(model, f, geometry))
    if skipped:
        warnings.warn(
            f"model '{model.name}': {len(skipped)} contact force(s) or pair(s) are not "
            f"converted: {'; '.join(skipped)}; model them with SmoothSphereContact",
            AhbmWarning, stacklevel=2,
        )  # fmt: skip
    return out


def _smooth_sphere(model: Model, f: dict, geometry: dict) -> SmoothSphereContact:
    name = f.get("name", "contact")
    sphere = _geometry(geometry, f.get("socket_sphere"), name, "sphere")
    half = _geometry(geometry, f.get("socket_half_space"), name, "half_space")
    if sphere.get("type") != "ContactSphere" or half.get("type") != "ContactHalfSpace":
        raise ModelError(
            f"SmoothSphereHalfSpaceForce {name!r}: expected a ContactSphere and a "
            f"ContactHalfSpace, got {sphere.get('type')} and {half.get('type')}"
        )
    defaults = SmoothContactParameters()
    params = {k: float(f.get(k, getattr(defaults, k))) for k in _PARAMETER_KEYS}
    R = _euler_xyz(half.get("orientation", (0.0, 0.0, 0.0)))
    for g in (sphere, half):
        b = g.get("body", "ground")
        if b != "ground" and b not in model.body_names:
            raise ModelError(
                f"SmoothSphereHalfSpaceForce {name!r}: contact geometry {g.get('name')!r} "
                f"is on {b!r}, which is not a body of model '{model.name}'"
            )
    return SmoothSphereContact(
        sphere.get("body"), sphere.get("location", (0.0, 0.0, 0.0)),
        float(sphere.get("radius", 0.0)), plane_body=half.get("body", "ground"),
        plane_point=half.get("location", (0.0, 0.0, 0.0)), plane_normal=-R[:, 0],
        name=name, parameters=SmoothContactParameters(**params),
    )  # fmt: skip


def _frame_with_x(x) -> np.ndarray:
    """A rotation whose first column is the unit vector `x` (z kept near the world z)."""
    x = np.asarray(x, float) / np.linalg.norm(x)
    for up in (np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])):
        z = up - (up @ x) * x
        if np.linalg.norm(z) > 1e-6:
            z /= np.linalg.norm(z)
            return np.column_stack([x, np.cross(z, x), z])
    raise AssertionError("unreachable: x cannot be parallel to both z and y")


def _body_path(body) -> str:
    return "/ground" if body in ("ground", -1) else f"/bodyset/{body}"


def add_osim_smooth_contacts(model: Model, contacts) -> None:
    """Put contact spheres into a model's ``"opensim"`` section, for ``write_osim``.

    Parameters
    ----------
    model : Model
        Changed in place: each contact becomes a ``ContactSphere``
        (``<name>_sphere``) and a ``SmoothSphereHalfSpaceForce`` (``<name>``),
        the half-spaces one ``ContactHalfSpace`` per distinct plane
        (``floor`` for the first on the ground, ``half_space_<k>`` for the
        others), so that :func:`~ahbm.opensim.osim_write.write_osim` writes
        them and OpenSim applies them; :func:`osim_smooth_contacts` reads
        them back.
    contacts : sequence of SmoothSphereContact
        With body names (not indices).

    Raises
    ------
    DataError
        `contacts` holds something else, or a name that the model's section
        already uses for a force or contact geometry.

    Notes
    -----
    The half-space's frame has its x axis along the inward normal ``−n``
    (OpenSim's half-space fills ``x > 0``) and its origin at the plane point.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("ball", "ground", "free", mass=1.0)
    >>> add_osim_smooth_contacts(m, [SmoothSphereContact("ball", [0, 0, 0], 0.05,
    ...                                                  plane_normal=[0, 1, 0])])
    >>> [c.name for c in osim_smooth_contacts(m)]
    ['sphere_ball']
    """
    if not isinstance(model, Model):
        raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
    if isinstance(contacts, SmoothSphereContact):
        contacts = [contacts]
    items = list(model.section(OSIM_SECTION))
    used = {it.get("name") for it in items if it.kind in ("force", "contact_geometry")}
    planes: dict = {}
    new_geometry, new_forces = [], []
    for i, c in enumerate(contacts):
        if not isinstance(c, SmoothSphereContact):
            raise DataError(f"contacts[{i}] is {type(c).__name__}, not a SmoothSphereContact")
        c.validate(model)
        for nm in (c.name, f"{c.name}_sphere"):
            if nm in used:
                raise DataError(f"the model already has a force or contact geometry named "
                                f"{nm!r}; rename the contact")  # fmt: skip
            used.add(nm)
        body, hbody = (model.body_names[b] if not isinstance(b, str) else b
                       for b in (c.body, c.plane_body))  # fmt: skip
        hbody = "ground" if hbody == -1 else hbody
        key = (hbody, tuple(np.round(c.plane_point, 15)), tuple(np.round(c.plane_normal, 15)))
        if key not in planes:
            name = "floor" if hbody == "ground" and "floor" not in used else None
            name = name or next(f"half_space_{k}" for k in range(1, 10**6)
                                if f"half_space_{k}" not in used)  # fmt: skip
            used.add(name)
            planes[key] = name
            new_geometry.append({
                "type": "ContactHalfSpace", "name": name, "socket_frame": _body_path(hbody),
                "location": [float(v) + 0.0 for v in c.plane_point],
                "orientation": _xyz_angles(_frame_with_x(-c.plane_normal)), "body": hbody,
            })  # fmt: skip
        new_geometry.append({
            "type": "ContactSphere", "name": f"{c.name}_sphere", "socket_frame": _body_path(body),
            "location": [float(v) + 0.0 for v in c.center], "orientation": [0.0, 0.0, 0.0],
            "radius": float(c.radius), "body": body,
        })  # fmt: skip
        force = {"type": "SmoothSphereHalfSpaceForce", "name": c.name, "appliesForce": True,
                 "socket_sphere": f"/contactgeometryset/{c.name}_sphere",
                 "socket_half_space": f"/contactgeometryset/{planes[key]}"}  # fmt: skip
        force.update({k: float(getattr(c.parameters, k)) for k in _PARAMETER_KEYS})
        new_forces.append(force)
    items += [OsimItem._own("force", f) for f in new_forces]
    items += [OsimItem._own("contact_geometry", g) for g in new_geometry]
    model.set_section(OSIM_SECTION, items)


def opensim_foot_spheres(model: Model, *, sides=("r", "l"), calcaneus="calcn_{side}",
                         toes="toes_{side}", parameters=None, up=None, height=0.0,
                         **options) -> list:  # fmt: skip
    """Six contact spheres per foot on the calcaneus and toes of an OpenSim (gait2392-like) model.

    Parameters
    ----------
    model : Model
        With bodies named by `calcaneus` and `toes` (``{side}`` replaced by each side).
    sides : sequence of str, optional
        ``"r"`` and/or ``"l"`` (the left foot mirrors z, OpenSim's lateral axis).
    calcaneus, toes : str, optional
        Body-name patterns.
    parameters : SmoothContactParameters, optional
        Default: those of Falisse et al. (2019), the defaults of the class.
    up : array_like, shape (3,), optional
        Outward ground normal in the world frame; default ``−gravity``
        direction (``+y`` for OpenSim models).
    height : float, optional
        Ground height along `up`, m.
    **options
        Contact parameters overriding `parameters` (``stiffness=`` ...).

    Returns
    -------
    list of SmoothSphereContact
        ``sphere_<k>_<side>`` for k = 1..6 (Falisse et al.'s numbering).

    Notes
    -----
    The centres and radius are :data:`FALISSE_FOOT_SPHERES` (Falisse et al.
    2019, their model's ``sphere_1_r`` ... ``sphere_6_r``), scaled by the
    ratio ``s`` of the model's calcaneus-to-toes distance (the toes body's
    origin in the calcaneus frame) to theirs (``|FALISSE_MTP|`` = 0.1634 m);
    radii are ``0.032 s`` m. The toes spheres are re-expressed in the
    model's toes frame through the mtp joint's offset (translation only; a
    rotated mtp frame raises ModelError).

    Examples
    --------
    >>> import ahbm.opensim, warnings  # doctest: +SKIP
    >>> m = ahbm.opensim.read_osim("subject01.osim")  # doctest: +SKIP
    >>> len(opensim_foot_spheres(m))  # doctest: +SKIP
    12
    """
    if not isinstance(model, Model):
        raise ModelError(f"`model` must be an ahbm Model, got {type(model).__name__}")
    if isinstance(sides, str):
        sides = (sides,)
    g = np.asarray(model.gravity, float)
    if up is None:
        if np.linalg.norm(g) == 0:
            raise DataError("the model has no gravity: give the ground normal as `up`")
        up = -g / np.linalg.norm(g)
    up = np.asarray(up, float)
    ref = np.linalg.norm(FALISSE_MTP)
    out = []
    for side in sides:
        if side not in ("r", "l"):
            raise DataError(f"`sides` holds 'r' and/or 'l', got {side!r}")
        cal, toe = calcaneus.format(side=side), toes.format(side=side)
        for b in (cal, toe):
            if b not in model.body_names:
                raise ModelError(f"model '{model.name}' has no body {b!r} (the {side} foot); "
                                 "pass `calcaneus=`/`toes=` name patterns")  # fmt: skip
        it = model.body_index(toe)
        if model.parent[it] != model.body_index(cal):
            raise ModelError(f"body {toe!r} is not a child of {cal!r}")
        if not np.allclose(model.rotations[it], np.eye(3), atol=1e-9):
            raise ModelError(f"the joint frame of {toe!r} in {cal!r} is rotated; give the "
                             "spheres with SmoothSphereContact instead")  # fmt: skip
        mtp = np.asarray(model.positions[it], float)
        s = np.linalg.norm(mtp) / ref
        mirror = np.array([1.0, 1.0, 1.0 if side == "r" else -1.0])
        for k, (body, c) in enumerate(FALISSE_FOOT_SPHERES, start=1):
            centre = s * np.asarray(c) * mirror
            if body == "toes":  # theirs in their toes frame -> ours
                centre = centre + s * np.asarray(FALISSE_MTP) * mirror - mtp
            out.append(SmoothSphereContact(
                cal if body == "calcn" else toe, centre, FALISSE_RADIUS * s,
                parameters=parameters, plane_point=height * up, plane_normal=up,
                name=f"sphere_{k}_{side}", **options,
            ))  # fmt: skip
    return out
