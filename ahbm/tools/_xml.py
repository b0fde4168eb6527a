"""A small, safe XML reader for OpenSim setup files (internal to ahbm.tools).

Parses with ``xml.parsers.expat`` into :class:`XmlElement` nodes that keep
their line numbers, so that errors can name the element and the line. A
document type declaration (``<!DOCTYPE``) or an entity declaration
(``<!ENTITY``) is refused before anything is expanded (no "billion laughs", no
external entities); OpenSim never writes either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from ahbm._validation import check_read_size
from ahbm.errors import FileFormatError

__all__ = ["XmlElement", "parse_xml_file"]

#: Deepest nesting of elements read (OpenSim setup and loads files nest about 6 levels).
MAX_XML_DEPTH = 64


@dataclass
class XmlElement:
    """One XML element: tag, attributes, text, children and its line in the file."""

    tag: str
    attrib: dict
    line: int
    source: str
    children: list = field(default_factory=list)
    text: str = ""

    def find(self, tag: str):
        """First child element with this tag, or None."""
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list:
        """All child elements with this tag."""
        return [c for c in self.children if c.tag == tag]

    def where(self) -> str:
        """``"file 'x.xml', line 12, element <tag>"`` for error messages."""
        return f"'{self.source}', line {self.line}, element <{self.tag}>"


def _refuse(kind: str, source: str, parser) -> None:
    raise FileFormatError(
        f"'{source}', line {parser.CurrentLineNumber}: the file contains {kind}; OpenSim "
        "setup files never do, and ahbm does not expand them (remove the declaration)"
    )


def parse_xml_file(path, what: str) -> XmlElement:
    """Parse an XML file into an :class:`XmlElement` tree (the root element).

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

    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[XmlElement] = []
    root: list[XmlElement] = []
    texts: list[list[str]] = []

    def start(tag, attrib):
        if len(stack) >= MAX_XML_DEPTH:
            raise FileFormatError(
                f"'{source}', line {parser.CurrentLineNumber}: elements nested more than "
                f"{MAX_XML_DEPTH} levels deep; OpenSim setups nest about 6 (damaged or crafted)"
            )
        el = XmlElement(tag, dict(attrib), parser.CurrentLineNumber, source)
        if stack:
            stack[-1].children.append(el)
        else:
            root.append(el)
        stack.append(el)
        texts.append([])

    def end(tag):
        el = stack.pop()
        el.text = "".join(texts.pop())

    def chars(data):
        if texts:
            texts[-1].append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.StartDoctypeDeclHandler = lambda *a: _refuse("a DOCTYPE declaration", source, parser)
    parser.EntityDeclHandler = lambda *a: _refuse("an ENTITY declaration", source, parser)
    parser.UnparsedEntityDeclHandler = lambda *a: _refuse("an ENTITY declaration", source, parser)
    parser.ExternalEntityRefHandler = lambda *a: _refuse(
        "an external entity reference", source, parser
    )
    try:
        parser.Parse(data, True)
    except expat.ExpatError as err:
        raise FileFormatError(
            f"{what} file '{source}' is not well-formed XML: line {err.lineno}, column "
            f"{err.offset + 1}: {expat.ErrorString(err.code)}"
        ) from err
    if not root:
        raise FileFormatError(f"{what} file '{source}' has no root element")
    return root[0]
