"""The model-file dictionary: the registry of its sections and the conversion of a model.

A model file (JSON, version 1, specified in :mod:`ahbm.kinematics.tree`) owns
all of a model: its bodies, joints, markers and geometry, and the top-level
*sections* that other layers define (``"constraints"`` today, read by
:mod:`ahbm.dynamics.constraints`; ``"muscles"`` and ``"contacts"`` will come
the same way). A section is registered with
:func:`~ahbm.kinematics.model_file.register_model_section` by the package that
owns its classes, because the kinematics layer may not import the layers above
it. The owners of the toolbox's own sections are listed by name in
``_SECTION_OWNERS`` (a plugin table, not an import) and imported on the first
read or write of a model file, so a model file always knows them and
``import ahbm`` stays light. Nothing is reserved or dropped silently: an entry
of a file that no reader understands, or a section whose reader is not
registered, is a :class:`~ahbm.errors.ModelError` that names the entry and the
file.

This module sits below :mod:`ahbm.kinematics.tree` (whose ``Model.to_dict``,
``Model.from_dict`` and section attributes use it) and
:mod:`ahbm.kinematics.model_file` (reading and writing files); it imports
neither.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ahbm.errors import DataError, FileFormatError, ModelError
from ahbm.kinematics.joints import _GROUND

__all__ = ["ModelSection", "model_sections", "model_to_dict"]

#: Top-level entries of a model file that this module reads itself.
_BASE_ENTRIES = ("format", "version", "name", "gravity", "bodies")
_BODY_FIELDS = (
    "name", "parent", "joint", "origin", "child_origin", "mass", "com", "inertia", "markers",
    "geometry",
)  # fmt: skip
_ORIGIN_FIELDS = ("position", "rotation")


@dataclass(frozen=True)
class ModelSection:
    """How one top-level section of a model file is read, written and checked.

    Attributes
    ----------
    key : str
        The file entry and the model attribute (``model.section(key)``).
    read : callable
        ``read(items, model, source) -> sequence``: objects from the file's
        list ``items`` (``source`` names the file for error messages),
        validated against the model whose bodies are already loaded.
    write : callable
        ``write(objects) -> list``: the JSON list of the objects.
    check : callable
        ``check(objects, model) -> sequence``: validates objects assigned in
        code (``model.set_section``) or kept across ``model.update_body``.
    owner : str
        The module that registered it (for error messages).
    """

    key: str
    read: Callable
    write: Callable
    check: Callable
    owner: str


_SECTIONS: dict[str, ModelSection] = {}


#: Modules of the toolbox that register model-file sections when imported. They are
#: imported by name on the first use of the sections: the kinematics layer may not
#: import them, and ``import ahbm`` must not pay for them.
_SECTION_OWNERS = (
    "ahbm.kinematics.geometry",
    "ahbm.dynamics.constraints",
    "ahbm.muscles.path_elements",
)


def _osim_section(name):
    """A section function of ahbm.opensim.osim_section, imported on its first call."""

    def call(*args):
        return getattr(importlib.import_module("ahbm.opensim.osim_section"), name)(*args)

    return call


def _import_section_owners() -> None:
    """Register the toolbox's own sections (import their owners once)."""
    for name in _SECTION_OWNERS:
        if name not in sys.modules:
            importlib.import_module(name)
    if "opensim" not in _SECTIONS:
        _SECTIONS["opensim"] = ModelSection(
            "opensim",
            _osim_section("_read_section"),
            _osim_section("_write_section"),
            _osim_section("_check_section"),
            "ahbm.opensim.osim_section",
        )


def _registered() -> dict[str, ModelSection]:
    """The registered sections, without importing their owners."""
    return _SECTIONS


def model_sections() -> tuple[str, ...]:
    """Names of the registered model-file sections, e.g. ``('constraints',)``."""
    _import_section_owners()
    return tuple(_SECTIONS)


def section_spec(key: str) -> ModelSection:
    """The registered :class:`ModelSection` of `key` (ModelError if none)."""
    _import_section_owners()
    try:
        return _SECTIONS[key]
    except KeyError:
        raise ModelError(
            f"no model-file section {key!r} is registered (registered: {list(_SECTIONS)}); "
            "import the package that defines it (ahbm.dynamics for 'constraints')"
        ) from None


