"""Scale a model by segment scale factors, as OpenSim's Scale tool does.

- :func:`segment_scale_factors` computes per-body, per-axis scale factors from
  marker-pair distances in a static trial (OpenSim's *measurements*) and manual
  factors; :func:`measurement_scale_factors` gives the factor of each measurement.
- :func:`scale_segments` scales a model by per-body factors as OpenSim's
  ``Model::scale`` does: joint frames, child offsets, translation functions of
  custom joints, centres of mass, markers, inertias and masses;
  :func:`scale_inertia` scales one body's mass and inertia.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import (
    as_float_array,
    as_nonnegative_float,
    check_inertia,
    check_model,
)
from ahbm.errors import AhbmWarning, DataError, ModelError
from ahbm.types import ResultRepr

__all__ = [
    "Measurement",
    "SegmentScales",
    "measurement_scale_factors",
    "segment_scale_factors",
    "scale_segments",
    "scale_inertia",
]

_AXES = {"X": 0, "Y": 1, "Z": 2}
#: SimTK's default tolerance of isNumericallyEqual for double (eps ** (7/8)).
_SIGNIFICANT = np.finfo(float).eps ** 0.875
_GROUND = "ground"


@dataclass(frozen=True)
class Measurement:
    """A scale measurement: marker pairs whose mean distance ratio scales body axes.

    OpenSim's ``<Measurement>`` of a ``ModelScaler``: the factor is the mean,
    over the marker pairs, of (distance in the static trial) / (distance on
    the generic model); it is written into the named axes of the named bodies.

    Parameters
    ----------
    name : str
        Measurement name (for reports).
    marker_pairs : sequence of (str, str)
        Marker pairs (model and trial use the same marker names).
    body_axes : dict or sequence of (str, str)
        ``{body: axes}`` with ``axes`` a string of the letters X, Y, Z (e.g.
        ``"XYZ"``, ``"Y"``), the body axes that get the factor.
    apply : bool, optional
        False disables the measurement (OpenSim's ``<apply>``).

    Examples
    --------
    >>> m = Measurement("thigh", [("R.ASIS", "R.Knee.Lat")], {"femur_r": "XYZ"})
    >>> m.body_axes
    (('femur_r', 'XYZ'),)
    """

    name: str
    marker_pairs: tuple
    body_axes: tuple
    apply: bool = True

    def __post_init__(self):
        name = str(self.name)
        pairs = []
        for pair in self.marker_pairs:
            try:
                a, b = pair
            except (TypeError, ValueError) as err:
                raise DataError(
                    f"measurement '{name}': a marker pair must be two marker names, got {pair!r}"
                ) from err
            if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
                raise DataError(
                    f"measurement '{name}': marker names must be non-empty strings, got {pair!r}"
                )
            pairs.append((a, b))
        items = self.body_axes.items() if isinstance(self.body_axes, dict) else self.body_axes
        axes = []
        for item in items:
            try:
                body, letters = item
            except (TypeError, ValueError) as err:
                raise DataError(
                    f"measurement '{name}': body_axes items must be (body, axes), got {item!r}"
                ) from err
            letters = "".join(str(letters).split()).upper()
            if not letters or any(c not in _AXES for c in letters):
                raise DataError(
                    f"measurement '{name}': axes of body '{body}' must be letters X, Y, Z "
                    f"(e.g. 'XYZ'), got {letters!r}"
                )
            axes.append((str(body), letters))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "marker_pairs", tuple(pairs))
        object.__setattr__(self, "body_axes", tuple(axes))
        object.__setattr__(self, "apply", bool(self.apply))


@dataclass(frozen=True, repr=False)
class SegmentScales(ResultRepr):
    """Result of :func:`segment_scale_factors` (a frozen result object).

    Attributes
    ----------
    factors : dict
        ``{body name: ndarray (3,)}`` scale factors along the body's x, y, z
        axes, for every body of the model (1 where nothing scaled it), and
        ``"ground"`` if a measurement or manual scale named it.
    measurement_factors : dict
        ``{measurement name: factor}`` of the applied measurements (NaN for a
        measurement that could not be taken and was not used).
    pair_lengths : dict
        ``{measurement name: ndarray (n_pairs, 2)}``: model and trial distance
        of each marker pair, m.
    """

    factors: dict
    measurement_factors: dict = field(default_factory=dict)
    pair_lengths: dict = field(default_factory=dict)


def _marker_array(markers, marker_names, what="markers"):
    """(n_frames, n_markers, 3) array and names from an array or a dict of arrays."""
    if isinstance(markers, dict):
        if marker_names is not None:
            raise DataError(f"give `marker_names` only with an array `{what}`, not with a dict")
        names = [str(n) for n in markers]
        arrays = []
        for n in markers:
            a = as_float_array(markers[n], f"{what}['{n}']", allow_nan=True)
            if a.ndim == 1:
                a = a[None]
            if a.ndim != 2 or a.shape[1] != 3:
                raise DataError(
                    f"Expected `{what}['{n}']` to have shape (n_frames, 3), got {a.shape}"
                )
            arrays.append(a)
        if len({a.shape[0] for a in arrays}) > 1:
            raise DataError(f"the arrays of `{what}` must all have the same number of frames")
        X = np.stack(arrays, axis=1) if arrays else np.zeros((1, 0, 3))
    else:
        X = as_float_array(markers, what, allow_nan=True)
        if X.ndim == 2:
            X = X[None]
        if marker_names is None:
            raise DataError(f"give `marker_names` (one per column of `{what}`)")
        names = [str(n) for n in marker_names]
        if X.ndim != 3 or X.shape[1:] != (len(names), 3):
            raise DataError(
                f"Expected `{what}` to have shape (n_frames, {len(names)}, 3), got {X.shape}"
            )
    if len(set(names)) != len(names):
        raise DataError(f"`{what}` names a marker twice: {names}")
    if X.shape[0] == 0:
        raise DataError(f"`{what}` has no frames")
    return X, names


def _model_marker_positions(model, q):
    """World positions of the model's markers at one configuration: names, (m, 3)."""
    from ahbm.kinematics.configuration import check_q, neutral_q
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.kinematics.marker_model import model_markers

    found = model_markers(model)
    q = neutral_q(model) if q is None else check_q(model, q, "q")
    if np.shape(q) != (model.nq,):
        raise DataError(f"Expected `q` to have shape ({model.nq},), got {np.shape(q)}")
    kin = forward_kinematics(model, q)
    R = kin.rotations[found.bodies]
    p = kin.positions[found.bodies]
    return found.names, np.einsum("mij,mj->mi", R, found.local) + p


def measurement_scale_factors(
    model, markers, measurements, *, marker_names=None, q=None, return_lengths=False
):
    """Scale factor of each measurement: mean ratio of trial to model marker distances.

    Parameters
    ----------
    model : Model
        The generic model; its markers carry the measurements' marker names.
    markers : array_like, shape (n_frames, n_markers, 3), or dict
        Static-trial marker positions, m (the frames of the time range; NaN
        for a missing marker). A dict maps names to ``(n_frames, 3)`` arrays.
    measurements : sequence of Measurement
    marker_names : sequence of str, optional
        Names of the columns of an array `markers`.
    q : array_like, shape (nq,), optional
        Pose of the model for its distances (default: the neutral
        configuration; OpenSim uses the coordinates' default values).
    return_lengths : bool, optional
        Also return ``{name: ndarray (n_pairs, 2)}`` of model and trial lengths.

    Returns
    -------
    dict
        ``{measurement name: factor}`` for the applied measurements (NaN
        where a pair has no data in some frame, as in OpenSim, which then
        does not use the measurement). With ``return_lengths`` a tuple
        ``(factors, lengths)``.

    Raises
    ------
    DataError
        A marker of a pair is missing from the model or from `markers`, or a
        model distance is zero.

    Notes
    -----
    As OpenSim's ``ModelScaler::computeMeasurementScaleFactor``: for pair
    ``k`` the trial length is the mean over the frames of ``|x_b - x_a|``
    and the model length ``|p_b(q) - p_a(q)|``; the factor is
    ``(1/K) sum_k trial_k / model_k``.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("a", "ground", "fixed", markers={"M1": [0, 0, 0], "M2": [0, 0, 0.4]})
    >>> x = {"M1": np.zeros((2, 3)), "M2": np.array([[0, 0, 0.5], [0, 0, 0.5]])}
    >>> measurement_scale_factors(m, x, [Measurement("a", [("M1", "M2")], {"a": "XYZ"})])
    {'a': 1.25}
    """
    X, names = _marker_array(markers, marker_names)
    model_names, P = _model_marker_positions(model, q)
    out, lengths = {}, {}
    _check_measurements(measurements)
    for meas in measurements:
        if not isinstance(meas, Measurement):
            raise DataError(f"`measurements` must hold Measurement objects, got {type(meas)}")
        if not meas.apply:
            continue
        if not meas.marker_pairs:
            warnings.warn(
                f"measurement '{meas.name}' has no marker pairs and is not used",
                AhbmWarning,
                stacklevel=2,
            )
            out[meas.name] = math.nan
            continue
        ratios, rows = [], []
        for a, b in meas.marker_pairs:
            for n in (a, b):
                if n not in model_names:
                    raise DataError(
                        f"measurement '{meas.name}': marker '{n}' is not on model "
                        f"'{model.name}' (model markers: {model_names})"
                    )
                if n not in names:
                    raise DataError(
                        f"measurement '{meas.name}': marker '{n}' is not in the static trial "
                        f"(trial markers: {names})"
                    )
            ml = float(np.linalg.norm(P[model_names.index(b)] - P[model_names.index(a)]))
            if ml == 0.0:
                raise DataError(
                    f"measurement '{meas.name}': markers '{a}' and '{b}' coincide on the model; "
                    "a pair needs two distinct model markers"
                )
            d = X[:, names.index(b)] - X[:, names.index(a)]
            tl = float(np.mean(np.linalg.norm(d, axis=-1)))
            ratios.append(tl / ml)
            rows.append((ml, tl))
        factor = float(np.sum(ratios) / len(ratios))
        if math.isnan(factor):
            warnings.warn(
                f"measurement '{meas.name}': a marker of its pairs is missing in some frame of "
                "the static trial; the measurement is not used (as in OpenSim)",
                AhbmWarning,
                stacklevel=2,
            )
        out[meas.name] = factor
        lengths[meas.name] = np.array(rows, dtype=float)
    return (out, lengths) if return_lengths else out


def _factor3(value, what):
    a = as_float_array(value, what)
    if a.ndim == 0:
        a = np.full(3, float(a))
    if a.shape != (3,):
        raise DataError(f"Expected `{what}` to be a number or have shape (3,), got {a.shape}")
    return a


def _check_measurements(measurements) -> None:
    if isinstance(measurements, (str, bytes, dict)) or not hasattr(measurements, "__iter__"):
        raise DataError(
            f"Expected `measurements` to be a list of Measurement, got "
            f"{type(measurements).__name__}"
        )


def segment_scale_factors(
    model,
    markers=None,
    measurements=(),
    *,
    marker_names=None,
    manual=None,
    order=("measurements", "manual"),
    q=None,
) -> SegmentScales:
    """Per-body, per-axis scale factors from measurements and manual scales.

    Parameters
    ----------
    model : Model
        The generic model.
    markers : array_like or dict, optional
        Static-trial markers for the measurements (see
        :func:`measurement_scale_factors`); needed when `measurements` is
        used.
    measurements : sequence of Measurement, optional
    marker_names : sequence of str, optional
        Names of the columns of an array `markers`.
    manual : dict, optional
        ``{body: factor or (3,) factors}`` (OpenSim's manual ``<ScaleSet>``).
    order : sequence of {"measurements", "manual"}, optional
        The order of the steps (OpenSim's ``<scaling_order>``); a later step
        overwrites the factors an earlier one set. ``"manualScale"`` is
        accepted for ``"manual"``.
    q : array_like, shape (nq,), optional
        Pose of the model for the model distances (default neutral).

    Returns
    -------
    SegmentScales
        ``factors`` (every body, 1 where not scaled), ``measurement_factors``
        and ``pair_lengths``.

    Raises
    ------
    DataError
        Bad factors, an unknown step in `order`, measurements without markers.

    Warns
    -----
    AhbmWarning
        A measurement or manual scale names a body that is not in the model
        (OpenSim ignores it too), or a measurement cannot be taken.

    Notes
    -----
    As OpenSim's ``ModelScaler::processModel``: all factors start at 1; a
    measurement writes its factor into the listed axes of the listed bodies
    (``Measurement::applyScaleFactor``), a manual scale replaces the three
    factors of its body.

    Examples
    --------
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("a", "ground", "fixed")
    >>> segment_scale_factors(m, manual={"a": [1.0, 1.1, 1.2]}).factors["a"]
    array([1. , 1.1, 1.2])
    """
    check_model(model)
    if isinstance(order, (str, bytes, dict)) or not hasattr(order, "__iter__"):
        raise DataError(f"Expected `order` to be a list of steps, got {order!r}")
    measurements = () if measurements is None else measurements
    _check_measurements(measurements)
    if manual is not None and not isinstance(manual, dict):
        raise DataError(
            f"Expected `manual` to be a dict {{body: factor(s)}}, got {type(manual).__name__}"
        )
    names = list(model.body_names)
    factors = {b: np.ones(3) for b in names}
    meas_out, lengths = {}, {}
    steps = []
    for step in order:
        key = {"measurements": "measurements", "manual": "manual", "manualscale": "manual"}.get(
            str(step).lower()
        )
        if key is None:
            raise DataError(
                f"`order` has the unknown step {step!r}; use 'measurements' and/or 'manual' "
                "(OpenSim's 'manualScale')"
            )
        steps.append(key)
    unknown = set()

    def put(body, axes, value):
        if body not in factors and body != _GROUND:
            unknown.add(body)
            return
        f = factors.setdefault(body, np.ones(3))
        f[list(axes)] = value

    for step in steps:
        if step == "measurements":
            active = [m for m in measurements if isinstance(m, Measurement) and m.apply]
            if len(active) != sum(1 for m in measurements if getattr(m, "apply", True)):
                raise DataError("`measurements` must hold Measurement objects")
            if not active:
                continue
            if markers is None:
                raise DataError(
                    "measurements are used but no static-trial `markers` were given "
                    "(OpenSim: marker_file not set but measurements are used)"
                )
            mf, ln = measurement_scale_factors(
                model, markers, active, marker_names=marker_names, q=q, return_lengths=True
            )
            meas_out.update(mf)
            lengths.update(ln)
            for m in active:
                value = mf[m.name]
                if math.isnan(value):
                    continue
                for body, letters in m.body_axes:
                    put(body, [_AXES[c] for c in letters], value)
        else:
            for body, value in dict(manual or {}).items():
                put(str(body), [0, 1, 2], _factor3(value, f"manual['{body}']"))
    if unknown:
        warnings.warn(
            f"scale factors for bodies {sorted(unknown)} that model '{model.name}' does not "
            "have are ignored (as in OpenSim)",
            AhbmWarning,
            stacklevel=2,
        )
    return SegmentScales(factors, meas_out, lengths)


def _numerically_equal(a: float, b: float) -> bool:
    """SimTK's isNumericallyEqual with the default tolerance."""
    return abs(a - b) <= max(abs(a), abs(b), 1.0) * _SIGNIFICANT


def scale_inertia(mass, inertia, factors, *, scale_mass: bool = True):
    """Scale a body's mass and inertia by per-axis factors as OpenSim does.

    Parameters
    ----------
    mass : float
        Body mass, kg.
    inertia : array_like, shape (3, 3)
        Inertia about the COM in body axes, kg m^2.
    factors : array_like, shape (3,)
        Scale factors along the body's x, y, z axes.
    scale_mass : bool, optional
        Scale the mass by ``|sx sy sz|`` (volume); False keeps it.

    Returns
    -------
    mass : float
    inertia : ndarray, shape (3, 3)

    Notes
    -----
    OpenSim's ``Body::scaleInertialProperties``: with equal factors ``s``,
    ``I' = m'/m s^2 I``. Otherwise the body is taken as a cylinder along the
    axis ``a`` of the smallest principal moment: radius
    ``r^2 = 2 I_aa / m``, length ``L^2 = 12 (I_oo - m r^2 / 4) / m`` (``o``
    the first other axis); then ``L' = s_a L``, ``r'^2 = r^2 s_b s_c`` and
    ``I'_aa = m' r'^2 / 2``, ``I'_bb = I'_cc = m' (L'^2/12 + r'^2/4)``; the
    products are scaled by ``s_i s_j`` (and ``m'/m``). A mass below machine
    epsilon gives a zero inertia.

    Examples
    --------
    >>> import numpy as np
    >>> m, inertia = scale_inertia(2.0, np.diag([1.0, 2.0, 3.0]), [2.0, 2.0, 2.0])
    >>> m, np.diag(inertia)
    (16.0, array([32., 64., 96.]))
    """
    s = _factor3(factors, "factors")
    I0 = as_float_array(inertia, "inertia")
    if I0.shape != (3, 3):
        raise DataError(f"Expected `inertia` to have shape (3, 3), got {I0.shape}")
    check_inertia(I0)
    m0 = as_nonnegative_float(mass, "mass", unit="kg")
    k = float(abs(s[0] * s[1] * s[2]))
    m = m0 * k if scale_mass else m0
    inertia = I0.copy()
    if m <= np.finfo(float).eps:
        return m, inertia * 0.0
    if _numerically_equal(s[0], s[1]) and _numerically_equal(s[1], s[2]):
        if scale_mass:
            inertia = inertia * k
        return m, inertia * (s[0] * s[0])
    d = np.diag(inertia)
    if d[0] <= d[1]:
        axis = 0 if d[0] <= d[2] else 2
    elif d[1] <= d[2]:
        axis = 1
    else:
        axis = 2
    term = 2.0 * d[axis] / m0
    radius = math.sqrt(term) if term >= 0.0 else 0.0
    oa = 1 if axis == 0 else 0
    term = 12.0 * (d[oa] - 0.25 * m0 * radius * radius) / m0
    length = math.sqrt(term) if term >= 0.0 else 0.0
    length *= s[axis]
    b, c = [i for i in range(3) if i != axis]
    rad_sqr = radius * s[b] * radius * s[c]
    side = m * ((length * length / 12.0) + 0.25 * rad_sqr)
    inertia[axis, axis] = 0.5 * m * rad_sqr
    inertia[b, b] = side
    inertia[c, c] = side
    for i in range(3):
        for j in range(3):
            if i != j:
                inertia[i, j] *= s[i] * s[j]
                if scale_mass:
                    inertia[i, j] *= k
    return m, inertia


def _scale_transform(joint: dict, s_parent: np.ndarray, body: str) -> None:
    """Scale the translation functions of a custom joint dict in place (OpenSim's rule)."""
    from ahbm.kinematics.functions import LinearFunction, as_function

    items = joint.get("transform")
    if not isinstance(items, list) or len(items) != 6:
        raise ModelError(f"body '{body}': a custom joint needs a 'transform' of 6 items")
    for k in range(3, 6):
        item = items[k]
        fn = item.get("function") if isinstance(item, dict) else None
        if fn is None:
            continue
        f = as_function(fn, f"body '{body}': transform[{k}] function")
        if isinstance(f, LinearFunction) and f.slope == 1.0 and f.intercept == 0.0:
            continue  # a translational degree of freedom: OpenSim does not scale it
        axis = np.abs(np.asarray(item.get("axis", (0.0, 0.0, 0.0)), dtype=float))
        item["function"] = f.scaled(float(axis @ s_parent)).to_dict()


def scale_segments(model, factors, *, mass=None, preserve_mass_distribution: bool = False):
    """Return a copy of `model` scaled by per-body factors, as OpenSim's Scale tool does.

    Parameters
    ----------
    model : Model
        The model (not modified).
    factors : dict
        ``{body name: factor or (3,) factors}`` along the body's x, y, z
        axes; bodies not listed keep factor 1. ``"ground"`` scales the joint
        frames placed on the ground (OpenSim's ground frame).
    mass : float, optional
        Total mass of the scaled model, kg: after the step below every body's
        mass and inertia are multiplied by ``mass / total`` (OpenSim's
        subject mass). None keeps the masses of that step.
    preserve_mass_distribution : bool, optional
        False (default): each body's mass is scaled by its volume factor
        ``|sx sy sz|``; True: masses are not scaled by the factors (only
        by `mass`), inertias by the lengths only.

    Returns
    -------
    Model
        The scaled model.

    Raises
    ------
    ModelError
        A factor names an unknown body; the masses sum to zero with `mass`.
    DataError
        Bad factor values or `mass`.

    Notes
    -----
    As OpenSim's ``Model::scale``, with ``s_b`` the factors of body ``b`` and
    ``p`` its parent:

    - the joint frame (OpenSim's parent offset frame) ``position`` is scaled
      element-wise by ``s_p``, the child offset (``child_origin.position``) by
      ``s_b``;
    - the translation functions of a custom joint (``transform[3:6]``) become
      ``(|axis| . s_p) f`` through :meth:`Function.scaled
      <ahbm.kinematics.functions.Function.scaled>`, except a
      ``LinearFunction(1, 0)`` (a translational coordinate);
    - the COM and the markers of ``b`` are scaled by ``s_b``;
    - mass and inertia by :func:`scale_inertia` (volume scaling of the mass
      unless `preserve_mass_distribution`); then, with `mass`, all masses and
      inertias by ``mass / sum(masses)``.

    Rotations of joint frames, joint axes and rotation functions are not
    changed. Drawing geometry and the constraints section are kept as they are.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.kinematics.tree import Model
    >>> m = Model()
    >>> _ = m.add_body("thigh", "ground", {"type": "revolute", "axis": [0, 1, 0]},
    ...                mass=8.0, com=[0, 0, -0.2], inertia=np.diag([0.1, 0.1, 0.02]),
    ...                markers={"knee": [0, 0, -0.4]})
    >>> _ = m.add_body("shank", "thigh", {"type": "revolute", "axis": [0, 1, 0]},
    ...                position=[0, 0, -0.4], mass=3.0, com=[0, 0, -0.2],
    ...                inertia=np.diag([0.04, 0.04, 0.005]))
    >>> s = scale_segments(m, {"thigh": 1.1}, mass=12.0)
    >>> s.bodies[1].position.round(3), s.bodies[0].markers["knee"].round(3)
    (array([ 0.  ,  0.  , -0.44]), array([ 0.  ,  0.  , -0.44]))
    >>> round(s.total_mass, 9)
    12.0
    """
    if not hasattr(model, "to_dict") or not hasattr(model, "bodies"):
        raise DataError("`model` must be an ahbm.kinematics.tree.Model")
    if not isinstance(factors, dict):
        raise DataError(f"`factors` must be a dict {{body: factors}}, got {type(factors)}")
    names = list(model.body_names)
    s = {}
    for b, v in factors.items():
        if b not in names and b != _GROUND:
            raise ModelError(
                f"`factors` names body {b!r}, which is not in model '{model.name}'; bodies: {names}"
            )
        s[b] = _factor3(v, f"factors['{b}']")
    one = np.ones(3)
    data = model.to_dict()
    for body in data["bodies"]:
        b = body["name"]
        sb = s.get(b, one)
        sp = s.get(body["parent"], one)
        origin = body.setdefault("origin", {})
        origin["position"] = (np.asarray(origin.get("position", (0, 0, 0)), float) * sp).tolist()
        child = body.get("child_origin")
        if child is not None and "position" in child:
            child["position"] = (np.asarray(child["position"], float) * sb).tolist()
        if body["joint"].get("type") == "custom":
            _scale_transform(body["joint"], sp, b)
        body["com"] = (np.asarray(body.get("com", (0, 0, 0)), float) * sb).tolist()
        if body.get("markers"):
            body["markers"] = {
                k: (np.asarray(v, float) * sb).tolist() for k, v in body["markers"].items()
            }
        inertia = body.get("inertia")
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, float)
        m_new, i_new = scale_inertia(
            body["mass"], inertia, sb, scale_mass=not preserve_mass_distribution
        )
        body["mass"] = m_new
        body["inertia"] = i_new.tolist()
    if mass is not None:
        from ahbm._internal.validation import as_positive_float

        target = as_positive_float(mass, "mass", unit="kg")
        total = sum(float(body["mass"]) for body in data["bodies"])
        if not total > 0.0:
            raise ModelError(
                f"model '{model.name}' has no mass to scale to {target} kg; give the bodies "
                "masses or leave `mass` out"
            )
        k = target / total
        for body in data["bodies"]:
            body["mass"] = float(body["mass"]) * k
            body["inertia"] = (np.asarray(body["inertia"], float) * k).tolist()
    _scale_sections(data, s)
    return type(model).from_dict(data, source=f"scale_segments({model.name})")


