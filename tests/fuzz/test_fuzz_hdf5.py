"""Fuzz test of the HDF5 trial store on damaged and hostile copies of a real store.

The base store is written by ``save_trial`` (two trials: one with every field
and a typed tree of every kind, one long trial whose arrays are chunked and
gzip-compressed). Each case is either byte-level damage of that file (bit
flips, byte sets, truncation, splices; a third of them in the first 4 KiB,
where the superblock and the root group live) or a structural change made
with h5py (hard-link loops and shared objects, soft, dangling and external
links, external raw storage, virtual datasets, huge declared shapes, other
dtypes and shapes, array or wrong-typed attributes, deleted or moved items,
deep nesting, unknown type tags, several of these at once). Every case runs
through :func:`read_store` (``save_trial`` adding a trial to a copy,
``list_trials``, ``load_trial`` and ``load_result_units`` of each trial,
``save_trial`` replacing a trial) in a memory-limited child process (see
``fuzz_harness``) with the read cap lowered to 64 MiB; the test passes when
every case reads or raises an AhbmError naming the file (no other exception,
no hang, no crash, no growth of the peak memory beyond the read cap).

``store_cases(n, seed)`` is shared with ``benchmarks/fuzz_hdf5.py``, which runs
the campaign at full size.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
from fuzz_harness import Case, campaign, mutate

#: The read cap in the child and the memory the child may add on top of its imports.
READ_CAP = 64 * 2**20
MEMORY_LIMIT = 768 * 2**20


def base_trials():
    """Two trials: every field and tree type (small), and a long one (chunked arrays)."""
    from ahbm.io import Event, ForcePlate, OpenSimTable, Trial

    rng = np.random.default_rng(0)
    n, m = 30, 4
    pts = rng.normal(size=(n, m, 3))
    pts[3, 1] = np.nan
    plate = ForcePlate(
        force=rng.normal(size=(4 * n, 3)),
        moment=rng.normal(size=(4 * n, 3)),
        cop=rng.normal(size=(4 * n, 3)),
        free_moment=rng.normal(size=(4 * n, 3)),
        corners=rng.random((4, 3)),
        origin=rng.random(3),
        rate=400.0,
        plate_type=2,
    )
    df = pd.DataFrame(
        rng.normal(size=(5, 2)),
        index=pd.Index(np.arange(5) / 100.0, name="time"),
        columns=pd.MultiIndex.from_tuples([("hip", "x"), ("knee", "y")], names=["j", "c"]),
    )
    df.attrs["units"] = "rad"
    table = OpenSimTable(
        data=pd.DataFrame(rng.normal(size=(4, 2)), columns=["time", "q"]),
        name="ik",
        in_degrees=True,
        angle_columns=["q"],
        header={"version": "1"},
        comments=["c"],
        source="x.mot",
    )
    full = Trial(
        points=pts,
        point_labels=["LASI", "a/b", "ünï", "M5"],
        point_rate=100.0,
        point_descriptions=["", "d", "", ""],
        point_residuals=rng.random((n, m)),
        point_mask=rng.random((n, m)) > 0.1,
        analogs=rng.normal(size=(4 * n, 2)),
        analog_labels=["Fx", "EMG"],
        analog_units=["N", "V"],
        analog_descriptions=["", ""],
        analog_rate=400.0,
        first_frame=7,
        force_plates=[plate],
        events=[Event("Foot Strike", 0.1, "Left", ""), Event("Foot Off", 0.2, "Right", "x")],
        subject={"name": "S01", "mass": 70.5, "tags": ["a", "b"], "nothing": None},
        parameters={"POINT": {"RATE": np.float32(100.0), "LABELS": ["A", "B"], "USED": 4}},
        results={
            "knee": {"angle": rng.normal(size=(n, 3)), "ok": True},
            "cycles": [np.arange(3), ("x", 2.5), b"\x00\x01"],
            "text": "with\x00nul",
            "names": np.array([["a", "b"], ["c", "d"]]),
            "frame": df,
            "ik": table,
            "count": np.int16(3),
            "z": np.array([1 + 2j, 3 - 1j]),
        },
        source="full.c3d",
    )
    t = np.arange(1500) / 100.0
    long = Trial(
        points=np.stack([np.sin(t + k) for k in range(6)], axis=1)[:, :2, None]
        * np.ones((1, 1, 3)),
        point_labels=["A", "B"],
        point_rate=100.0,
        analogs=np.cos(np.arange(6000) / 400.0)[:, None] * np.ones((1, 3)),
        analog_labels=["a", "b", "c"],
        analog_rate=400.0,
        results={"angle": np.sin(t)[:, None] * np.ones((1, 3))},
        source="long.c3d",
    )
    return full, long


def base_store(path) -> bytes:
    """Write the base store to `path`; return its bytes."""
    from ahbm.io import save_trial

    full, long = base_trials()
    save_trial(full, path, name="full", result_units={("knee", "angle"): "rad"})
    save_trial(long, path, name="long")
    return Path(path).read_bytes()


def read_store(path) -> None:
    """Everything a user does with a store: add a trial, list, load, read units."""
    import shutil

    from ahbm.errors import AhbmError
    from ahbm.io import Trial, list_trials, load_result_units, load_trial, save_trial

    # adding to the damaged store first (on a copy), whether or not it loads
    copy = Path(path).with_name("added.h5")
    shutil.copyfile(path, copy)
    t = Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=10.0)
    try:
        save_trial(t, copy, name="added")
        assert list_trials(copy)[-1] == "added"
    except AhbmError:
        pass
    finally:
        copy.unlink()
    for name in list_trials(path):
        trial = load_trial(path, name)
        assert isinstance(trial, Trial)
        load_result_units(path, name)
    save_trial(t, path, name="long", overwrite=True)  # the other path: rewrite the store


def warm_store() -> None:
    """Load the store code (and the modules it imports on first use) in a fuzz worker."""
    import tempfile

    from ahbm.io import Trial, list_trials, load_result_units, load_trial, save_trial

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "warm.h5"
        save_trial(Trial(points=np.zeros((2, 1, 3)), point_labels=["A"], point_rate=10.0), path)
        for name in list_trials(path):
            load_trial(path, name)
            load_result_units(path, name)


def read_store_isolated(path) -> None:
    """Both trials of the base store read with ``load_trial(..., isolate=True)``."""
    from ahbm.io import load_trial

    for name in ("full", "long"):
        load_trial(path, name, isolate=True)


# ----------------------------------------------------------------------------- structural damage


def _objects(f) -> tuple[list[str], list[str]]:
    """Paths of every group and every dataset (hard links only, as written)."""
    groups, datasets = ["/"], []

    def visit(name, obj):
        (groups if isinstance(obj, h5py.Group) else datasets).append("/" + name)

    f.visititems(visit)
    return groups, datasets


def _pick(rng, items):
    return items[int(rng.integers(0, len(items)))]


def _replace(f, path: str, make) -> None:
    parent, _, name = path.rpartition("/")
    group = f[parent or "/"]
    attrs = dict(group[name].attrs) if name in group else {}
    del group[name]
    ds = make(group, name)
    for k, v in attrs.items():
        if ds is not None:
            ds.attrs[k] = v


_HUGE = [10**9, 10**8, 2**40, 2**62, 4294967152]
_DTYPES = [
    h5py.string_dtype(),
    np.dtype([("a", "<i4"), ("b", "<f8")]),
    h5py.ref_dtype,
    h5py.vlen_dtype(np.int32),
    h5py.opaque_dtype(np.dtype("V7")),
    h5py.enum_dtype({"A": 0, "B": 1}, basetype="i1"),
    np.dtype("float16"),
    np.dtype("int8"),
    np.dtype("bool"),
    np.dtype("(2,3)f8"),
    np.dtype(">f8"),
    np.dtype("S4"),
]


def _m_hard_loop(f, rng, groups, datasets, secret):
    g = _pick(rng, groups)
    ancestors = [p for p in groups if g == p or g.startswith(p.rstrip("/") + "/")]
    f[g][f"loop{int(rng.integers(0, 99))}"] = f[_pick(rng, ancestors)]
    return f"hard link in {g} to an ancestor"


def _m_shared(f, rng, groups, datasets, secret):
    obj = _pick(rng, datasets + groups[1:])
    g = _pick(rng, groups)
    f[g][f"shared{int(rng.integers(0, 99))}"] = f[obj]
    return f"{obj} also linked from {g}"


def _m_external(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets + groups[1:])
    where = _pick(rng, [secret, "case.h5", "/etc/hostname", "missing.h5"])
    _replace(f, target, lambda g, n: g.__setitem__(n, h5py.ExternalLink(where, "/data")))
    return f"{target} -> external link to {where}"


def _m_soft(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets + groups[1:])
    to = _pick(rng, [*datasets, *groups, "/nowhere", "/trials/full/../full"])
    _replace(f, target, lambda g, n: g.__setitem__(n, h5py.SoftLink(to)))
    return f"{target} -> soft link to {to}"


def _m_huge(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets)
    old = f[target]
    shape = old.shape if old.shape else (1,)
    shape = (int(_pick(rng, _HUGE)),) + tuple(shape[1:])
    dtype = old.dtype if old.dtype.kind != "O" else h5py.string_dtype()
    chunks = (1,) + tuple(max(1, s) for s in shape[1:])
    _replace(f, target, lambda g, n: g.create_dataset(n, shape=shape, dtype=dtype, chunks=chunks))
    return f"{target} declares {shape} (empty chunked storage)"


def _m_contiguous_empty(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets)
    shape = (int(rng.choice([10**6, 10**7, 3 * 10**7])), 3)
    _replace(f, target, lambda g, n: g.create_dataset(n, shape=shape, dtype="f8"))
    return f"{target} declares {shape} (contiguous, never written)"


def _m_dtype(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets)
    old = f[target]
    shape = old.shape if old.shape is not None else (2,)
    dtype = _DTYPES[int(rng.integers(0, len(_DTYPES)))]
    _replace(f, target, lambda g, n: g.create_dataset(n, shape=shape, dtype=dtype))
    return f"{target} as {dtype}"


def _m_shape(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets)
    shape = _pick(rng, [(), (0,), (5,), (2, 2), (30, 4), (30, 4, 2), (1, 1, 1, 1), None])
    if shape is None:
        _replace(f, target, lambda g, n: g.create_dataset(n, data=h5py.Empty("f8")))
    else:
        _replace(f, target, lambda g, n: g.create_dataset(n, data=np.ones(shape)))
    return f"{target} with shape {shape}"


def _m_attr(f, rng, groups, datasets, secret):
    obj = f[_pick(rng, groups + datasets)]
    keys = list(obj.attrs) or ["ahbm_type"]
    key = _pick(rng, [*keys, "ahbm_format", "ahbm_format_version", "count", "point_rate"])
    value = _pick(
        rng,
        [
            np.array(["ahbm-trial-store", "x"]),
            np.arange(3.0),
            "1.0",
            "9.0",
            "x.y",
            "",
            -5,
            2**62,
            np.nan,
            np.inf,
            h5py.Empty("f8"),
            np.zeros((300, 300)),
            "dict",
            "list",
            "dataframe",
            "bogus",
            b"\xff\xfe",
        ],
    )
    obj.attrs[key] = value
    return f"attribute {key} of {obj.name} = {str(value)[:30]}"


def _m_delete(f, rng, groups, datasets, secret):
    if rng.random() < 0.3:
        obj = f[_pick(rng, groups + datasets)]
        keys = list(obj.attrs)
        if keys:
            key = _pick(rng, keys)
            del obj.attrs[key]
            return f"delete attribute {key} of {obj.name}"
    target = _pick(rng, datasets + groups[1:])
    del f[target]
    return f"delete {target}"


def _m_move(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets + groups[2:])
    dest = _pick(rng, groups)
    name = f"{dest.rstrip('/')}/moved{int(rng.integers(0, 99))}"
    if name.startswith(target + "/"):
        return "no move"
    f.move(target, name)
    return f"move {target} to {name}"


def _m_deep(f, rng, groups, datasets, secret):
    g = f[_pick(rng, [p for p in groups if "/results" in p] or groups)]
    depth = int(rng.choice([70, 200]))
    for i in range(depth):
        g = g.create_group(f"d{i}")
        g.attrs["ahbm_type"] = "dict"
    return f"{depth} nested dicts"


def _m_external_storage(f, rng, groups, datasets, secret):
    target = _pick(rng, datasets)
    raw = Path(secret).with_suffix(".raw")
    if rng.random() < 0.5:
        _replace(
            f,
            target,
            lambda g, n: g.create_dataset(n, shape=(16,), dtype="u1", external=[(str(raw), 0, 16)]),
        )
        return f"{target} stored in external raw file {raw}"
    layout = h5py.VirtualLayout(shape=(4,), dtype="f8")
    layout[:] = h5py.VirtualSource(secret, "data", shape=(4,))
    _replace(f, target, lambda g, n: g.create_virtual_dataset(n, layout))
    return f"{target} as a virtual dataset of {secret}"


def _m_tag(f, rng, groups, datasets, secret):
    tree = [p for p in groups + datasets if any(k in p for k in ("results", "subject", "param"))]
    obj = f[_pick(rng, tree or datasets)]
    tag = _pick(rng, ["dict", "list", "tuple", "opensim_table", "dataframe", "none", "str",
                      "str_bytes", "bytes", "bool", "int", "float", "list_str", "npscalar",
                      "ndarray", "str_array", "pickle"])  # fmt: skip
    obj.attrs["ahbm_type"] = tag
    return f"{obj.name} tagged {tag}"


def _m_many(f, rng, groups, datasets, secret):
    g = f.require_group("/trials/full/results/many")
    g.attrs["ahbm_type"] = "list"
    n = int(rng.choice([100, 300]))
    for i in range(n):
        g.create_dataset(str(i), data=np.float64(i)).attrs["ahbm_type"] = "float"
    return f"a list of {n} items"


MUTATIONS = [
    _m_hard_loop,
    _m_shared,
    _m_external,
    _m_soft,
    _m_huge,
    _m_contiguous_empty,
    _m_dtype,
    _m_shape,
    _m_attr,
    _m_delete,
    _m_move,
    _m_deep,
    _m_external_storage,
    _m_tag,
    _m_many,
]


def structural(raw: bytes, rng, folder: Path, secret: str) -> tuple[bytes, str]:
    """One to three structural changes of the store `raw`, made with h5py."""
    path = folder / "work.h5"
    path.write_bytes(raw)
    notes = []
    with h5py.File(path, "r+") as f:
        for _ in range(int(rng.choice([1, 1, 1, 2, 3]))):
            groups, datasets = _objects(f)
            mutation = MUTATIONS[int(rng.integers(0, len(MUTATIONS)))]
            try:
                notes.append(mutation(f, rng, groups, datasets, secret))
            except (KeyError, ValueError, TypeError, OSError, RuntimeError) as err:
                notes.append(f"{mutation.__name__} not applicable ({type(err).__name__})")
    data = path.read_bytes()
    path.unlink()
    return data, "; ".join(notes)


def _secret(folder: Path) -> str:
    """A file outside the store that external links and virtual datasets point to."""
    secret = folder / "secret.h5"
    if not secret.exists():
        with h5py.File(secret, "w") as f:
            f["data"] = np.arange(4.0)
        secret.with_suffix(".raw").write_bytes(b"not for your eyes" * 4)
    return str(secret)


def store_cases(n: int, seed: int, *, folder=None) -> list[Case]:
    """`n` damaged stores: half byte-level, half structural (reproducible from `seed`)."""
    folder = Path(folder or tempfile.mkdtemp(prefix="ahbm-fuzz-h5-"))
    raw = base_store(folder / "base.h5")
    secret = _secret(folder)
    cases = []
    for i in range(n):
        case_seed = seed * 100_000 + i
        rng = np.random.default_rng(case_seed)
        if i % 2 == 0:
            region = (0, 4096) if i % 6 == 0 else None
            data, note = mutate(raw, rng, region=region)
            if i % 10 == 4:  # two mutations
                data, more = mutate(data, rng)
                note = f"{note}; {more}"
        else:
            data, note = structural(raw, rng, folder, secret)
        cases.append(Case(case_seed, data, ".h5", note))
    return cases


def test_fuzz_hdf5_store(tmp_path):
    cases = store_cases(200, 1, folder=tmp_path)
    structural_notes = [c.note for i, c in enumerate(cases) if i % 2 == 1]
    applied = [n for n in structural_notes if "not applicable" not in n]
    assert len(applied) >= 0.8 * len(structural_notes), structural_notes
    campaign(
        read_store,
        cases,
        what="HDF5 store",
        min_ok=10,
        min_ahbm=50,
        timeout=30.0,
        memory_limit=MEMORY_LIMIT,
        max_peak=READ_CAP,
        env={"AHBM_MAX_READ_BYTES": str(READ_CAP)},
        warmup=warm_store,
    )
