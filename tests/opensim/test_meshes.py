"""ahbm.opensim.meshes: .vtp (every encoding), .stl (ASCII, binary) and .obj files written here."""

import base64
import struct
import zlib

import numpy as np
import pytest

from ahbm.errors import FileFormatError
from ahbm.opensim.meshes import find_mesh, read_mesh

# a unit cube: 8 vertices, 6 quads (as 12 triangles when fanned)
V = np.array([[x, y, z] for z in (0.0, 1.0) for y in (0.0, 1.0) for x in (0.0, 1.0)]) * 0.1
QUADS = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]]
TRIS = np.array([[q[0], q[i], q[i + 1]] for q in QUADS for i in (1, 2)])


def _triangle_set(v, t):
    """Triangles as a set of coordinate triples (independent of vertex numbering)."""
    return {tuple(map(tuple, np.round(v[tri], 6))) for tri in t}


EXPECTED = _triangle_set(V, TRIS)


# ---------------------------------------------------------------- VTK XML writer of the tests
def _vtk_block(arr: np.ndarray, *, header="u4", compress=False, apart=True, endian="<", block=64):
    raw = arr.astype(arr.dtype.newbyteorder(endian)).tobytes()
    hdt = np.dtype(endian + header)
    if not compress:
        head = np.array([len(raw)], hdt).tobytes()
        if apart:
            return base64.b64encode(head).decode() + base64.b64encode(raw).decode(), head + raw
        return base64.b64encode(head + raw).decode(), head + raw
    chunks = [raw[i : i + block] for i in range(0, len(raw), block)] or [b""]
    comp = [zlib.compress(c) for c in chunks]
    last = len(chunks[-1]) if len(chunks[-1]) != block else 0
    head = np.array([len(chunks), block, last, *[len(c) for c in comp]], hdt).tobytes()
    body = b"".join(comp)
    if apart:
        return base64.b64encode(head).decode() + base64.b64encode(body).decode(), head + body
    return base64.b64encode(head + body).decode(), head + body


def _vtp(fmt, *, header="u4", compress=False, apart=True, endian="<", strips=False):
    pts = V.astype(np.float32).ravel()
    if strips:  # each quad as a 4-vertex strip: a, b, d, c
        conn = np.array([[q[0], q[1], q[3], q[2]] for q in QUADS], dtype=np.int64).ravel()
    else:
        conn = np.array(QUADS, dtype=np.int64).ravel()
    offs = np.arange(4, 4 * len(QUADS) + 1, 4, dtype=np.int64)
    arrays = [
        ("Float32", pts, 'NumberOfComponents="3"', "points"),
        ("Int64", conn, 'Name="connectivity"', "c"),
        ("Int64", offs, 'Name="offsets"', "o"),
    ]
    attrs = f'byte_order="{"LittleEndian" if endian == "<" else "BigEndian"}"'
    attrs += f' header_type="{"UInt64" if header == "u8" else "UInt32"}"'
    if compress:
        attrs += ' compressor="vtkZLibDataCompressor"'
    texts, appended, raw_app, offset = [], "", b"", 0
    for kind, arr, extra, _ in arrays:
        if fmt == "ascii":
            body = " ".join(str(x) for x in arr.tolist())
            texts.append(f'<DataArray type="{kind}" {extra} format="ascii">{body}</DataArray>')
            continue
        enc, raw = _vtk_block(arr, header=header, compress=compress, apart=apart, endian=endian)
        if fmt == "binary":
            texts.append(
                f'<DataArray type="{kind}" {extra} format="binary">\n  {enc}\n</DataArray>'
            )
        elif fmt == "appended-base64":
            texts.append(
                f'<DataArray type="{kind}" {extra} format="appended" offset="{len(appended)}"/>'
            )
            appended += enc
        else:  # appended raw
            texts.append(f'<DataArray type="{kind}" {extra} format="appended" offset="{offset}"/>')
            raw_app += raw
            offset += len(raw)
    cells = "Strips" if strips else "Polys"
    n_strips = len(QUADS) if strips else 0
    xml = (
        f'<?xml version="1.0"?>\n<VTKFile type="PolyData" version="1.0" {attrs}>\n<PolyData>\n'
        f'<Piece NumberOfPoints="8" NumberOfVerts="0" NumberOfLines="0" '
        f'NumberOfStrips="{n_strips}" NumberOfPolys="{0 if strips else 6}">\n'
        f"<Points>{texts[0]}</Points>\n<{cells}>{texts[1]}{texts[2]}</{cells}>\n"
        "</Piece>\n</PolyData>\n"
    ).encode()
    if fmt == "appended-base64":
        xml += f'<AppendedData encoding="base64">\n_{appended}\n</AppendedData>\n'.encode()
    elif fmt == "appended-raw":
        xml += b'<AppendedData encoding="raw">\n_' + raw_app + b"\n</AppendedData>\n"
    return xml + b"</VTKFile>\n"


ENCODINGS = [("ascii", False, "u4", True)] + [
    (fmt, compress, header, apart)
    for fmt in ("binary", "appended-base64", "appended-raw")
    for compress in (False, True)
    for header in ("u4", "u8")
    for apart in (True, False)
]