def model_to_dict(model) -> dict:
    """The JSON model-file dictionary (version 1) of `model` (a ``Model``), with its sections."""
    _import_section_owners()
    bodies = []
    for x in model.bodies:
        j = {"type": x.joint.type}
        if x.joint.axis is not None:
            j["axis"] = x.joint.axis.tolist()
        if x.joint.sequence is not None:
            j["sequence"] = x.joint.sequence
        if x.joint.transform is not None:
            j["transform"] = [ax.to_dict() for ax in x.joint.transform]
        j["name"] = x.joint.name
        j["coordinates"] = list(x.joint.coordinates)
        limits = x.joint.limits
        if limits is not None:
            j["limits"] = limits
        d = {
            "name": x.name,
            "parent": _GROUND if x.parent < 0 else model.bodies[x.parent].name,
            "joint": j,
            "origin": {"position": x.position.tolist(), "rotation": x.rotation.tolist()},
        }
        if x.has_child_offset:
            d["child_origin"] = {
                "position": x.child_position.tolist(),
                "rotation": x.child_rotation.tolist(),
            }
        d |= {
            "mass": x.mass,
            "com": x.com.tolist(),
            "inertia": x.inertia.tolist(),
        }
        if x.markers:
            d["markers"] = {k: v.tolist() for k, v in x.markers.items()}
        geometry = x.geometry
        if geometry is not None:
            d["geometry"] = geometry
        bodies.append(d)
    data = {
        "format": "ahbm-model",
        "version": 1,
        "name": model.name,
        "gravity": model.gravity.tolist(),
        "bodies": bodies,
    }
    for key, items in model._sections.items():
        if items:
            data[key] = list(section_spec(key).write(items))
    return data


def _reject_unknown(entry: dict, fields, where: str) -> None:
    """ModelError naming the fields of `entry` that are not in `fields`."""
    unknown = sorted(str(f) for f in set(entry) - set(fields))
    if unknown:
        raise ModelError(f"{where} has unknown fields {unknown}; known fields: {list(fields)}")


def _short(value) -> str:
    """A value for a message, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_names(data: dict, bodies: list, source: str) -> None:
    """Types of the model name and of every body's name and parent, before they are used."""
    name = data.get("name", "model")
    if not isinstance(name, str):
        raise ModelError(f"{source}: 'name' must be a string, got {_short(name)}")
    for k, b in enumerate(bodies):
        if not isinstance(b, dict):
            raise ModelError(f"{source}: body #{k} must be an object, got {type(b).__name__}")
        bname = b.get("name")
        if not isinstance(bname, str) or not bname:
            raise ModelError(
                f"{source}: body #{k}: 'name' must be a non-empty string, got {_short(bname)}"
            )
        parent = b.get("parent")
        if parent is not None and (not isinstance(parent, str) or not parent):
            raise ModelError(
                f"{source}: body '{bname}': 'parent' must be the name of an earlier body or "
                f'"{_GROUND}", got {_short(parent)}'
            )


