"""The ``"opensim"`` model-file section: what ahbm keeps of a model but does not model.

Everything of an OpenSim model that is not a body, joint, coordinate, marker,
gravity or coordinate coupler is kept, as JSON-able data, as
:class:`OsimItem` entries of the model-file section :data:`OSIM_SECTION`
(``model.section("opensim")``): the coordinate table, the forces (muscles
with their paths), the wrap objects, the contact geometry and the display
geometry. The section is registered with
:func:`~ahbm.kinematics.model_file.register_model_section` when this module
is imported; :func:`~ahbm.opensim.osim_write.write_osim` writes it back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ahbm.errors import ModelError
from ahbm.kinematics.model_file import register_model_section
from ahbm.opensim._osim_values import _Node
from ahbm.opensim._xml import xml_escape as escape
from ahbm.opensim._xml import xml_quoteattr as quoteattr

__all__ = ["OsimItem", "OSIM_SECTION"]


#: Key of the model-file section that keeps OpenSim data ahbm does not model.
OSIM_SECTION = "opensim"


# ----------------------------------------------------------------------------
# Generic elements kept as JSON (forces, wrap objects, contact geometry, ...)
# ----------------------------------------------------------------------------

_INT_RE = re.compile(r"^[+-]?\d+$")
#: key of a force read with ``read_osim(..., forces="summary")`` (its scalar properties only)
_SUMMARY_KEY = "ahbm_summary"
#: keys ahbm adds to kept elements (not OpenSim properties; not written back)
_ADDED_KEYS = ("kind", "body", _SUMMARY_KEY)


def _leaf_value(text: str):
    """The JSON value of a leaf element's (stripped) text: None, a bool, a number or a list
    of numbers (ints when every digit is a digit, as ``_INT_RE``), else the text."""
    if text == "":
        return None
    if len(text) <= 5:
        low = text.lower()
        if low == "true":
            return True
        if low == "false":
            return False
    vals = []
    append = vals.append
    try:  # str methods rather than the regex per token: 3x faster
        for t in text.split():
            if t.isdecimal() or (t[0] in "+-" and t[1:].isdecimal()):
                append(int(t))  # exact, whatever its size (too many digits: ValueError)
            else:
                v = float(t)
                if v - v != 0.0:  # inf or nan: kept as text
                    return text
                append(v)
    except ValueError:
        return text
    return vals[0] if len(vals) == 1 else vals


def _is_object(node: _Node) -> bool:
    return node.tag[:1].isupper()


def _element_json(node: _Node):
    """A property element: leaf value, list of objects, or a nested dict."""
    children = node.children
    if not children:
        return _leaf_value(node.text)
    if all(c.tag[:1].isupper() for c in children):  # all objects (see _is_object)
        return [_object_json(c) for c in children]
    return _object_json(node, with_type=False)


def _object_json(node: _Node, with_type=True) -> dict:
    d = {"type": node.tag} if with_type else {}
    name = node.attrib.get("name")
    if name is not None:
        d["name"] = name
    for c in node.children:
        if c.tag[:1].isupper() and (c.children or not c.text):  # an object (see _is_object)
            value = _object_json(c)
        elif not c.children:  # a leaf property (as _element_json)
            value = _leaf_value(c.text)
        else:
            value = _element_json(c)
        if c.tag in d:
            prev = d[c.tag]
            d[c.tag] = (prev if isinstance(prev, list) and c.tag[:1].isupper() else [prev]) + [
                value
            ]
        else:
            d[c.tag] = value
    return d


def _leaf_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return " ".join(_leaf_text(v) for v in value)
    return str(value)


def _json_xml(tag: str, value, indent: str) -> str:
    """XML of a kept element (the inverse of :func:`_object_json`)."""
    if isinstance(value, dict):
        typ = value.get("type", tag)
        name = value.get("name")
        attr = f" name={quoteattr(str(name))}" if name is not None else ""
        inner = "".join(
            _json_xml(k, v, indent + "\t")
            for k, v in value.items()
            if k not in ("type", "name") + _ADDED_KEYS
        )
        return (
            f"{indent}<{typ}{attr}>\n{inner}{indent}</{typ}>\n"
            if inner
            else (f"{indent}<{typ}{attr} />\n")
        )
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        if tag[:1].isupper():  # repeated object elements
            return "".join(_json_xml(tag, v, indent) for v in value)
        inner = "".join(_json_xml(v.get("type", "Object"), v, indent + "\t") for v in value)
        return f"{indent}<{tag}>\n{inner}{indent}</{tag}>\n"
    text = _leaf_text(value)
    if text == "" and not isinstance(value, str):
        return f"{indent}<{tag} />\n"
    return f"{indent}<{tag}>{escape(text)}</{tag}>\n"


#: marks an OsimItem whose top-level body is not cached
_UNKNOWN = object()


@dataclass(frozen=True, repr=False, eq=False)
class OsimItem:
    """One element of an OpenSim model kept as data (model-file section ``"opensim"``).

    Attributes
    ----------
    kind : str
        ``"coordinate"``, ``"force"``, ``"wrap_object"``, ``"contact_geometry"``,
        ``"geometry"`` (display geometry of a body) or ``"joint"`` (the OpenSim
        type of a joint).
    data : dict
        JSON-able content (a copy is returned). OpenSim objects are dicts with
        ``"type"`` (the XML tag), ``"name"`` and one key per property; lists
        of objects are lists of such dicts. Every point with a
        ``"body"`` key has its ``"location"`` (or ``"translation"``) in that
        body's frame (m).

    Examples
    --------
    >>> it = OsimItem.make("wrap_object", {"type": "WrapSphere", "name": "knee",
    ...                                    "body": "femur_r", "translation": [0, -0.4, 0]})
    >>> it.kind, it.name, it.data["body"], it.get("translation")
    ('wrap_object', 'knee', 'femur_r', [0, -0.4, 0])
    """

    kind: str
    #: the JSON text, or (items made by read_osim) a dict this item owns and nothing else
    #: refers to, encoded on first use
    _src: str | dict
    #: the top-level ``"body"`` when it is a str or None (what the section check reads,
    #: without decoding the whole item); ``_UNKNOWN`` otherwise
    _body: object = field(default=_UNKNOWN)

    @classmethod
    def make(cls, kind: str, data: dict) -> OsimItem:
        """An item of `kind` holding a copy of the JSON-able dict `data`."""
        try:
            text = json.dumps(data)
        except (TypeError, ValueError) as err:
            raise ModelError(f"opensim section item {kind!r} must be JSON-able") from err
        return cls(str(kind), text, _known_body(data))

    @classmethod
    def _own(cls, kind: str, data: dict) -> OsimItem:
        """An item that takes `data` over (no copy): for dicts built by the reader from
        XML text (str, finite numbers, bools, None, lists, dicts: JSON-able by
        construction) that no one else keeps."""
        return cls(kind, data, _known_body(data))

    @property
    def _data(self) -> str:
        src = self._src
        if not isinstance(src, str):
            src = json.dumps(src)
            object.__setattr__(self, "_src", src)
        return src

    def _top_body(self):
        """The top-level ``"body"`` of the data (None if absent)."""
        if self._body is not _UNKNOWN:
            return self._body
        d = self.data
        return d.get("body") if isinstance(d, dict) else None

    @property
    def data(self) -> dict:
        """The content (a new copy at each access)."""
        return json.loads(self._data)

    def get(self, key: str, default=None):
        """The value of one top-level property of :attr:`data` (a copy), or `default`.

        Cheaper than ``item.data.get(key)`` for one property of a large item
        (a muscle with its path).
        """
        src = self._src
        if isinstance(src, str):
            d = json.loads(src)
            return d.get(key, default) if isinstance(d, dict) else default
        if key not in src:
            return default
        value = src[key]
        if value is None or isinstance(value, (str, int, float)):  # immutable
            return value
        return json.loads(json.dumps(value))

    @property
    def name(self):
        """The element's ``"name"`` (None if it has none)."""
        return self.get("name")

    def to_dict(self) -> dict:
        """The model-file form ``{"kind": ..., **data}``."""
        return {"kind": self.kind, **self.data}

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.kind == other.kind and self._data == other._data

    def __hash__(self):
        return hash((self.kind, self._data))

    def __reduce__(self):  # pickle and copy: the JSON text
        if self._body is _UNKNOWN:
            return (self.__class__, (self.kind, self._data))
        return (self.__class__, (self.kind, self._data, self._body))

    def __repr__(self) -> str:
        return f"OsimItem({self.kind!r}, type={self.get('type')!r}, name={self.get('name')!r})"


