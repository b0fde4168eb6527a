"""Hostile and damaged HDF5 stores: links, loops, huge declarations, wrong types, isolation.

Every store here is a real store written by ``save_trial`` and then altered with
h5py the way an attacker or a broken tool would. Each must give a
FileFormatError whose message names the file and the object at fault, before
anything large is allocated and without following a link out of the file.
"""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap

import h5py
import numpy as np
import pandas as pd
import pytest
from io_helpers import assert_trials_equal, make_full_trial

from ahbm._internal.isolation import run_isolated
from ahbm.errors import DataError, FileFormatError
from ahbm.io import Trial, list_trials, load_result_units, load_trial, save_trial


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "s.h5"
    save_trial(make_full_trial(1), path, name="a")
    return path


def _refused(path, *objects, match=None, **kwargs):
    """load_trial raises FileFormatError naming the file and every object in `objects`."""
    with pytest.raises(FileFormatError) as info:
        load_trial(path, "a", **kwargs)
    message = str(info.value)
    assert str(path) in message, message
    for obj in objects:
        assert obj in message, message
    if match is not None:
        assert match in message, message
    return message


# ----------------------------------------------------------------------------- links


def test_hard_link_loop(store):
    with h5py.File(store, "r+") as f:
        f["trials/a/results/loop"] = f["trials/a/results"]
    _refused(store, "/trials/a/results/loop", match="hard-link loop")
    with pytest.raises(FileFormatError, match="hard-link loop"):
        load_result_units(store, "a")
    before = _digest(store)
    with pytest.raises(FileFormatError, match="hard-link loop"):
        save_trial(make_full_trial(2), store, name="b")  # not extended
    assert _digest(store) == before


def test_hard_link_to_the_root_and_exponential_sharing(tmp_path, store):
    with h5py.File(store, "r+") as f:
        f["trials/a/subject/up"] = f["/"]
    _refused(store, "/trials/a/subject/up", match="second time")

    # a chain of groups each linking the next one twice: 2**40 paths, 41 objects
    path = tmp_path / "dag.h5"
    save_trial(make_full_trial(1), path, name="a")
    with h5py.File(path, "r+") as f:
        g = f["trials/a/results"]
        nodes = [g.create_group(f"n{i}") for i in range(40)]
        for i, node in enumerate(nodes):
            node.attrs["ahbm_type"] = "dict"
            if i + 1 < len(nodes):
                node["left"] = nodes[i + 1]
                node["right"] = nodes[i + 1]
    _refused(path, "/trials/a/results/n0/left/left", match="second time")


def test_external_link_to_another_file_is_not_followed(tmp_path, store):
    secret = tmp_path / "secret.h5"
    with h5py.File(secret, "w") as f:
        f["data"] = np.arange(5.0)
    with h5py.File(store, "r+") as f:
        f["trials/a/results/stolen"] = h5py.ExternalLink(str(secret), "/data")
    message = _refused(store, "/trials/a/results/stolen", match="external link")
    assert str(secret) in message
    # opted in: the link is followed (the caller trusts the file)
    trial = load_trial(store, "a", follow_links=True)
    np.testing.assert_array_equal(trial.results["stolen"], np.arange(5.0))


def test_external_link_replacing_the_points(tmp_path, store):
    with h5py.File(store, "r+") as f:
        del f["trials/a/points"]
        f["trials/a/points"] = h5py.ExternalLink("/etc/passwd", "/x")
    _refused(store, "/trials/a/points", match="external link")
    with h5py.File(store, "r+") as f:
        del f["trials"]
        f["trials"] = h5py.ExternalLink(str(store), "/trials")  # a file linking to itself
    with pytest.raises(FileFormatError, match="/trials is an external link"):
        list_trials(store)


