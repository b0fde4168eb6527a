"""The one safe XML reader of ahbm (``.osim`` models, OpenSim setup and loads files).

Parses with ``xml.parsers.expat`` into :class:`XmlNode` trees that keep each
element's line, so errors can name the element and the line. A document type
declaration (``<!DOCTYPE``), an entity declaration or an external entity
reference is refused before anything is expanded (no "billion laughs", no
external entities; OpenSim never writes them), and nesting is capped.

A text of 16 kB or more (a model file) is read by expat whole first; when
that finds no fault, the compiled scan of :mod:`ahbm._engine.jit_xml` gives the
elements and the tree is built from its table, without a Python call per
element event (the ID tool's read of the shared ``subject01.osim``, 236 kB:
1.7 against 2.2 ms; the whole tree: 2.8 against 3.0 ms). The scan reads only
the plain subset that it reproduces exactly (UTF-8, no entity references,
CDATA or mixed content); anything else, and every error, goes through expat's
events, so the tree and the messages are the same either way. The first scan
in a process loads the compiled code from numba's cache: about 0.4 s when no
other compiled kernel has run yet, about 3 s once after installation. So a
short command that has not loaded numba (inside
:func:`ahbm._engine.backend.numpy_while_small`, e.g. ``ahbm id``) reads texts
up to 2 MB by expat's events alone (75-100 MB/s measured: at most ~27 ms).
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.parsers import expat

import numpy as np

from ahbm._engine import backend
from ahbm._internal.validation import check_read_size
from ahbm.errors import FileFormatError

__all__ = ["XmlElement", "XmlNode", "parse_xml", "parse_xml_file"]


class XmlNode:
    """An XML element: tag, attributes, children, text (stripped), line and source file."""

    __slots__ = ("tag", "attrib", "children", "text", "line", "parent", "source")

    def __init__(self, tag, attrib, line, parent=None, *, source="", children=None):
        self.tag, self.attrib, self.line, self.parent = tag, attrib, line, parent
        self.source = source
        self.children: list[XmlNode] = list(children or [])
        self.text = ""

    @property
    def name(self):
        return self.attrib.get("name")

    def find(self, tag):
        """First child element with this tag, or None."""
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag):
        """All child elements with this tag."""
        return [c for c in self.children if c.tag == tag]

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def label(self) -> str:
        """``<tag name='x'> at line 12`` for error messages."""
        name = self.name
        return f"<{self.tag}{f' name={name!r}' if name is not None else ''}> at line {self.line}"

    def where(self) -> str:
        """``'x.xml', line 12, element <tag>`` for error messages."""
        return f"'{self.source}', line {self.line}, element <{self.tag}>"


class _Refused(Exception):
    pass


# Below this size the expat-event tree is as fast as a check plus a scan.
_SCAN_MIN_BYTES = 16384
#: Up to this size a short command that has not loaded numba builds the tree from expat's
#: events (see :mod:`ahbm._engine.backend`): 75-100 MB/s measured (subject01.osim and
#: texts of its elements up to 3.8 MB), so at most ~27 ms, against ~0.4 s to load the scan.
_SCAN_NUMPY_MAX_BYTES = 2_000_000
#: Bytes one ``<`` of the text may cost once parsed (an upper bound on the elements): the
#: scan's table row and stack entry, the node with its attribute dict, child list and tag.
_ELEMENT_BYTES = 384
_ATTRIBUTE = re.compile(r"""([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_UTF8_NAMES = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})


def xml_escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as XML entities (element text)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_quoteattr(text: str) -> str:
    """`text` as a quoted XML attribute value, as ``xml.sax.saxutils.quoteattr`` writes it.

    Written here because ``xml.sax.saxutils`` imports ``urllib.request`` and
    ``http.client`` (14 ms of a command's start).

    Examples
    --------
    >>> print(xml_quoteattr('a "b" <c>'))
    'a "b" &lt;c&gt;'
    """
    s = xml_escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' not in s:
        return f'"{s}"'
    if "'" not in s:
        return f"'{s}'"
    return '"' + s.replace('"', "&quot;") + '"'


