"""The one safe XML reader of ahbm (``.osim`` models, OpenSim setup and loads files).

Parses with ``xml.parsers.expat`` into :class:`XmlNode` trees that keep each
element's line, so errors can name the element and the line. A document type
declaration (``<!DOCTYPE``), an entity declaration or an external entity
reference is refused before anything is expanded (no "billion laughs", no
external entities; OpenSim never writes them), and nesting is capped.
"""

from __future__ import annotations

from xml.parsers import expat

from ahbm.errors import FileFormatError

__all__ = ["XmlNode", "parse_xml"]


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
        entity reference, nesting deeper than `max_depth`, or no element at all.
    """
    label = source if label is None else label
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
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

    def refuse(*args):
        raise _Refused(parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data_
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
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
