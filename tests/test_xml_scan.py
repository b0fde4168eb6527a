"""The compiled XML scan builds the same tree as expat's events, or declines.

``ahbm.opensim._xml.parse_xml`` builds large texts from one expat check plus the
compiled scan of :mod:`ahbm._engine.jit_xml`; every other text (and every text the
scan declines) from expat's element events. These tests generate documents
with the constructs that matter (comments and processing instructions in
every position, quotes, ``>`` in attribute values, spaces inside tags, CR/LF
line ends, non-ASCII names and text, entities, CDATA, mixed content, deep
nesting) and compare the two trees node by node: tag, attributes, stripped
text, line, children, parent.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sample_data import SHARED as SHARED_DATA

from ahbm.errors import FileFormatError
from ahbm.opensim import _xml

SHARED = SHARED_DATA / "opensim"
LOCAL = Path(__file__).resolve().parent / "data" / "osim"


def _dump(node):
    return [
        (n.tag, n.attrib, n.text, n.line, n.source, len(n.children), n.parent.tag)
        for n in node.iter()
    ]


def _expat(data, shallow=(), skip=(), max_depth=128):
    return _xml._expat_tree(data, "f", "f", max_depth, "", frozenset(shallow), frozenset(skip))


def _scanned(data, shallow=(), skip=(), max_depth=128):
    return _xml._scanned_tree(data, "f", max_depth, frozenset(shallow), frozenset(skip))


TAGS = ["a", "b", "objects", "Body", "geometry", "ForceSet", "näme", "x_1", "GeometryPath"]


def _document(rng: random.Random, *, plain: bool) -> bytes:
    """A random well-formed document; `plain`: only what the scan reads itself."""
    nl = rng.choice(["\n", "\r\n", "\r"]) if rng.random() < 0.3 else "\n"
    out = []
    if rng.random() < 0.5:
        out.append('<?xml version="1.0" encoding="UTF-8" ?>' + nl)
    if rng.random() < 0.3:
        out.append("<!-- a comment <b> with a tag -->" + nl)

    def text():
        words = ["1.5 2 3", "x", "  spaced  out ", "ünïcode", "a>b", "0.1\n0.2", ""]
        if not plain:
            words += ["&amp; &lt;", "<![CDATA[<raw>]]>", "&#233;"]
        return rng.choice(words)

    def attrs():
        pieces = []
        for k in rng.sample(["name", "id", "v", "ñ"], rng.randint(0, 3)):
            value = rng.choice(["x", "a > b", "", "ünï", "it's", 'say "hi"'])
            q = "'" if '"' in value else '"' if "'" in value else rng.choice("\"'")
            pieces.append(
                f"{rng.choice([' ', '  ', nl])}{k}{rng.choice(['=', ' = '])}{q}{value}{q}"
            )
        if not plain and rng.random() < 0.2:
            pieces.append(' t="a&amp;b"' if rng.random() < 0.5 else ' t="a\tb"')
        return "".join(pieces)

    def element(depth):
        tag = rng.choice(TAGS)
        pad = rng.choice(["", " ", nl])
        if rng.random() < 0.15:
            out.append(f"<{tag}{attrs()}{pad}/>")
            return
        out.append(f"<{tag}{attrs()}{pad}>")
        if depth < 6 and rng.random() < 0.6:
            for _ in range(rng.randint(1, 4)):
                out.append(rng.choice(["", nl, nl + "\t\t", "  "]))
                r = rng.random()
                if r < 0.15:
                    out.append("<!-- note -->")
                elif r < 0.2:
                    out.append("<?pi some data?>")
                else:
                    element(depth + 1)
            if not plain and rng.random() < 0.1:
                out.append("mixed text")
            out.append(rng.choice(["", nl]))
        else:
            if rng.random() < 0.1:
                out.append("<!-- only a comment -->")
            else:
                out.append(text())
                if not plain and rng.random() < 0.1:
                    out.append("<!--split-->more")
        out.append(f"</{tag}{rng.choice(['', ' ', nl])}>")

    element(0)
    out.append(nl)
    return "".join(out).encode("utf-8")


SETTINGS = [
    {},
    {"skip": {"geometry", "GeometryPath"}},
    {"shallow": {("ForceSet", "objects"), ("a", "b")}},
    {"shallow": {("ForceSet", "objects")}, "skip": {"geometry"}},
]


@pytest.mark.parametrize("seed", range(40))
def test_plain_documents_are_scanned_to_the_same_tree(seed):
    rng = random.Random(seed)
    for _ in range(25):
        data = _document(rng, plain=True)
        for kw in SETTINGS:
            got = _scanned(data, **kw)
            try:
                want = _expat(data, **kw)
            except FileFormatError:  # the root element left out: no element
                assert got is None
                continue
            assert got is not None, data  # the scan reads plain documents itself
            assert _dump(got) == _dump(want), (kw, data)


@pytest.mark.parametrize("seed", range(40))
def test_other_documents_are_declined_or_equal(seed):
    rng = random.Random(1000 + seed)
    declined = 0
    for _ in range(25):
        data = _document(rng, plain=False)
        for kw in SETTINGS:
            got = _scanned(data, **kw)
            if got is not None:
                assert _dump(got) == _dump(_expat(data, **kw)), (kw, data)
            else:
                declined += 1
    assert declined  # (the generator makes texts that the scan leaves to expat)


@pytest.mark.parametrize(
    "data",
    [
        b"<a>&amp;</a>",  # entity
        b"<a><![CDATA[x]]></a>",  # CDATA
        b"<a>text<b/></a>",  # mixed content
        b"<a>x<!--c-->y</a>",  # a comment splitting text
        b'<a v="x\ty"/>',  # attribute normalization
        b'<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>',  # not UTF-8
        b"<a><b></a>",  # malformed: expat's error
        b'<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',  # refused
    ],
)
def test_the_scan_declines_what_it_does_not_reproduce(data):
    assert _scanned(data) is None


def test_deep_nesting_goes_to_expat_which_names_the_line():
    deep = b"<a>" * 200 + b"</a>" * 200
    assert _scanned(deep) is None
    with pytest.raises(FileFormatError, match="nested more than 128"):
        _xml.parse_xml(deep + b" " * _xml._SCAN_MIN_BYTES, "f")


def test_large_texts_use_the_scan_and_small_ones_expat(monkeypatch):
    calls = []
    real = _xml._scanned_tree
    monkeypatch.setattr(_xml, "_scanned_tree", lambda *a: calls.append(1) or real(*a))
    small = b"<a><b>1</b></a>"
    large = small[:-4] + b"<!--" + b"x" * _xml._SCAN_MIN_BYTES + b"--></a>"
    assert _dump(_xml.parse_xml(small, "f")) == _dump(_expat(small))
    assert not calls
    assert _dump(_xml.parse_xml(large, "f")) == _dump(_expat(large))
    assert calls


def test_malformed_large_text_keeps_expats_message():
    data = b"<a>" + b" " * _xml._SCAN_MIN_BYTES + b"<b></a>"
    with pytest.raises(FileFormatError, match=r"malformed XML at line 1"):
        _xml.parse_xml(data, "f")


def _model_files():
    files = sorted(LOCAL.glob("*.osim"))
    if (SHARED / "subject01.osim").exists():
        files.append(SHARED / "subject01.osim")
    return files


@pytest.mark.parametrize("path", _model_files(), ids=lambda p: p.name)
def test_model_files_scan_to_the_same_tree(path):
    data = path.read_bytes()
    for kw in SETTINGS + [{"skip": {"MarkerSet"}}]:
        got = _scanned(data, **kw)
        assert got is not None
        assert _dump(got) == _dump(_expat(data, **kw))
    # the same file with Windows line ends and a byte order mark
    crlf = b"\xef\xbb\xbf" + data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    got = _scanned(crlf, shallow={("ForceSet", "objects")})
    assert got is not None
    assert _dump(got) == _dump(_expat(crlf, shallow={("ForceSet", "objects")}))


def test_refused_declarations_in_a_large_text_keep_expats_message():
    pad = b"<!--" + b"x" * _xml._SCAN_MIN_BYTES + b"-->"
    for head in (b'<!DOCTYPE m [<!ENTITY a "aaaa">]>', b'<!DOCTYPE m SYSTEM "evil.dtd">'):
        with pytest.raises(FileFormatError, match=r"line 1: the file declares a DOCTYPE"):
            _xml.parse_xml(head + pad + b"<m/>", "f")


@pytest.mark.parametrize("seed", range(8))
def test_damaged_model_files_scan_to_expats_tree_or_are_declined(seed):
    """Random byte damage to a real model: whatever expat still reads, the scan either
    reproduces or leaves to expat (and never reads past the text)."""
    files = _model_files()
    rng = random.Random(seed)
    data = bytearray(rng.choice(files).read_bytes())
    alphabet = b"<>/!?-=\"' \t\r\n&abc\xc3\xa9"
    for _ in range(30):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(len(damaged))
            r = rng.random()
            if r < 0.4:
                damaged[k] = rng.choice(alphabet)
            elif r < 0.7:
                del damaged[k : k + rng.randint(1, 40)]
            else:
                damaged[k:k] = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        text = bytes(damaged)
        kw = {"shallow": {("ForceSet", "objects")}, "skip": {"attached_geometry"}}
        got = _scanned(text, **kw)
        try:
            want = _expat(text, **kw)
        except FileFormatError:
            assert got is None
            continue
        if got is not None:
            assert _dump(got) == _dump(want)


def test_xml_quoting_matches_the_standard_library():
    """ahbm's own quoting (kept off xml.sax.saxutils for start-up) writes what it writes."""
    import random
    from xml.sax.saxutils import escape, quoteattr

    from ahbm.opensim._xml import xml_escape, xml_quoteattr

    rng = random.Random(0)
    chars = list("ab&<>\"'\n\t\r xé")
    for _ in range(5000):
        t = "".join(rng.choice(chars) for _ in range(rng.randint(0, 12)))
        assert xml_quoteattr(t) == quoteattr(t), t
        assert xml_escape(t) == escape(t), t
