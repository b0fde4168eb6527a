"""Display meshes of OpenSim models: ``.vtp``, ``.stl`` and ``.obj`` files, and where to find them.

OpenSim models name a mesh file per display geometry (``<Mesh><mesh_file>femur_r.vtp``);
OpenSim looks for it beside the model, in the model's ``Geometry`` folder and in
the installation's geometry folder. :func:`read_mesh` reads the three formats
OpenSim reads into triangles; :func:`find_mesh` searches the folders.

Formats
-------
- ``.vtp``: VTK XML PolyData (``<VTKFile type="PolyData">``), data arrays in
  ``ascii``, inline ``binary`` (base64) or ``appended`` form (``base64`` or
  ``raw``), uncompressed or compressed by ``vtkZLibDataCompressor``, with
  ``UInt32`` or ``UInt64`` headers, little- or big-endian. Polygons (``Polys``,
  fanned into triangles) and triangle strips (``Strips``) are read; vertices
  and lines are not surfaces and are ignored.
- ``.stl``: ASCII (``solid ... facet ... endsolid``) and binary (80-byte header,
  triangle count, 50 bytes per triangle). A binary file is recognised by its
  size, even when its header starts with ``solid``.
- ``.obj``: Wavefront ``v`` and ``f`` records (``f 1 2 3``, ``f 1/1/1 ...``,
  negative indices counted from the end); polygons are fanned into triangles.

Security: the XML is parsed with expat after refusing document type
declarations and entities, and zlib blocks may not inflate beyond the sizes
their headers announce.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from pathlib import Path

import numpy as np

from ahbm.errors import FileFormatError

__all__ = ["MESH_SUFFIXES", "find_mesh", "read_mesh"]

#: File suffixes that :func:`read_mesh` reads.
MESH_SUFFIXES = (".vtp", ".stl", ".obj")

_VTK_TYPES = {
    "Int8": "i1",
    "UInt8": "u1",
    "Int16": "i2",
    "UInt16": "u2",
    "Int32": "i4",
    "UInt32": "u4",
    "Int64": "i8",
    "UInt64": "u8",
    "Float32": "f4",
    "Float64": "f8",
}
_MAX_BYTES = 1 << 30  # no mesh array may inflate beyond 1 GiB


def read_mesh(path) -> tuple[np.ndarray, np.ndarray]:
    """Read a triangle mesh from a ``.vtp``, ``.stl`` or ``.obj`` file.

    Parameters
    ----------
    path : str or Path
        The mesh file; its suffix selects the format (see the module notes).

    Returns
    -------
    vertices : ndarray, shape (n_vertices, 3)
        Vertex coordinates as written in the file (OpenSim's meshes: m, in the
        body frame).
    triangles : ndarray of int64, shape (n_triangles, 3)
        Vertex indices of each triangle (0-based); polygons are fanned.

    Raises
    ------
    FileFormatError
        An unknown suffix, a damaged file, or indices outside the vertices.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tri.obj"
    >>> _ = p.write_text("v 0 0 0\\nv 1 0 0\\nv 0 1 0\\nf 1 2 3\\n")
    >>> v, t = read_mesh(p)
    >>> v.shape, t.tolist()
    ((3, 3), [[0, 1, 2]])
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in MESH_SUFFIXES:
        raise FileFormatError(
            f"'{path}': cannot read meshes of type '{suffix}'; use {', '.join(MESH_SUFFIXES)}"
        )
    try:
        data = path.read_bytes()
    except OSError as err:
        raise FileFormatError(f"cannot read the mesh file '{path}': {err.strerror}") from err
    try:
        if suffix == ".stl":
            v, t = _read_stl(data)
        elif suffix == ".obj":
            v, t = _read_obj(data)
        else:
            v, t = _read_vtp(data)
    except FileFormatError as err:
        raise FileFormatError(f"mesh file '{path}': {err}") from None
    except (ValueError, struct.error, zlib.error, UnicodeDecodeError) as err:
        raise FileFormatError(f"mesh file '{path}' is damaged: {err}") from None
    v = np.asarray(v, dtype=float).reshape(-1, 3)
    t = np.asarray(t, dtype=np.int64).reshape(-1, 3)
    if not np.isfinite(v).all():
        raise FileFormatError(f"mesh file '{path}' has non-finite vertex coordinates")
    if t.size and (t.min() < 0 or t.max() >= len(v)):
        raise FileFormatError(
            f"mesh file '{path}' has a triangle index outside its {len(v)} vertices"
        )
    return v, t


