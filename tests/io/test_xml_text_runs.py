"""Element text of ahbm's XML reader against ElementTree (text plus the children's tails)."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ahbm.opensim._xml import parse_xml


def _reference(el) -> dict:
    """(tag, stripped text directly inside, children) from ElementTree."""
    text = "".join([el.text or ""] + [c.tail or "" for c in el]).strip()
    return {"tag": el.tag, "text": text, "children": [_reference(c) for c in el]}


def _ours(node) -> dict:
    return {"tag": node.tag, "text": node.text, "children": [_ours(c) for c in node.children]}


def _random_document(rng) -> str:
    pieces = ["  ", "\n\t", "a", "1.5 -2e-3", "&amp;", "&#x41;", "<!-- c -->", "<![CDATA[ x<y ]]>"]

    def text():
        k = int(rng.integers(0, 4))
        out = "".join(pieces[int(i)] for i in rng.integers(0, len(pieces), size=k))
        if rng.random() < 0.1:  # longer than expat's 8 KiB text buffer, whitespace inside
            out += " " * 9000 + "mid" + "\n" * 9000 + "end" + " " * 9000
        return out

    def element(depth):
        tag = f"e{int(rng.integers(0, 5))}"
        inner = text()
        if depth < 4:
            for _ in range(int(rng.integers(0, 4))):
                inner += element(depth + 1) + text()
        return f"<{tag}>{inner}</{tag}>"

    return "<root>" + text() + element(0) + text() + "</root>"


@pytest.mark.parametrize("seed", range(40))
def test_text_equals_elementtree(seed):
    doc = _random_document(np.random.default_rng(seed))
    ours = _ours(parse_xml(doc.encode(), "x.xml"))
    assert ours == _reference(ET.fromstring(doc))


def test_whitespace_only_and_mixed_content():
    doc = b"<a>  \n <b> x </b>\t <c/>y<d>  </d> z </a>"
    root = parse_xml(doc, "x.xml")
    assert root.text == "y z"  # the runs directly inside <a>, joined, stripped
    assert [c.text for c in root.children] == ["x", "", ""]
    big = b"<a>" + b" " * 20000 + b"1 2" + b" " * 20000 + b"3" + b"\n" * 20000 + b"</a>"
    assert parse_xml(big, "x.xml").text == "1 2" + " " * 20000 + "3"