def _build_model(data: dict, *, source: str, cls):
    """A `cls` (``Model``) with its sections, from a model-file dictionary."""
    _import_section_owners()
    if not isinstance(data, dict):
        raise FileFormatError(f"{source}: expected a JSON object, got {type(data).__name__}")
    if data.get("format") != "ahbm-model":
        raise FileFormatError(
            f"{source}: 'format' must be \"ahbm-model\", got {data.get('format')!r}"
        )
    if data.get("version") != 1:
        raise FileFormatError(
            f"{source}: unsupported model-file version {data.get('version')!r} "
            "(this ahbm reads version 1)"
        )
    for key in data:
        if key not in _BASE_ENTRIES and key not in _SECTIONS:
            if key in ("constraints", "muscles", "contacts"):
                raise ModelError(
                    f"{source}: the model file has a {key!r} section but no reader for it is "
                    f"registered (registered: {list(_SECTIONS)}); import ahbm (or the package "
                    "that defines it) before loading, rather than losing it"
                )
            raise ModelError(
                f"{source}: unknown top-level entry {key!r}; a model file has the entries "
                f"{list(_BASE_ENTRIES)} and the registered sections {list(_SECTIONS)}"
            )
    bodies = data.get("bodies")
    if not isinstance(bodies, list):
        raise ModelError(f"{source}: 'bodies' must be a list of body objects")
    _check_nesting(data, source)
    _check_names(data, bodies, source)
    try:
        model = cls(data.get("name", "model"), data.get("gravity", (0.0, 0.0, -9.81)))
    except ModelError as err:
        raise ModelError(f"{source}: {err}") from err
    names = [b.get("name") if isinstance(b, dict) else None for b in bodies]
    parents = {b.get("name"): b.get("parent") for b in bodies if isinstance(b, dict)}
    for k, b in enumerate(bodies):
        if not isinstance(b, dict):
            raise ModelError(f"{source}: body #{k} must be an object")
        bname = b.get("name")
        parent = b.get("parent")
        if parent is None:
            raise ModelError(
                f"{source}: body '{bname}' has no 'parent' (use \"ground\" for a root)"
            )
        if parent != _GROUND and parent not in model._index and parent != bname:
            if parent in names:
                # listed later: cycle or wrong order
                seen, cur = {bname}, parent
                while cur in parents and cur != _GROUND:
                    if cur in seen:
                        raise ModelError(
                            f"{source}: body '{bname}' is part of a cycle of parents "
                            f"through '{cur}'; a model must be a tree"
                        )
                    seen.add(cur)
                    cur = parents[cur]
                raise ModelError(
                    f"{source}: body '{bname}' is listed before its parent '{parent}'; "
                    "list parents first"
                )
        for key in ("joint", "mass"):
            if key not in b:
                raise ModelError(f"{source}: body '{bname}' has no '{key}' field")
        _reject_unknown(b, _BODY_FIELDS, f"{source}: body '{bname}'")
        origin = b.get("origin", {}) or {}
        if not isinstance(origin, dict):
            raise ModelError(f"{source}: body '{bname}': 'origin' must be an object")
        _reject_unknown(origin, _ORIGIN_FIELDS, f"{source}: body '{bname}': 'origin'")
        child = b.get("child_origin", {}) or {}
        if not isinstance(child, dict):
            raise ModelError(f"{source}: body '{bname}': 'child_origin' must be an object")
        _reject_unknown(child, _ORIGIN_FIELDS, f"{source}: body '{bname}': 'child_origin'")
        try:
            model.add_body(
                bname,
                parent,
                b["joint"],
                position=origin.get("position", (0.0, 0.0, 0.0)),
                rotation=origin.get("rotation"),
                mass=b["mass"],
                com=b.get("com", (0.0, 0.0, 0.0)),
                inertia=b.get("inertia"),
                markers=b.get("markers"),
                geometry=b.get("geometry"),
                child_position=child.get("position"),
                child_rotation=child.get("rotation"),
            )
        except (ModelError, DataError) as err:
            raise ModelError(f"{source}: {err}") from err
    for key, spec in _SECTIONS.items():
        if key in data:
            items = data[key]
            if not isinstance(items, list):
                raise ModelError(f"{source}: '{key}' must be a list of objects")
            try:
                model.set_section(key, spec.read(items, model, f"{source}: {key}"))
            except (ModelError, DataError) as err:  # DataError: an item's array is bad
                if source in str(err):
                    raise
                raise ModelError(f"{source}: '{key}': {err}") from err
    return model


#: Deepest nesting of lists and objects in a model file (a model file needs about 6).
_MAX_DEPTH = 64


def _check_nesting(data, source: str) -> None:
    """ModelError when a model dictionary nests deeper than ``_MAX_DEPTH`` (or is cyclic)."""
    containers = (dict, list, tuple)
    stack = [(data, 1)] if isinstance(data, containers) else []
    while stack:
        value, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ModelError(
                f"{source}: values nested more than {_MAX_DEPTH} levels deep (or a cycle); "
                "a model dictionary holds plain JSON values"
            )
        for v in value.values() if isinstance(value, dict) else value:
            if isinstance(v, containers):
                stack.append((v, depth + 1))