def find_mesh(name: str, folders) -> Path | None:
    """The first existing file `name` in `folders` (and their ``Geometry`` subfolders).

    Parameters
    ----------
    name : str
        A mesh file name as an OpenSim model gives it (``femur_r.vtp``), or a
        relative or absolute path.
    folders : sequence of str or Path
        Folders searched in order; each is tried as it is and with
        ``Geometry/`` (OpenSim's layout) appended. An absolute `name` is taken
        as it is.

    Returns
    -------
    Path or None
        The file, or None when no folder has it.

    Examples
    --------
    >>> find_mesh("no_such_mesh.vtp", [".", "/tmp"]) is None
    True
    """
    p = Path(name)
    if p.is_absolute():
        return p if p.is_file() else None
    for folder in folders:
        for base in (Path(folder), Path(folder) / "Geometry", Path(folder) / "geometry"):
            cand = base / p
            if cand.is_file():
                return cand
    return None


# ----------------------------------------------------------------------------
# STL
# ----------------------------------------------------------------------------


def _read_stl(data: bytes):
    if len(data) >= 84:
        (n,) = struct.unpack_from("<I", data, 80)
        if len(data) == 84 + 50 * n:
            rec = np.frombuffer(
                data,
                dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                count=n,
                offset=84,
            )
            return _unique_vertices(rec["v"].reshape(-1, 3).astype(float))
    text = data.decode("ascii", errors="strict")
    if not text.lstrip().lower().startswith("solid"):
        raise FileFormatError("neither a binary STL (size mismatch) nor an ASCII one ('solid')")
    nums = re.findall(r"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", text, flags=re.M | re.I)
    if len(nums) % 3:
        raise FileFormatError(f"ASCII STL with {len(nums)} vertices, not 3 per facet")
    return _unique_vertices(np.array(nums, dtype=float))


def _unique_vertices(corners: np.ndarray):
    """Shared vertices and triangles of a triangle soup (n_tri * 3, 3)."""
    if corners.size == 0:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    v, inv = np.unique(corners, axis=0, return_inverse=True)
    return v, inv.reshape(-1, 3)


# ----------------------------------------------------------------------------
# OBJ
# ----------------------------------------------------------------------------


def _read_obj(data: bytes):
    verts, tris = [], []
    for lineno, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        parts = raw.split("#", 1)[0].split()
        if not parts:
            continue
        if parts[0] == "v":
            if len(parts) < 4:
                raise FileFormatError(f"line {lineno}: a vertex needs x y z")
            verts.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f":
            if len(parts) < 4:
                raise FileFormatError(f"line {lineno}: a face needs at least 3 vertices")
            idx = []
            for word in parts[1:]:
                k = int(word.split("/", 1)[0])
                if k == 0:
                    raise FileFormatError(f"line {lineno}: vertex index 0 (indices start at 1)")
                idx.append(k - 1 if k > 0 else len(verts) + k)
            tris.extend([idx[0], idx[i], idx[i + 1]] for i in range(1, len(idx) - 1))
    return np.array(verts, dtype=float).reshape(-1, 3), np.array(tris, dtype=np.int64)


# ----------------------------------------------------------------------------
# VTP (VTK XML PolyData)
# ----------------------------------------------------------------------------


def _split_appended(data: bytes):
    """(XML text without raw appended bytes, raw appended bytes or None)."""
    start = data.find(b"<AppendedData")
    if start < 0:
        return data, None
    head_end = data.find(b">", start)
    if head_end < 0:
        raise FileFormatError("unterminated <AppendedData> element")
    head = data[start : head_end + 1].decode("ascii", errors="replace")
    if 'encoding="raw"' not in head.replace("'", '"'):
        return data, None
    under = data.find(b"_", head_end)
    end = data.rfind(b"</AppendedData>")
    if under < 0 or end < under:
        raise FileFormatError("raw <AppendedData> without '_' or closing tag")
    xml = data[: head_end + 1] + data[end:]
    return xml, data[under + 1 : end]


