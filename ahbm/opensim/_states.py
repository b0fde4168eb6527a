"""OpenSim 4's state labels and order for files of states (internal).

OpenSim writes a model's states as ``/jointset/<joint>/<coordinate>/value`` and
``.../speed`` for each coordinate in the order of the .osim file's coordinates,
then ``/forceset/<muscle>/activation`` and ``.../fiber_length`` for each muscle
that has those states (in ForceSet order). Used by ``ahbm forward`` (its
``_states.sto``) and ``ahbm scale`` (the marker placer's static pose).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ahbm.errors import ModelError
from ahbm.opensim._xml import parse_xml_file

__all__ = ["body_names", "coordinate_state_order", "muscle_state_labels", "offset_frame_names"]


def _nodes(model_file, tag) -> list:
    """The elements `tag` of an .osim file in file order (none for another model file)."""
    if model_file is None or Path(model_file).suffix.lower() != ".osim":
        return []
    root = parse_xml_file(model_file, "OpenSim model")
    return [n for n in root.iter() if n.tag == tag]


def _osim_coordinates(model_file) -> list:
    return [n.attrib["name"] for n in _nodes(model_file, "Coordinate") if n.attrib.get("name")]


def body_names(model_file) -> list:
    """The model's bodies in the order of its BodySet (ground left out)."""
    return [n.attrib["name"] for n in _nodes(model_file, "Body")
            if n.attrib.get("name") not in (None, "", "ground")]  # fmt: skip


def offset_frame_names(model_file) -> list:
    """The model's PhysicalOffsetFrames in file order (repeats kept, as OpenSim lists them)."""
    return [n.attrib.get("name", "") for n in _nodes(model_file, "PhysicalOffsetFrame")]


def coordinate_state_order(model, model_file=None) -> tuple:
    """Coordinates in OpenSim's state order: ``(names, perm, paths)``.

    ``names[k] = model.coordinate_names[perm[k]]``; ``paths`` are the state paths
    without the ``/value`` or ``/speed`` suffix. Without a model file, the
    model's own order.
    """
    own = list(model.coordinate_names)
    order = _osim_coordinates(model_file) or own
    names = [c for c in order if c in own] + [c for c in own if c not in order]
    perm = np.array([own.index(c) for c in names], dtype=int)
    joint = {}
    try:
        for item in model.section("opensim"):
            if getattr(item, "kind", None) == "coordinate":
                joint[str(item.get("name", ""))] = str(item.get("joint", "") or "")
    except (KeyError, ModelError):
        pass
    if not joint:
        joint = {c: b.joint.name for b in model.bodies for c in b.joint.coordinates}
    paths = [f"/jointset/{joint[c]}/{c}" if joint.get(c) else f"/{c}" for c in names]
    return names, perm, paths


def _flag(m, key) -> bool:
    return str(m.parameters.get(key, "false")).strip().lower() in ("true", "1")


def muscle_state_labels(muscles) -> tuple:
    """``(labels, defaults)`` of the muscles' activation and fiber-length states.

    A muscle that ignores its activation dynamics has no activation state, one
    that ignores tendon compliance no fiber length (OpenSim's rule); the
    defaults are each muscle's ``default_activation`` (0.05) and
    ``default_fiber_length`` (0.1 m).
    """
    labels, defaults = [], []
    for m in muscles:
        if not _flag(m, "ignore_activation_dynamics"):
            labels.append(f"/forceset/{m.name}/activation")
            defaults.append(float(m.parameters.get("default_activation", 0.05)))
        if not _flag(m, "ignore_tendon_compliance"):
            labels.append(f"/forceset/{m.name}/fiber_length")
            defaults.append(float(m.parameters.get("default_fiber_length", 0.1)))
    return labels, np.asarray(defaults, dtype=float)