def test_data_stored_in_other_files(tmp_path, store):
    raw = tmp_path / "secret.raw"
    raw.write_bytes(b"private bytes" * 4)
    with h5py.File(store, "r+") as f:
        ds = f["trials/a/results"].create_dataset(
            "raw", shape=(16,), dtype="u1", external=[(str(raw), 0, 16)]
        )
        ds.attrs["ahbm_type"] = "bytes"
    _refused(store, "/trials/a/results/raw", match="external raw files")

    path = tmp_path / "virtual.h5"
    save_trial(make_full_trial(1), path, name="a")
    layout = h5py.VirtualLayout(shape=(4,), dtype="f8")
    layout[:] = h5py.VirtualSource(str(tmp_path / "other.h5"), "data", shape=(4,))
    with h5py.File(path, "r+") as f:
        f["trials/a/results"].create_virtual_dataset("v", layout)
    _refused(path, "/trials/a/results/v", match="virtual dataset")


def test_soft_and_dangling_links(store):
    with h5py.File(store, "r+") as f:
        f["trials/a/results/alias"] = h5py.SoftLink("/trials/a/points")
    _refused(store, "/trials/a/results/alias", match="soft link to '/trials/a/points'")
    # opted in, the alias reaches an object already read: still refused as a second visit
    _refused(store, "/trials/a/results/alias", match="second time", follow_links=True)
    with h5py.File(store, "r+") as f:
        del f["trials/a/results/alias"]
        f["trials/a/results/gone"] = h5py.SoftLink("/nowhere")
    _refused(store, "/trials/a/results/gone", match="soft link")
    _refused(store, "/trials/a/results/gone", match="dangling link", follow_links=True)


# ----------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("n_frames", [10**9, 10**8, 2**62])
def test_huge_declared_shape_in_a_tiny_file(tmp_path, n_frames):
    path = tmp_path / "huge.h5"
    one_marker = Trial(points=np.ones((10, 1, 3)), point_labels=["A"], point_rate=100.0)
    save_trial(one_marker, path, name="a")
    with h5py.File(path, "r+") as f:
        del f["trials/a/points"]
        f["trials/a"].create_dataset(
            "points", shape=(n_frames, 1, 3), dtype="f8", chunks=(1024, 1, 3)
        )
    assert path.stat().st_size < 20_000
    _refused(path, "/trials/a/points", match=f"declares shape ({n_frames}, 1, 3)")


def test_huge_declared_contiguous_and_label_counts(tmp_path, store):
    with h5py.File(store, "r+") as f:
        del f["trials/a/analogs"]
        f["trials/a"].create_dataset("analogs", shape=(10**8, 3), dtype="f8")  # never written
    _refused(store, "/trials/a/analogs", match="occupies only 0 B")

    path = tmp_path / "labels.h5"
    save_trial(make_full_trial(1), path, name="a")
    with h5py.File(path, "r+") as f:
        del f["trials/a/point_labels"]
        f["trials/a"].create_dataset(
            "point_labels", shape=(10**9,), dtype=h5py.string_dtype(), chunks=(4096,)
        )
    _refused(path, "/trials/a/point_labels", match="expected 5")  # 5 points


def test_memory_cap_applies_to_the_whole_read(tmp_path):
    path = tmp_path / "big.h5"
    trial = make_full_trial(1, n_frames=4000, n_points=10)  # ~1 MB of points
    save_trial(trial, path, name="a")
    message = _refused(path, "/trials/a/points", match="memory cap", max_bytes=500_000)
    assert "max_bytes=" in message
    assert_trials_equal(trial, load_trial(path, max_bytes=50_000_000))
    with pytest.raises(DataError, match="max_bytes"):
        load_trial(path, max_bytes=-1)


# ----------------------------------------------------------------------------- types


@pytest.mark.parametrize(
    "item,dtype,match",
    [
        ("points", h5py.string_dtype(), "expected floats"),
        ("points", np.dtype([("x", "f8"), ("y", "f8")]), "never writes"),
        ("points", h5py.ref_dtype, "never writes"),
        ("point_labels", np.dtype("f8"), "expected strings"),
        ("analogs", h5py.vlen_dtype(np.int32), "never writes"),
        ("analogs", h5py.opaque_dtype(np.dtype("V4")), "never writes"),
        ("events/time", h5py.string_dtype(), "expected floats"),
    ],
)
def test_wrong_dtypes(store, item, dtype, match):
    with h5py.File(store, "r+") as f:
        old = f[f"trials/a/{item}"]
        shape = old.shape
        del f[f"trials/a/{item}"]
        f.create_dataset(f"trials/a/{item}", shape=shape, dtype=dtype)
    _refused(store, f"/trials/a/{item}", match=match)