def _parse_vtk_xml(xml: bytes):
    import xml.parsers.expat as expat

    if re.search(rb"<!(DOCTYPE|ENTITY)", xml, flags=re.I):
        raise FileFormatError("document type declarations and entities are refused")
    root: dict = {"tag": None, "attrs": {}, "children": [], "text": []}
    stack = [root]

    def start(tag, attrs):
        node = {"tag": tag, "attrs": attrs, "children": [], "text": []}
        stack[-1]["children"].append(node)
        stack.append(node)

    def end(tag):
        stack.pop()

    def chars(text):
        stack[-1]["text"].append(text)

    p = expat.ParserCreate()
    p.StartElementHandler, p.EndElementHandler, p.CharacterDataHandler = start, end, chars
    try:
        p.Parse(xml, True)
    except expat.ExpatError as err:
        raise FileFormatError(f"not well-formed XML: {err}") from None
    if not root["children"] or root["children"][0]["tag"] != "VTKFile":
        raise FileFormatError("not a VTK XML file (no <VTKFile> root)")
    return root["children"][0]


def _find(node, tag):
    return [c for c in node["children"] if c["tag"] == tag]


def _read_vtp(data: bytes):
    xml, raw = _split_appended(data)
    vtk = _parse_vtk_xml(xml)
    a = vtk["attrs"]
    if a.get("type") != "PolyData":
        raise FileFormatError(f"VTK file of type {a.get('type')!r}, not PolyData")
    ctx = {
        "endian": ">" if a.get("byte_order") == "BigEndian" else "<",
        "header": "u8" if a.get("header_type") == "UInt64" else "u4",
        "zlib": a.get("compressor", "") == "vtkZLibDataCompressor",
        "raw": raw,
        "appended": None,
    }
    if a.get("compressor") and not ctx["zlib"]:
        raise FileFormatError(f"compressor {a['compressor']!r} is not supported (zlib is)")
    for app in _find(vtk, "AppendedData"):
        if app["attrs"].get("encoding", "base64") == "base64":
            text = "".join(app["text"]).strip()
            ctx["appended"] = text[1:] if text.startswith("_") else text
    polys = _find(vtk, "PolyData")
    if not polys:
        raise FileFormatError("no <PolyData> element")
    verts, tris = [], []
    offset = 0
    for piece in _find(polys[0], "Piece"):
        pts = _find(piece, "Points")
        npts = int(piece["attrs"].get("NumberOfPoints", 0))
        if npts == 0:
            continue
        if not pts or not _find(pts[0], "DataArray"):
            raise FileFormatError("a <Piece> with points has no <Points> data array")
        v = _data_array(_find(pts[0], "DataArray")[0], ctx).astype(float).reshape(-1, 3)
        if len(v) != npts:
            raise FileFormatError(f"<Points> has {len(v)} points, NumberOfPoints says {npts}")
        for cells, strips in (("Polys", False), ("Strips", True)):
            for el in _find(piece, cells):
                arrays = {d["attrs"].get("Name"): d for d in _find(el, "DataArray")}
                if "connectivity" not in arrays or "offsets" not in arrays:
                    raise FileFormatError(f"<{cells}> needs 'connectivity' and 'offsets' arrays")
                conn = _data_array(arrays["connectivity"], ctx).astype(np.int64)
                offs = _data_array(arrays["offsets"], ctx).astype(np.int64)
                tris.append(_cells_to_triangles(conn, offs, strips) + offset)
        verts.append(v)
        offset += len(v)
    if not verts:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    t = np.concatenate(tris) if tris else np.zeros((0, 3), dtype=np.int64)
    return np.concatenate(verts), t


def _cells_to_triangles(conn: np.ndarray, offs: np.ndarray, strips: bool) -> np.ndarray:
    starts = np.concatenate([[0], offs[:-1]])
    if offs.size and (np.any(offs < starts) or offs[-1] > conn.size):
        raise FileFormatError("cell offsets are not increasing or run past the connectivity")
    sizes = offs - starts
    out = []
    if not strips and sizes.size and np.all(sizes == 3):
        return conn[: 3 * sizes.size].reshape(-1, 3)
    for s, n in zip(starts, sizes, strict=True):
        c = conn[s : s + n]
        for i in range(n - 2):
            if strips:  # alternate the winding so that all triangles face one way
                out.append((c[i], c[i + 1], c[i + 2]) if i % 2 == 0 else (c[i + 1], c[i], c[i + 2]))
            else:
                out.append((c[0], c[i + 1], c[i + 2]))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def _data_array(node, ctx) -> np.ndarray:
    attrs = node["attrs"]
    kind = attrs.get("type")
    if kind not in _VTK_TYPES:
        raise FileFormatError(f"DataArray type {kind!r} is not a VTK numeric type")
    dtype = np.dtype(ctx["endian"] + _VTK_TYPES[kind])
    fmt = attrs.get("format", "ascii")
    if fmt == "ascii":
        text = "".join(node["text"]).split()
        return np.array(text, dtype=float if kind.startswith("Float") else np.int64)
    if fmt == "binary":
        return np.frombuffer(_decode_base64_block("".join(node["text"]).strip(), ctx), dtype)
    if fmt == "appended":
        off = int(attrs.get("offset", 0))
        if ctx["raw"] is not None:
            return np.frombuffer(_raw_block(ctx["raw"], off, ctx), dtype)
        if ctx["appended"] is None:
            raise FileFormatError("an appended DataArray but no <AppendedData>")
        return np.frombuffer(_decode_base64_block(ctx["appended"][off:], ctx), dtype)
    raise FileFormatError(f"DataArray format {fmt!r} is unknown (ascii, binary, appended)")