def _names(tags) -> tuple:
    """Tags as one uint8 array of their UTF-8 bytes and the int64 offsets between them."""
    blobs = [t.encode("utf-8") for t in tags]
    offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in blobs])
    return np.frombuffer(b"".join(blobs) or b"\0", dtype=np.uint8), offsets


def _guarded_parser(refuse):
    """An expat parser that calls `refuse` on a DOCTYPE, an entity declaration or reference."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    return parser


def _well_formed(data: bytes) -> bool:
    """Whether expat reads all of `data` with no error, DOCTYPE or entity declaration."""

    def refuse(*args):
        raise _Refused()

    try:
        _guarded_parser(refuse).Parse(data, True)
    except (_Refused, expat.ExpatError):
        return False
    return True


def _utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8 by its byte order mark and XML declaration."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return False
    head = data[3:] if data[:3] == b"\xef\xbb\xbf" else data
    if not head.startswith(b"<?xml"):
        return True
    decl = head[: head.find(b"?>") + 1]
    m = re.search(rb"""encoding\s*=\s*["']([^"']*)["']""", decl)
    return m is None or m[1].decode("ascii", "replace").lower() in _UTF8_NAMES


def _scanned_tree(data: bytes, source: str, max_depth: int, shallow, skip):
    """The tree of :func:`parse_xml` from expat's check and the compiled scan, or None.

    expat reads the whole text first (well-formedness, refused declarations);
    :func:`ahbm._engine.jit_xml.scan_xml` then gives the elements. None (the caller
    then uses expat's events, which also raise the errors) when expat finds a
    fault, the text is not UTF-8, the scan declines it, or it nests more than
    `max_depth` levels; also (before any check) when a short command that has
    not loaded numba reads a text of at most ``_SCAN_NUMPY_MAX_BYTES``
    (:func:`ahbm._engine.backend.use_compiled`). The tree equals the one from
    expat's events: same nodes, tags, attributes, stripped texts and lines.
    """
    if not backend.use_compiled(len(data) <= _SCAN_NUMPY_MAX_BYTES):
        return None  # expat's events build the tree: no numba to load
    if not _utf8(data) or not _well_formed(data):
        return None
    from ahbm._engine.jit_xml import scan_xml, select_elements

    if any(g == "#document" for g, _ in shallow):  # (a pair the scan does not match)
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    status, table = scan_xml(buf)
    if status or int(table[:, 9].max()) > max_depth:
        return None
    pairs = sorted(shallow)
    keep, kept_parent = select_elements(
        buf,
        table,
        *_names(sorted(skip)),
        *_names([g for g, _ in pairs]),
        *_names([p for _, p in pairs]),
    )
    kept = table[keep]
    text = data.decode("utf-8")
    if len(text) != len(data):  # byte offsets to character offsets
        chars = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum((buf & 0xC0) != 0x80, out=chars[1:])
        spans = kept[:, :6]
        spans[spans >= 0] = chars[spans[spans >= 0]]
    root = XmlNode("#document", {}, 0, None, source=source)
    nodes: list = []
    append, new, findall = nodes.append, object.__new__, _ATTRIBUTE.findall
    for row, p in zip(kept.tolist(), kept_parent.tolist(), strict=True):
        node = new(XmlNode)
        node.tag = text[row[0] : row[1]]
        if row[3] > row[2] and not (raw := text[row[2] : row[3]]).isspace():
            node.attrib = {k: a or b for k, a, b in findall(raw)}
        else:
            node.attrib = {}
        parent = root if p < 0 else nodes[p]
        node.line, node.parent, node.source, node.children = row[6], parent, source, []
        if row[5] > row[4] >= 0:
            s = text[row[4] : row[5]].strip()
            node.text = s.replace("\r\n", "\n").replace("\r", "\n") if "\r" in s else s
        else:
            node.text = ""
        parent.children.append(node)
        append(node)
    return root.children[0] if root.children else None  # (expat's error: no element)


def parse_xml(
    data: bytes,
    source: str,
    *,
    label=None,
    max_depth: int = 128,
    usual: str = "",
    shallow=(),
    skip=(),
):
    """Parse `data` into a tree of :class:`XmlNode` and return the root element.

    Parameters
    ----------
    data : bytes
    source : str
        The file name kept in every node (``node.source``).
    label : str, optional
        How messages name the file (default `source`).
    max_depth : int
        Deepest nesting accepted.
    usual : str
        What nesting is normal, for the message (e.g. "an OpenSim model nests about 12").
    shallow : collection of (str, str)
        ``(grandparent tag, parent tag)`` pairs, e.g. ``{("ForceSet", "objects")}``: an
        element whose grandparent and parent have these tags keeps only its children
        without elements of their own (its scalar properties); a child that holds
        elements is left out with everything inside it. Those subtrees are still
        parsed (well-formedness, refused declarations and `max_depth` are checked
        as everywhere) but make no nodes, which is faster when they are large.
    skip : collection of str
        Element tags left out wherever they occur, with everything inside them
        (parsed and checked the same way, but no nodes): content that the
        caller does not use, such as display geometry.

    Raises
    ------
    FileFormatError
        Malformed XML (line and column), a DOCTYPE/ENTITY declaration, an external
        entity reference, nesting deeper than `max_depth`, no element at all, or a
        tree whose texts, attributes and elements would exceed the read cap.
    """
    label = source if label is None else label
    _check_tree_size(data, label)
    if isinstance(data, bytes) and len(data) >= _SCAN_MIN_BYTES:
        root = _scanned_tree(data, source, max_depth, frozenset(shallow), frozenset(skip))
        if root is not None:
            return root
    return _expat_tree(data, source, label, max_depth, usual, shallow, skip)


def _check_tree_size(data, label: str) -> None:
    """Count the tree that `data` makes against the read cap (:func:`ahbm.io.max_read_bytes`).

    Element texts and attribute values are copied into the tree (at most the
    bytes of the text again, on top of the text itself), and every element
    costs a few hundred bytes (at most one per ``<``): a file within the cap
    cannot make a tree many times larger than the cap.
    """
    n, lt = len(data), data.count(b"<" if isinstance(data, (bytes, bytearray)) else "<")
    check_read_size(
        2 * n + lt * _ELEMENT_BYTES,
        f"parsing {n} bytes with up to {lt} elements and their texts",
        label,
    )


def _expat_tree(data, source, label, max_depth, usual, shallow, skip):
    """The tree from expat's element events (every input; the errors of :func:`parse_xml`)."""

    def refuse(*args):
        raise _Refused(parser.CurrentLineNumber)

    parser = _guarded_parser(refuse)
    parser.buffer_text = True  # one call per run of text (not per line)
    root = XmlNode("#document", {}, 0, None, source=source)
    stack = [root]
    # text: an element's first run that is not all whitespace goes to node.text (leading
    # whitespace is stripped anyway); further runs of the same element collect in `more`
    more: dict[XmlNode, list[str]] = {}
    push, pop, new = stack.append, stack.pop, object.__new__

    shallow = frozenset(shallow)
    skip = frozenset(skip)
    shallow_parents = frozenset(p for _, p in shallow) - {"#document"}  # (it has no parent)
    # cut[0]: stack depth at which the children of a shallow element start (0: outside one);
    # cut[1]: elements open in a left-out property (the property itself included)
    cut = [0, 0]

    def start(tag, attrib):
        if len(stack) > max_depth:  # everything that walks the tree recurses per level
            raise _Refused(parser.CurrentLineNumber, "depth")
        parent = stack[-1]
        if skip and tag in skip:  # left out: a placeholder on the stack, in no children list
            node = new(XmlNode)
            node.tag, node.attrib, node.line = tag, attrib, parser.CurrentLineNumber
            node.parent, node.source, node.children, node.text = parent, source, [], ""
            push(node)
            cut[1] = 1
            parser.StartElementHandler = skip_start
            parser.EndElementHandler = skip_end
            parser.CharacterDataHandler = None
            return
        if cut[0]:
            if len(stack) > cut[0]:  # an element inside a property of a shallow element
                parent.parent.children.pop()  # that property holds elements: left out
                cut[1] = 2
                parser.StartElementHandler = skip_start
                parser.EndElementHandler = skip_end
                parser.CharacterDataHandler = None
                return
        elif parent.tag in shallow_parents and (parent.parent.tag, parent.tag) in shallow:
            cut[0] = len(stack) + 1
        node = new(XmlNode)  # the slots of XmlNode.__init__, set without its call (~15 % faster)
        node.tag, node.attrib, node.line = tag, attrib, parser.CurrentLineNumber
        node.parent, node.source, node.children, node.text = parent, source, [], ""
        parent.children.append(node)
        push(node)

    def end(tag):
        node = pop()
        if more and node in more:
            node.text = "".join(more.pop(node)).strip()
        elif node.text:
            node.text = node.text.strip()
        if len(stack) < cut[0]:  # the shallow element closed
            cut[0] = 0

    def data_(text):
        node = stack[-1]
        if node.text:
            runs = more.get(node)
            if runs is None:
                more[node] = [node.text, text]
            else:
                runs.append(text)
        elif not text.isspace():
            node.text = text

    def skip_start(tag, attrib):  # inside a left-out property: count levels, make no node
        if len(stack) + cut[1] - 2 >= max_depth:  # the same cap as `start`
            raise _Refused(parser.CurrentLineNumber, "depth")
        cut[1] += 1

    def skip_end(tag):
        cut[1] -= 1
        if cut[1] == 0:  # the left-out property closed: build nodes again
            parser.StartElementHandler = start
            parser.EndElementHandler = end
            parser.CharacterDataHandler = data_
            end(tag)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data_
    try:
        parser.Parse(data, True)
    except _Refused as err:
        if err.args[1:] == ("depth",):
            raise FileFormatError(
                f"{label}: line {err.args[0]}: elements nested more than {max_depth} levels "
                f"deep{f'; {usual}' if usual else ''} (the file is damaged or crafted)"
            ) from None
        raise FileFormatError(
            f"{label}: line {err.args[0]}: the file declares a DOCTYPE or an ENTITY; OpenSim "
            "files have neither, and ahbm does not expand entities (remove the declaration)"
        ) from None
    except expat.ExpatError as err:
        raise FileFormatError(
            f"{label}: malformed XML at line {err.lineno}, column {err.offset + 1}: "
            f"{expat.ErrorString(err.code)} (the file is not well-formed XML)"
        ) from None
    if not root.children:
        raise FileFormatError(f"{label}: the file holds no XML element")
    return root.children[0]


# --- OpenSim setup and loads files ---------------------------------------------------

#: Deepest nesting of elements read (OpenSim setup and loads files nest about 6 levels).
MAX_XML_DEPTH = 64

XmlElement = XmlNode


def parse_xml_file(path, what: str) -> XmlNode:
    """Parse an XML file into an :class:`~ahbm.opensim._xml.XmlNode` tree (the root element).

    Parameters
    ----------
    path : str or path-like
    what : str
        What the file should be, for messages ("IK setup", "external loads").

    Raises
    ------
    FileFormatError
        Missing/unreadable file, malformed XML (with the line), or a DOCTYPE /
        ENTITY declaration.
    """
    path = Path(path)
    source = str(path)
    try:
        check_read_size(path.stat().st_size, "reading it", f"{what} file '{source}'")
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise FileFormatError(f"{what} file '{source}' does not exist") from err
    except OSError as err:
        raise FileFormatError(f"cannot read {what} file '{source}': {err}") from err
    return parse_xml(
        data,
        source,
        label=f"{what} file '{source}'",
        max_depth=MAX_XML_DEPTH,
        usual="OpenSim setups nest about 6",
    )