@pytest.mark.parametrize("fmt, compress, header, apart", ENCODINGS)
def test_vtp_every_encoding(tmp_path, fmt, compress, header, apart):
    p = tmp_path / "cube.vtp"
    p.write_bytes(_vtp(fmt, header=header, compress=compress, apart=apart))
    v, t = read_mesh(p)
    assert v.shape == (8, 3) and t.shape == (12, 3)
    assert _triangle_set(v, t) == EXPECTED


def test_vtp_big_endian_and_strips(tmp_path):
    p = tmp_path / "be.vtp"
    p.write_bytes(_vtp("binary", compress=True, endian=">"))
    assert _triangle_set(*read_mesh(p)) == EXPECTED
    p.write_bytes(_vtp("ascii", strips=True))
    v, t = read_mesh(p)
    # the strip a, b, d, c of quad a, b, c, d gives (a, b, d) then, winding swapped, (d, b, c)
    strip_tris = np.array([t_ for q in QUADS for t_ in ([q[0], q[1], q[3]], [q[3], q[1], q[2]])])
    assert _triangle_set(v, t) == _triangle_set(V, strip_tris)
    # a strip alternates its winding: every triangle faces out of the cube like the quads
    centre = v.mean(axis=0)
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    outward = np.einsum("ij,ij->i", n, v[t].mean(axis=1) - centre)
    ref = np.cross(V[TRIS[:, 1]] - V[TRIS[:, 0]], V[TRIS[:, 2]] - V[TRIS[:, 0]])
    ref_out = np.einsum("ij,ij->i", ref, V[TRIS].mean(axis=1) - V.mean(axis=0))
    assert np.all(np.sign(outward) == np.sign(ref_out[0]))


def test_stl_ascii_and_binary(tmp_path):
    facets = V[TRIS]
    text = ["solid cube"]
    for f in facets:
        text += ["facet normal 0 0 0", " outer loop"]
        text += [f"  vertex {x:.9g} {y:.9g} {z:.9g}" for x, y, z in f]
        text += [" endloop", "endfacet"]
    (tmp_path / "a.stl").write_text("\n".join(text + ["endsolid cube"]) + "\n")
    header = b"solid but binary".ljust(80, b" ")  # a binary file whose header says solid
    recs = b"".join(
        struct.pack("<3f", 0, 0, 0) + f.astype("<f4").tobytes() + b"\0\0" for f in facets
    )
    (tmp_path / "b.stl").write_bytes(header + struct.pack("<I", len(facets)) + recs)
    for name in ("a.stl", "b.stl"):
        v, t = read_mesh(tmp_path / name)
        assert len(v) == 8, name  # shared vertices merged
        assert {tuple(map(tuple, np.round(v[x], 6))) for x in t} == {
            tuple(map(tuple, np.round(V[x], 6))) for x in TRIS
        }


def test_obj_polygons_slashes_and_negative_indices(tmp_path):
    lines = ["# cube", "o cube"] + [f"v {x} {y} {z}" for x, y, z in V] + ["vn 0 0 1", "vt 0 0"]
    for k, q in enumerate(QUADS):
        if k % 2:
            lines.append("f " + " ".join(f"{i + 1}/1/1" for i in q))
        else:
            lines.append("f " + " ".join(str(i - 8) for i in q))  # -8 is the first vertex
    p = tmp_path / "cube.obj"
    p.write_text("\n".join(lines) + "\n")
    v, t = read_mesh(p)
    assert _triangle_set(v, t) == EXPECTED


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("x.ply", b"ply", "cannot read meshes"),
        ("x.vtp", b"<VTKFile type='UnstructuredGrid'/>", "not PolyData"),
        ("x.vtp", b'<!DOCTYPE x [<!ENTITY a "b">]><VTKFile/>', "refused"),
        ("x.vtp", b"<VTKFile", "well-formed"),
        ("x.stl", b"not a mesh at all", "neither a binary STL"),
        ("x.obj", b"v 0 0 0\nf 1 2 3\n", "outside"),
    ],
)
def test_damaged_files_raise(tmp_path, name, content, match):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(FileFormatError, match=match):
        read_mesh(p)


def test_compressed_block_that_inflates_wrong_is_refused(tmp_path):
    good = _vtp("binary", compress=True)
    bad = good.replace(b'header_type="UInt32"', b'header_type="UInt32"')
    # announce a bigger block than the zlib data holds
    p = tmp_path / "bad.vtp"
    data = bytearray(bad)
    i = data.index(b'format="binary">') + len(b'format="binary">\n  ')
    head = base64.b64decode(bytes(data[i : i + 24]))  # header of the points: 4 words
    words = list(struct.unpack("<4I", head[:16]))
    words[2] = words[2] + 40 if words[2] else 40
    enc = base64.b64encode(struct.pack("<4I", *words)).decode().encode()
    data[i : i + len(enc)] = enc
    p.write_bytes(bytes(data))
    with pytest.raises(FileFormatError):
        read_mesh(p)


def test_find_mesh_in_geometry_folder(tmp_path):
    (tmp_path / "Geometry").mkdir()
    target = tmp_path / "Geometry" / "bone.obj"
    target.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    assert find_mesh("bone.obj", [tmp_path / "nowhere", tmp_path]) == target
    assert find_mesh(str(target), []) == target
    assert find_mesh("other.obj", [tmp_path]) is None
