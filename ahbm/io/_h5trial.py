"""One trial of the HDF5 trial store: its group, written and read (internal).

:func:`_write_trial_group` writes a :class:`~ahbm.io.trial.Trial` as
``/trials/<name>/`` (datasets with units, force plates, events, the generic
trees of :mod:`ahbm.io._h5tree`); :func:`_read_trial_group` reads it back
through the checks of :mod:`ahbm.io._h5safe`. The layout is in
``docs/hdf5-schema.md``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from ahbm.errors import DataError
from ahbm.io._h5safe import SafeStore
from ahbm.io._h5tree import _encode_name, _read_tree, _write_array, _write_strings, _write_tree
from ahbm.io.trial import Event, ForcePlate, Trial

__all__ = []


_TRIAL_FIELDS = tuple(f.name for f in dataclasses.fields(Trial))  # every Trial field
#: The fields of format 1.0, read from their own items (``extra/`` never sets them).
_CORE_FIELDS = frozenset(
    "points point_labels point_rate point_units point_descriptions point_residuals point_mask "
    "analogs analog_labels analog_units analog_descriptions analog_rate first_frame "
    "force_plates events subject parameters results source".split()
)
_PLATE_ARRAYS = {
    "force": ("N", "force on the plate, lab frame, (n_samples, 3)"),
    "moment": ("N m", "moment about the plate origin, lab frame, (n_samples, 3)"),
    "cop": ("m", "centre of pressure, lab frame, (n_samples, 3)"),
    "free_moment": ("N m", "free torque about the COP, lab frame, (n_samples, 3)"),
    "corners": ("m", "plate corners, lab frame, (4, 3)"),
    "origin": ("m", "plate origin, lab frame, (3,)"),
}


# ----------------------------------------------------------------------------- trial groups


def _write_result_units(results, units, where: str) -> None:
    """Set the ``units`` attribute of result datasets: ``units[(key, subkey, ...)] = "m"``."""
    for keys, unit in units.items():
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        obj = results
        for k in keys:
            link = _encode_name(str(k))
            if not hasattr(obj, "keys") or link not in obj:
                raise DataError(
                    f"`result_units` names {where}/{'/'.join(map(str, keys))}, which is not in "
                    "trial.results; give units only for stored results"
                )
            obj = obj[link]
        if hasattr(obj, "keys"):
            raise DataError(
                f"`result_units` names the group {where}/{'/'.join(map(str, keys))}; "
                "units belong to datasets"
            )
        obj.attrs["units"] = str(unit)


def _write_trial_group(parent, name: str, trial: Trial) -> None:
    g = parent.create_group(name, track_order=True)
    g.attrs["ahbm_kind"] = "trial"
    g.attrs["point_rate"] = float(trial.point_rate)
    g.attrs["point_units"] = str(trial.point_units)
    g.attrs["analog_rate"] = float(trial.analog_rate)
    g.attrs["first_frame"] = int(trial.first_frame)
    g.attrs["source"] = str(trial.source)
    if trial.point_kinds:
        # model outputs (angles, moments, ...) among the points: {label: [kind, unit]}
        g.attrs["point_kinds"] = json.dumps(
            {str(k): [str(v[0]), str(v[1])] for k, v in trial.point_kinds.items()}
        )

    pts = np.asarray(trial.points, dtype=np.float64)
    if pts.ndim != 3 or pts.shape[2] != 3:
        raise DataError(
            f"Expected `trial.points` to have shape (n_frames, n_points, 3), got {pts.shape}"
        )
    if len(trial.point_labels) != pts.shape[1]:
        raise DataError(
            f"`trial.point_labels` has {len(trial.point_labels)} labels for {pts.shape[1]} points"
        )
    _write_array(
        g,
        "points",
        pts,
        units=str(trial.point_units),
        description="marker trajectories (n_frames, n_points, 3), NaN = missing",
    )
    _write_strings(g, "point_labels", trial.point_labels)
    _write_strings(g, "point_descriptions", trial.point_descriptions)
    if trial.point_residuals is not None:
        _write_array(
            g,
            "point_residuals",
            np.asarray(trial.point_residuals, dtype=np.float64),
            units=str(trial.point_units),
            description="residuals (n_frames, n_points)",
        )
    if trial.point_mask is not None:
        _write_array(
            g,
            "point_mask",
            np.asarray(trial.point_mask, dtype=bool),
            description="True where the sample was valid (n_frames, n_points)",
        )
    an = np.asarray(trial.analogs, dtype=np.float64)
    if an.ndim != 2:
        raise DataError(
            f"Expected `trial.analogs` to have shape (n_samples, n_channels), got {an.shape}"
        )
    _write_array(
        g,
        "analogs",
        an,
        description="analog channels (n_samples, n_channels); units per channel in analog_units",
    )
    _write_strings(g, "analog_labels", trial.analog_labels)
    _write_strings(g, "analog_units", trial.analog_units)
    _write_strings(g, "analog_descriptions", trial.analog_descriptions)

    fp_group = g.create_group("force_plates", track_order=True)
    fp_group.attrs["count"] = len(trial.force_plates)
    for i, fp in enumerate(trial.force_plates):
        pg = fp_group.create_group(str(i), track_order=True)
        pg.attrs["rate"] = float(fp.rate)
        pg.attrs["plate_type"] = int(fp.plate_type)
        for key, (units, desc) in _PLATE_ARRAYS.items():
            _write_array(
                pg,
                key,
                np.asarray(getattr(fp, key), dtype=np.float64),
                units=units,
                description=desc,
            )

    ev = g.create_group("events", track_order=True)
    _write_strings(ev, "label", [e.label for e in trial.events])
    _write_array(
        ev,
        "time",
        np.array([e.time for e in trial.events], dtype=np.float64),
        units="s",
        description="seconds from the start of the recording",
    )
    _write_strings(ev, "context", [e.context for e in trial.events])
    _write_strings(ev, "description", [e.description for e in trial.events])

    _write_tree(g, "subject", dict(trial.subject), "trial.subject")
    _write_tree(g, "parameters", dict(trial.parameters), "trial.parameters")
    _write_tree(g, "results", dict(trial.results), "trial.results")
    extra = {
        f.name: getattr(trial, f.name)
        for f in dataclasses.fields(trial)
        if f.name not in _TRIAL_FIELDS
    }
    _write_tree(g, "extra", extra, "trial")


def _read_trial_group(st: SafeStore, g, where: str) -> Trial:
    """The Trial in group `g`; every shape is checked against the counts it implies."""

    def ds(parent, name, pwhere, required=True):
        return st.child(parent, name, f"{pwhere}/{name}", kind="dataset", required=required)

    rates = {}
    for key in ("point_rate", "analog_rate"):
        rates[key] = st.attr(g, key, where, "float")
        if not (np.isfinite(rates[key]) and rates[key] >= 0):
            raise st.error(where, f"attribute {key!r} is {rates[key]!r}; expected a rate >= 0 Hz")
    pts_ds = ds(g, "points", where)
    shape = st.check_dataset(pts_ds, f"{where}/points", kinds="fiu", shape=(None, None, 3))
    n_frames, n_points = shape[:2]
    kwargs: dict[str, Any] = {
        "point_labels": st.strings(
            ds(g, "point_labels", where), f"{where}/point_labels", n=n_points
        ),
        "point_descriptions": st.strings(
            ds(g, "point_descriptions", where),
            f"{where}/point_descriptions",
            n=n_points,
            allow_empty=True,
        ),
        "points": st.array(pts_ds, f"{where}/points", kinds="fiu", dtype=np.float64),
        "point_units": st.attr(g, "point_units", where, "str"),
        "first_frame": st.attr(g, "first_frame", where, "int"),
        "source": st.attr(g, "source", where, "str"),
        **rates,
    }
    kwargs["point_kinds"] = _read_point_kinds(st, g, where, kwargs["point_labels"])
    per_frame = (n_frames, n_points)
    res = ds(g, "point_residuals", where, required=False)
    kwargs["point_residuals"] = (
        None
        if res is None
        else st.array(res, f"{where}/point_residuals", kinds="fiu", shape=per_frame)
    )
    mask = ds(g, "point_mask", where, required=False)
    kwargs["point_mask"] = (
        None
        if mask is None
        else st.array(mask, f"{where}/point_mask", kinds="biu", shape=per_frame).astype(bool)
    )
    an_ds = ds(g, "analogs", where)
    n_samples, n_channels = st.check_dataset(an_ds, f"{where}/analogs", kinds="fiu", ndim=2)
    for key in ("analog_labels", "analog_units", "analog_descriptions"):
        kwargs[key] = st.strings(
            ds(g, key, where),
            f"{where}/{key}",
            n=n_channels,
            allow_empty=key != "analog_labels" or n_samples == 0,
        )
    kwargs["analogs"] = st.array(an_ds, f"{where}/analogs", kinds="fiu", dtype=np.float64)
    return Trial(
        **kwargs,
        force_plates=_read_plates(st, g, where),
        events=_read_events(st, g, where),
        subject=_read_dict(st, g, "subject", where),
        parameters=_read_dict(st, g, "parameters", where),
        results=_read_dict(st, g, "results", where),
    )


def _read_point_kinds(st: SafeStore, g, where: str, labels) -> dict:
    """The ``point_kinds`` attribute ({label: [kind, unit]}, JSON) checked against the labels."""
    text = st.attr(g, "point_kinds", where, "str", required=False, default=None)
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise st.error(where, f"attribute 'point_kinds' is not valid JSON ({err})") from None
    known = set(labels)
    if not isinstance(value, dict) or not all(
        isinstance(k, str)
        and k in known
        and isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, str) for x in v)
        for k, v in value.items()
    ):
        raise st.error(
            where,
            "attribute 'point_kinds' must map point labels to [kind, unit] string pairs",
        )
    return {k: (v[0], v[1]) for k, v in value.items()}


def _read_dict(st: SafeStore, g, key: str, where: str, *, required: bool = True) -> dict:
    obj = st.child(g, key, f"{where}/{key}", required=required)
    if obj is None:
        return {}
    value = _read_tree(st, obj, f"{where}/{key}", 1)
    if not isinstance(value, dict):
        raise st.error(f"{where}/{key}", f"holds a {type(value).__name__}; expected a dict")
    return value


def _read_plates(st: SafeStore, g, where: str) -> list[ForcePlate]:
    fwhere = f"{where}/force_plates"
    fpg = st.child(g, "force_plates", fwhere, kind="group")
    count = st.attr(fpg, "count", fwhere, "int", required=False, default=None)
    if count is None:
        count = len(st.names(fpg, fwhere))
    if count < 0:
        raise st.error(fwhere, f"attribute 'count' is {count}; expected the number of plates")
    plates = []
    for i in range(count):
        pwhere = f"{fwhere}/{i}"
        pg = st.child(fpg, str(i), pwhere, kind="group")
        rate = st.attr(pg, "rate", pwhere, "float")
        if not (np.isfinite(rate) and rate >= 0):
            raise st.error(pwhere, f"attribute 'rate' is {rate!r}; expected a rate >= 0 Hz")
        arrays, n = {}, None
        for key in _PLATE_ARRAYS:
            want = {"corners": (4, 3), "origin": (3,)}.get(key, (n, 3))
            child = st.child(pg, key, f"{pwhere}/{key}", kind="dataset")
            arrays[key] = st.array(
                child, f"{pwhere}/{key}", kinds="fiu", shape=want, dtype=np.float64
            )
            n = arrays[key].shape[0] if key == "force" else n
        plates.append(
            ForcePlate(**arrays, rate=rate, plate_type=st.attr(pg, "plate_type", pwhere, "int"))
        )
    return plates


def _read_events(st: SafeStore, g, where: str) -> list[Event]:
    ewhere = f"{where}/events"
    ev = st.child(g, "events", ewhere, kind="group")
    time_ds = st.child(ev, "time", f"{ewhere}/time", kind="dataset")
    (n,) = st.check_dataset(time_ds, f"{ewhere}/time", kinds="fiu", ndim=1)
    cols = {
        key: st.strings(
            st.child(ev, key, f"{ewhere}/{key}", kind="dataset"), f"{ewhere}/{key}", n=n
        )
        for key in ("label", "context", "description")
    }
    times = st.array(time_ds, f"{ewhere}/time", kinds="fiu", dtype=np.float64)
    return [
        Event(label=lab, time=float(t), context=c, description=d)
        for lab, t, c, d in zip(
            cols["label"], times, cols["context"], cols["description"], strict=True
        )
    ]


def _read_extra(st: SafeStore, g, where: str, trial: Trial) -> None:
    """Set the fields stored under ``extra/`` that this version knows (not the core ones)."""
    names = {f.name for f in dataclasses.fields(trial)} - _CORE_FIELDS
    for k, v in _read_dict(st, g, "extra", where, required=False).items():
        if k in names:  # fields unknown to this version are ignored
            setattr(trial, k, v)
