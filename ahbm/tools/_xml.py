"""OpenSim setup and loads files read with ahbm's one safe XML reader (:mod:`ahbm._xml`).

DOCTYPE and ENTITY declarations are refused before anything is expanded, nesting
is capped, and every node keeps its line so errors name the element and the line.
"""

from __future__ import annotations

from pathlib import Path

from ahbm._validation import check_read_size
from ahbm._xml import XmlNode, parse_xml
from ahbm.errors import FileFormatError

__all__ = ["XmlElement", "parse_xml_file"]

#: Deepest nesting of elements read (OpenSim setup and loads files nest about 6 levels).
MAX_XML_DEPTH = 64

XmlElement = XmlNode


def parse_xml_file(path, what: str) -> XmlNode:
    """Parse an XML file into an :class:`~ahbm._xml.XmlNode` tree (the root element).

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