def _known_body(data):
    """The top-level ``"body"`` of `data` if it is a str or None, else ``_UNKNOWN``."""
    body = data.get("body") if isinstance(data, dict) else _UNKNOWN
    return body if body is None or type(body) is str else _UNKNOWN


_KINDS = ("coordinate", "force", "wrap_object", "contact_geometry", "geometry", "joint")


def _read_section(items, model, source):
    out = []
    for k, d in enumerate(items):
        if not isinstance(d, dict) or d.get("kind") not in _KINDS:
            raise ModelError(
                f"{source}[{k}]: each item must be an object with 'kind' in {list(_KINDS)}"
            )
        data = {key: v for key, v in d.items() if key != "kind"}
        out.append(OsimItem.make(d["kind"], data))
    return _check_section(out, model)


def _write_section(items):
    return [it.to_dict() for it in items]


def _check_section(items, model):
    out = []
    names = set(model.body_names) | {"ground"}
    for it in items:
        if not isinstance(it, OsimItem):
            raise ModelError(
                f"the {OSIM_SECTION!r} section holds OsimItem objects, got {type(it).__name__}"
            )
        body = it._top_body()
        if body is not None and body not in names:
            raise ModelError(
                f"{OSIM_SECTION} item {it!r} is attached to body {body!r}, which the model "
                "does not have"
            )
        out.append(it)
    return out


register_model_section(
    OSIM_SECTION,
    read=_read_section,
    write=_write_section,
    check=_check_section,
    owner="ahbm.opensim.osim_section",
)