def test_shapes_that_disagree_with_the_counts(store):
    with h5py.File(store, "r+") as f:
        del f["trials/a/point_residuals"]
        f["trials/a/point_residuals"] = np.zeros((40, 4))  # 5 points
    _refused(store, "/trials/a/point_residuals", match="expected (40, 5)")


@pytest.mark.parametrize(
    "key,value,match",
    [
        ("ahbm_format", np.array(["ahbm-trial-store", "x"], dtype=object), "array of shape (2,)"),
        ("ahbm_format_version", np.array(["1.0", "1.1"], dtype=object), "array of shape (2,)"),
        ("ahbm_format_version", np.zeros((2, 2)), "is an array of shape (2, 2)"),
        ("ahbm_format", 3.5, "expected a str"),
        ("ahbm_format_version", h5py.Empty("f8"), "is empty"),
    ],
)
def test_array_root_attributes(store, key, value, match):
    with h5py.File(store, "r+") as f:
        f.attrs[key] = value
    with pytest.raises(FileFormatError) as info:
        load_trial(store)
    assert str(store) in str(info.value) and key in str(info.value) and match in str(info.value)
    before = _digest(store)
    with pytest.raises(FileFormatError, match=key):
        save_trial(make_full_trial(2), store, name="b")
    assert _digest(store) == before


def test_array_trial_attributes_and_bad_rates(store):
    with h5py.File(store, "r+") as f:
        f["trials/a"].attrs["point_rate"] = np.arange(3.0)
    _refused(store, "/trials/a", "'point_rate'", match="array of shape (3,)")
    with h5py.File(store, "r+") as f:
        f["trials/a"].attrs["point_rate"] = np.nan
    _refused(store, "/trials/a", "'point_rate'", match="expected a rate")
    with h5py.File(store, "r+") as f:
        f["trials/a"].attrs["point_rate"] = 100.0
        f["trials/a/force_plates"].attrs["count"] = 2**40
    _refused(store, "/trials/a/force_plates/2", match="is missing")  # (2 plates)
    with h5py.File(store, "r+") as f:
        f["trials/a/force_plates"].attrs["count"] = -1
    _refused(store, "/trials/a/force_plates", match="'count' is -1")


@pytest.mark.parametrize(
    "item", ["events", "force_plates/0", "subject", "analog_labels", "force_plates/1/cop"]
)
def test_missing_items(store, item):
    with h5py.File(store, "r+") as f:
        del f[f"trials/a/{item}"]
    _refused(store, f"/trials/a/{item}", match="is missing")


def test_missing_trials_group_and_unknown_tags(store):
    with h5py.File(store, "r+") as f:
        f["trials/a/results"].attrs["ahbm_type"] = "pickle"
    _refused(store, "/trials/a/results", match="unknown type tag 'pickle'")
    with h5py.File(store, "r+") as f:
        del f["trials"]
    with pytest.raises(FileFormatError, match="not an ahbm trial store"):
        load_trial(store)


def test_deep_nesting(store):
    with h5py.File(store, "r+") as f:
        g = f["trials/a/results"]
        for i in range(200):
            g = g.create_group(f"d{i}")
            g.attrs["ahbm_type"] = "dict"
    _refused(store, "/trials/a/results/d0/d1", match="nested more than 64 levels")
    with pytest.raises(FileFormatError, match="nested more than 64 levels"):
        load_result_units(store)


def test_extra_cannot_replace_core_fields(store):
    with h5py.File(store, "r+") as f:
        g = f["trials/a/extra"]
        s = g.create_dataset("points", data="not points", dtype=h5py.string_dtype())
        s.attrs["ahbm_type"] = "str"
    assert_trials_equal(make_full_trial(1), load_trial(store))


def test_ahbm_info_reports_a_hostile_store(store, capsys):
    from ahbm.cli import main

    with h5py.File(store, "r+") as f:
        f["trials/a/results/loop"] = f["trials/a/results"]
    assert main(["info", str(store)]) != 0
    err = capsys.readouterr().err
    assert "hard-link loop" in err and "Traceback" not in err