def _b64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=False)


def _decode_base64_block(text: str, ctx) -> bytes:
    """Header + data of one array in base64 (inline, or appended from its offset)."""
    hs = np.dtype(ctx["header"]).itemsize
    hdt = np.dtype(ctx["endian"] + ctx["header"])
    text = re.sub(r"\s+", "", text)
    first = _b64(text[: 4 * -(-hs // 3)])[:hs]  # the first header word, either way
    if len(first) < hs:
        raise FileFormatError("base64 block shorter than its header")
    if not ctx["zlib"]:
        n = int(np.frombuffer(first, hdt)[0])
        if n > _MAX_BYTES:
            raise FileFormatError(f"array announces {n} bytes: refused")
        hl = 4 * -(-hs // 3)
        if text[hl - 1 : hl] == "=":  # header encoded apart
            body = _b64(text[hl : hl + 4 * -(-n // 3)])
        else:
            body = _b64(text[: 4 * -(-(hs + n) // 3)])[hs:]
        if len(body) < n:
            raise FileFormatError("base64 data shorter than its header announces")
        return body[:n]
    nb = int(np.frombuffer(first, hdt)[0])
    if nb < 0 or nb > _MAX_BYTES // 4:
        raise FileFormatError(f"damaged compression header ({nb} blocks)")
    n_head = hs * (3 + nb)
    hl = 4 * -(-n_head // 3)
    apart = n_head % 3 != 0 and text[hl - 1 : hl] == "="  # VTK encodes the header apart
    head = np.frombuffer(_b64(text[:hl])[:n_head], hdt).astype(np.int64)
    if len(head) != 3 + nb:
        raise FileFormatError("base64 compression header is cut short")
    size = int(head[3:].sum())
    if apart:
        body = _b64(text[hl : hl + 4 * -(-size // 3)])
    else:
        body = _b64(text[: 4 * -(-(n_head + size) // 3)])[n_head:]
    return _inflate(head, body)


def _raw_block(raw: bytes, off: int, ctx) -> bytes:
    hs = np.dtype(ctx["header"]).itemsize
    hdt = np.dtype(ctx["endian"] + ctx["header"])
    if not ctx["zlib"]:
        n = int(np.frombuffer(raw[off : off + hs], hdt)[0])
        if off + hs + n > len(raw):
            raise FileFormatError("raw appended data shorter than its header announces")
        return raw[off + hs : off + hs + n]
    nb = int(np.frombuffer(raw[off : off + hs], hdt)[0])
    head = np.frombuffer(raw[off : off + hs * (3 + nb)], hdt).astype(np.int64)
    start = off + hs * (3 + nb)
    return _inflate(head, raw[start : start + int(head[3:].sum())])


def _inflate(head: np.ndarray, body: bytes) -> bytes:
    """zlib blocks of VTK's compressed layout [n_blocks, block, last, sizes...]."""
    nb, block, last = (int(x) for x in head[:3])
    sizes = head[3 : 3 + nb]
    if nb < 0 or len(sizes) != nb or block < 0 or last < 0:
        raise FileFormatError("damaged compression header")
    total = block * (nb - 1) + (last if last else block) if nb else 0
    if total > _MAX_BYTES:
        raise FileFormatError(f"compressed array announces {total} bytes: refused")
    out, pos = [], 0
    for k, size in enumerate(sizes):
        want = block if (k < nb - 1 or last == 0) else last
        d = zlib.decompressobj()
        chunk = d.decompress(body[pos : pos + int(size)], want + 1)
        if len(chunk) != want:
            raise FileFormatError(f"zlib block {k} inflates to {len(chunk)} bytes, not {want}")
        out.append(chunk)
        pos += int(size)
    return b"".join(out)