def _is_vec3(v) -> bool:
    return (
        isinstance(v, list)
        and len(v) == 3
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    )


def _scale_location_function(value, factor: float):
    """A MovingPathPoint's location function (OpenSim XML as JSON) times `factor`."""
    wrapped = isinstance(value, list)
    f = value[0] if wrapped and len(value) == 1 else value
    if not isinstance(f, dict) or "type" not in f:
        return value
    if f.get("type") == "MultiplierFunction":
        out = {**f, "scale": float(f.get("scale", 1.0)) * factor}
    else:
        out = {"type": "MultiplierFunction", "function": [f] if wrapped else f, "scale": factor}
    return [out] if wrapped else out


def _scale_points(node, s: dict) -> None:
    """Scale, in place, the body-fixed points of OpenSim objects kept as JSON.

    Path points (``PathPoint``, ``ConditionalPathPoint``: ``location``),
    moving path points (their ``x/y/z_location`` functions, wrapped in a
    ``MultiplierFunction`` as OpenSim does) and wrap objects (``translation``)
    that name their ``body`` move with that body's factors; the
    ``scale_factors`` of a body's ``attached_geometry`` (display meshes) are
    multiplied by them (OpenSim's ``Frame::extendScale``).
    """
    if isinstance(node, list):
        for item in node:
            _scale_points(item, s)
        return
    if not isinstance(node, dict):
        return
    body, typ = node.get("body"), str(node.get("type", ""))
    frame = node.get("socket_parent_frame")
    if body is None and isinstance(frame, str) and frame.startswith("/bodyset/"):
        body = frame[len("/bodyset/") :]
    if isinstance(body, str) and body in s:
        f = s[body]
        if typ.endswith("PathPoint") and _is_vec3(node.get("location")):
            node["location"] = (np.asarray(node["location"], float) * f).tolist()
        if typ == "MovingPathPoint":
            for k, axis in enumerate("xyz"):
                key = f"{axis}_location"
                if key in node and node[key] is not None:
                    node[key] = _scale_location_function(node[key], float(f[k]))
                spec = node.get(axis)  # ahbm.muscles.MovingPathPoint: {coordinate, function}
                if isinstance(spec, dict) and isinstance(spec.get("function"), dict):
                    spec["function"] = _scale_location_function(spec["function"], float(f[k]))
        wrap = typ.startswith("Wrap") or node.get("kind") in ("cylinder", "sphere", "ellipsoid")
        if wrap and _is_vec3(node.get("translation")):  # OpenSim's or ahbm.muscles.WrapObject
            node["translation"] = (np.asarray(node["translation"], float) * f).tolist()
        for geom in node.get("attached_geometry") or ():  # display geometry of the body
            if isinstance(geom, dict) and _is_vec3(geom.get("scale_factors")):
                geom["scale_factors"] = (np.asarray(geom["scale_factors"], float) * f).tolist()
    for value in node.values():
        if isinstance(value, (dict, list)):
            _scale_points(value, s)


def _scale_sections(data: dict, s: dict) -> None:
    """Scale body-fixed points held in the model-file sections (in place).

    The constraints section holds no body-fixed geometry that OpenSim scales
    (coordinate couplers); the other sections (e.g. the ``"opensim"`` data of
    :func:`ahbm.opensim.read_osim`) are searched for path points and wrap objects.
    """
    for key, items in data.items():
        if key in ("format", "version", "name", "gravity", "bodies", "constraints"):
            continue
        _scale_points(items, s)