# ----------------------------------------------------------------------------- isolation


def test_isolated_load_equals_in_process_load(store):
    trial = load_trial(store, "a", isolate=True)
    assert_trials_equal(make_full_trial(1), trial)


def test_isolated_load_reports_the_same_errors(store):
    with h5py.File(store, "r+") as f:
        f["trials/a/results/loop"] = f["trials/a/results"]
    in_process = _refused(store, "/trials/a/results/loop")
    isolated = _refused(store, "/trials/a/results/loop", isolate=True)
    assert isolated == in_process
    with pytest.raises(DataError, match="No trial 'zz'"):
        load_trial(store, "zz", isolate=True)
    with pytest.raises(DataError, match="timeout"):
        load_trial(store, "a", timeout=5.0)


@pytest.fixture
def crasher(tmp_path, monkeypatch):
    """A module `ahbm_test_crasher` on the children's path, with functions that misbehave."""
    folder = tmp_path / "mods"
    folder.mkdir()
    (folder / "ahbm_test_crasher.py").write_text(
        textwrap.dedent(
            """
            import os, time, warnings
            from ahbm.errors import AhbmWarning, DataError

            def abort(path):
                os.abort()

            def segfault(path):
                import ctypes
                ctypes.string_at(0)

            def hang(path):
                time.sleep(60)

            def raw(path):
                raise TypeError("raw error")

            def ahbm_error(path):
                warnings.warn("a warning from the child", AhbmWarning)
                raise DataError(f"bad data in {path}")

            def exit_quietly(path):
                os._exit(3)

            def fine(path):
                return {"path": path, "values": [1, 2.5, "x"]}
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(folder) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return "ahbm_test_crasher"


@pytest.mark.parametrize(
    "func,match",
    [
        ("abort", "killed by SIGABRT"),
        ("segfault", "killed by SIGSEGV"),
        ("exit_quietly", "exited with status 3"),
        ("raw", "failed with TypeError: raw error"),
    ],
)
def test_a_crashing_child_becomes_a_file_format_error(crasher, func, match):
    with pytest.raises(FileFormatError, match=match) as info:
        run_isolated(f"{crasher}:{func}", {"path": "x.h5"}, file="x.h5", timeout=60)
    assert "'x.h5'" in str(info.value)


def test_a_hanging_child_is_killed(crasher):
    with pytest.raises(FileFormatError, match=r"did not finish within 2 s"):
        run_isolated(f"{crasher}:hang", {"path": "x.h5"}, file="x.h5", timeout=2)


def test_child_errors_warnings_and_results_cross_without_pickle(crasher):
    from ahbm.errors import AhbmWarning

    with pytest.warns(AhbmWarning, match="a warning from the child"):
        with pytest.raises(DataError, match="bad data in y.h5"):
            run_isolated(f"{crasher}:ahbm_error", {"path": "y.h5"}, file="y.h5", timeout=60)
    out = run_isolated(f"{crasher}:fine", {"path": "z"}, file="z", timeout=60)
    assert out == {"path": "z", "values": [1, 2.5, "x"]}


def test_load_trial_isolated_turns_a_libhdf5_crash_into_an_error(tmp_path, store, monkeypatch):
    """A child that dies inside the reader (here: h5py made to abort) -> FileFormatError."""
    folder = tmp_path / "site"
    folder.mkdir()
    # a sitecustomize in the child makes opening this particular file abort the process,
    # as a segfault inside libhdf5 on a damaged file would
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent(
            f"""
            import os
            import h5py
            _open = h5py.File.__init__
            def _crash(self, name, *args, **kwargs):
                if str(name) == {str(store)!r}:
                    os.abort()
                _open(self, name, *args, **kwargs)
            h5py.File.__init__ = _crash
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(folder) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with pytest.raises(FileFormatError, match="killed by SIGABRT") as info:
        load_trial(store, "a", isolate=True)
    assert str(store) in str(info.value)
    assert_trials_equal(make_full_trial(1), load_trial(store, "a"))  # this process is fine
    assert sys.modules.get("sitecustomize") is None or "_crash" not in dir(
        sys.modules["sitecustomize"]
    )


def test_every_tree_type_and_foreign_string_layouts_still_read(tmp_path):
    """The checks refuse what ahbm never writes, not what it does (or other tools do)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    try:
        from test_fuzz_hdf5 import base_trials
    finally:
        sys.path.pop(0)
    full, long = base_trials()
    full.results["fixed"] = np.array([b"ab", b"c"])
    full.results["scalars"] = [np.float32(1.5), np.uint8(7), np.bool_(True), 2**62, -0.0]
    path = tmp_path / "all.h5"
    save_trial(full, path, name="full")
    save_trial(long, path, name="long")
    loaded = load_trial(path, "full")
    ik, ik_loaded = full.results.pop("ik"), loaded.results.pop("ik")  # (a DataFrame inside)
    pd.testing.assert_frame_equal(ik.data, ik_loaded.data)
    assert (ik.name, ik.in_degrees, ik.angle_columns, ik.header, ik.comments, ik.source) == (
        ik_loaded.name,
        ik_loaded.in_degrees,
        ik_loaded.angle_columns,
        ik_loaded.header,
        ik_loaded.comments,
        ik_loaded.source,
    )
    assert_trials_equal(full, loaded)
    assert_trials_equal(long, load_trial(path, "long"))
    # labels written by another tool as fixed-length strings, an untagged dataset
    with h5py.File(path, "r+") as f:
        del f["trials/long/point_labels"]
        f["trials/long/point_labels"] = np.array([b"A", b"B"])
        f["trials/long/results/by_hand"] = np.arange(3)
    trial = load_trial(path, "long")
    assert trial.point_labels == ["A", "B"]
    np.testing.assert_array_equal(trial.results["by_hand"], np.arange(3))


def _zero_free_space_entry(path) -> int:
    """Set the size of the free-space entry of the first global heap collection to 0.

    libhdf5 2.0 loops forever in H5HG__cache_heap_deserialize on such a
    collection (found by the fuzz campaign: a byte set to 0). Returns the
    entry's byte offset.
    """
    raw = bytearray(path.read_bytes())
    pos = raw.find(b"GCOL")
    end = pos + int.from_bytes(raw[pos + 8 : pos + 16], "little")
    p = pos + 16
    while True:
        index = int.from_bytes(raw[p : p + 2], "little")
        size = int.from_bytes(raw[p + 8 : p + 16], "little")
        if index == 0:
            raw[p + 8 : p + 16] = bytes(8)
            path.write_bytes(bytes(raw))
            return p
        p += 16 + (size + 7) // 8 * 8
        assert p < end


def test_global_heap_damage_that_hangs_libhdf5_is_refused_before_it_runs(store):
    from ahbm.io._h5safe import check_global_heaps

    check_global_heaps(store)  # an intact store passes
    entry = _zero_free_space_entry(store)
    with pytest.raises(FileFormatError, match=f"entry at byte {entry} declares a size of 0"):
        check_global_heaps(store)
    # end to end in a child process: were the check gone, the child would hang and be killed
    message = _refused(store, match="global heap collection", isolate=True, timeout=120)
    assert "did not finish" not in message
    before = _digest(store)
    with pytest.raises(FileFormatError, match="global heap collection"):
        save_trial(make_full_trial(2), store, name="b")
    assert _digest(store) == before


def test_tags_on_datasets_of_another_shape(store):
    """Found by the fuzz campaign: a scalar string tagged str_array gave a raw AttributeError."""
    with h5py.File(store, "r+") as f:
        ds = f["trials/a/results"].create_dataset("s", data="text", dtype=h5py.string_dtype())
        ds.attrs["ahbm_type"] = "str_array"
        ds = f["trials/a/results"].create_dataset("n", data=np.arange(3.0))
        ds.attrs["ahbm_type"] = "str"
    _refused(store, "/trials/a/results/n", match="expected strings")
    with h5py.File(store, "r+") as f:
        del f["trials/a/results/n"]
    value = load_trial(store).results["s"]
    assert value.shape == () and str(value) == "text"
