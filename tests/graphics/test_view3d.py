"""view3d's scene data and page, without a browser (see test_view3d_browser.py for the page)."""

import base64
import json
import re
import shutil

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.graphics import view3d


def _page_data(text: str):
    """(meta, arrays) decoded from a page as the viewer decodes them."""
    meta = json.loads(re.search(r'id="ahbm-meta"[^>]*>(.*?)</script>', text, re.S).group(1))
    blob = base64.b64decode(re.search(r'id="ahbm-data"[^>]*>(.*?)</script>', text, re.S).group(1))
    arrays = {}
    for name, a in meta["arrays"].items():
        dt = "<u4" if a["dtype"] == "u4" else "<f4"
        arrays[name] = np.frombuffer(blob, dt, a["length"], a["offset"]).reshape(a["shape"])
    return meta, arrays


@pytest.fixture(scope="module")
def walk(shared_data):
    from ahbm.io import read_trial
    from ahbm.opensim import read_mot, read_osim

    d = shared_data / "opensim"
    return {
        "dir": d,
        "model": read_osim(d / "subject01.osim"),
        "ik": read_mot(d / "subject01_walk_IK.mot"),
        "grf": read_mot(d / "subject01_walk_grf.mot"),
        "trc": read_trial(d / "subject01_walk.trc"),
    }


def test_walk_scene_matches_the_kinematics(walk, tmp_path):
    from ahbm.kinematics import forward_kinematics
    from ahbm.kinematics.rotations import quat_to_matrix

    model, ik = walk["model"], walk["ik"]
    v = view3d(model, ik, markers=walk["trc"], forces=walk["grf"], plots=["knee_angle_r"])
    n = len(ik.time)
    assert v.n_frames == n and np.allclose(v.time, ik.time)
    # body poses: forward kinematics of the IK coordinates (degrees converted)
    names = list(model.coordinate_names)
    Q = np.empty((n, model.nq))
    for k, c in enumerate(names):
        Q[:, k] = np.asarray(ik.data[c], dtype=float)  # read_mot gives radians
    T = forward_kinematics(model, Q).transforms
    pos, quat = v.arrays["body_pos"], v.arrays["body_quat"]
    assert np.allclose(pos, T[..., :3, 3], atol=1e-6)
    assert np.allclose(quat_to_matrix(quat.astype(float)), T[..., :3, :3], atol=1e-5)
    # ground reactions: the table's columns at the frame times (both at 0..2.5 s)
    g = walk["grf"]
    i = 57
    k = int(np.argmin(abs(g.time - ik.time[i])))
    assert abs(g.time[k] - ik.time[i]) < 1e-9
    F = v.arrays["forces"][i]
    assert np.allclose(F[0, 3:], [g.data[f"ground_force_v{a}"].iloc[k] for a in "xyz"], atol=1e-3)
    assert np.allclose(F[0, :3], [g.data[f"ground_force_p{a}"].iloc[k] for a in "xyz"], atol=1e-6)
    # plots: the knee angle in degrees
    assert np.allclose(v.arrays["plot0"], np.degrees(ik.data["knee_angle_r"]), atol=1e-3)
    # the experimental markers in metres, the model's at their bodies
    labels = v.meta["markers"]["labels"]
    j = labels.index("R.Thigh.Front", 39)
    assert np.allclose(
        v.arrays["markers"][:, j],
        walk["trc"].points[:, walk["trc"].point_labels.index("R.Thigh.Front")],
        equal_nan=True,
        atol=1e-6,
    )
    # the page holds the same numbers, and nothing from the network
    text = v.to_html()
    meta, arrays = _page_data(text)
    assert np.array_equal(arrays["body_pos"], v.arrays["body_pos"].astype(np.float32))
    assert meta["n_frames"] == n and meta["forces"]["names"] == ["ground", "1_ground"]
    assert not re.search(r"(src|href)\s*=\s*[\"']https?:", text)
    assert "Copyright" in text and "three.js authors" in text  # three.js's licence travels along


def test_inertia_ellipsoid_has_the_body_inertia(walk):
    from ahbm.kinematics.rotations import quat_to_matrix

    model = walk["model"]
    v = view3d(model)
    for body, b in zip(model.bodies, v.meta["bodies"], strict=True):
        seg = [s for s in b["shapes"] if s.get("role") == "segment"]
        if body.name.startswith(("talus", "toes")):  # placeholder or flat inertia: none
            assert not seg
            continue
        (s,) = seg
        a, bb, c = s["radii"]
        moments = body.mass / 5 * np.array([bb**2 + c**2, a**2 + c**2, a**2 + bb**2])
        R = quat_to_matrix(np.asarray(s["quaternion"]))
        I_world = R @ np.diag(moments) @ R.T  # the solid ellipsoid's central inertia
        assert np.allclose(I_world, body.inertia, atol=1e-9 + 1e-9 * np.abs(body.inertia).max())
        assert np.allclose(s["position"], body.com)


def test_meshes_found_beside_the_model(walk, tmp_path):
    from ahbm.opensim import read_osim

    shutil.copy(walk["dir"] / "subject01.osim", tmp_path / "subject01.osim")
    (tmp_path / "Geometry").mkdir()
    (tmp_path / "Geometry" / "femur_r.obj").write_text(
        "v 0 0 0\nv 0.1 0 0\nv 0 -0.4 0\nv 0 0 0.05\nf 1 2 3\nf 1 3 4\nf 1 4 2\nf 2 4 3\n"
    )
    osim = (tmp_path / "subject01.osim").read_text().replace("femur_r.vtp", "femur_r.obj")
    (tmp_path / "subject01.osim").write_text(osim)
    model = read_osim(tmp_path / "subject01.osim")
    v = view3d(model, mesh_dirs=[tmp_path])
    assert [m["file"] for m in v.meta["meshes"]] == ["femur_r.obj"]
    femur = next(b for b in v.meta["bodies"] if b["name"] == "femur_r")
    (mesh,) = [s for s in femur["shapes"] if s["kind"] == "mesh"]
    assert mesh["scale"] == pytest.approx([1.14724] * 3, rel=1e-4)  # the model's scale factors
    assert not any(s.get("role") == "segment" for s in femur["shapes"])  # a mesh: no ellipsoid
    assert v.arrays["mesh0_i"].shape == (4, 3)
    assert "femur_l.vtp" in v.meta["missing_meshes"]
    assert view3d(model, mesh_dirs=[tmp_path], geometry="primitives").meta["meshes"] == []


def test_muscles_collision_and_jupyter():
    from ahbm.kinematics import CollisionShape
    from ahbm.models.arm import arm_model
    from ahbm.muscles import path_points

    model = arm_model()
    body = model.bodies[1].name
    model.collision = [CollisionShape.capsule("fa", body, [0, 0, 0], [0, -0.2, 0], 0.03)]
    q = np.column_stack([np.linspace(0.1, 0.5, 5), np.linspace(0.2, 1.2, 5)])
    act = np.linspace(0, 1, 5 * 6).reshape(5, 6)
    v = view3d(model, q, muscles=act, collision=True, rate=50)
    names = v.meta["muscles"]["names"]
    counts = v.meta["muscles"]["counts"]
    P = v.arrays["muscle_points"]
    first = np.asarray(path_points(model, q, names[0], wrap_points=True))
    assert np.allclose(P[:, : counts[0]], first, equal_nan=True, atol=1e-6)
    assert np.allclose(v.arrays["muscle_values"], act)
    shapes = [s for b in v.meta["bodies"] for s in b["shapes"] if s.get("role") == "collision"]
    assert {s["kind"] for s in shapes} >= {"capsule", "ellipsoid"}
    html = v._repr_html_()
    assert html.startswith("<iframe srcdoc=") and "&lt;script" in html


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"motion": np.zeros((3, 5))}, r"shape \(n_frames, 2\)"),
        ({"motion": np.zeros((3, 2)), "muscles": np.zeros((3, 2))}, r"shape \(n_frames, 6\)"),
        ({"motion": np.zeros((3, 2)), "plots": ["nope"]}, "neither a coordinate"),
        ({"motion": np.zeros((3, 2)), "time": [0, 1]}, "2 entries"),
        ({"motion": np.zeros((3, 2)), "time": [0, 2, 1]}, "not increasing"),
        ({"motion": np.zeros((3, 2)), "forces": {"f": {"force": [0, 0, 1]}}}, "point"),
    ],
)
def test_bad_arguments(kwargs, match):
    from ahbm.models.arm import arm_model

    with pytest.raises(DataError, match=match):
        view3d(arm_model(), **kwargs)


def test_markers_alone_find_the_vertical():
    rng = np.random.default_rng(1)
    body = rng.normal(0, 0.1, (30, 3)) * [1, 1, 0.05] + [0, 0, 0]  # tall along y
    body[:, 1] = np.linspace(0, 1.7, 30)
    walk = body[None] + np.linspace(0, 2, 20)[:, None, None] * [1, 0, 0]
    v = view3d(markers=walk, rate=10)
    assert v.meta["up"] == [0.0, 1.0, 0.0] and v.n_frames == 20


def test_cli_writes_the_page(walk, tmp_path, capsys):
    from ahbm.cli import main

    d = walk["dir"]
    out = tmp_path / "walk.html"
    args = [
        str(d / "subject01_walk_IK.mot"),
        str(d / "subject01.osim"),
        str(d / "subject01_walk_grf.mot"),
        "--plot",
        "ground Fy",
        "-o",
        str(out),
    ]
    assert main(["view3d", *args]) == 0
    meta, arrays = _page_data(out.read_text(encoding="utf-8"))
    assert meta["forces"]["names"] == ["ground", "1_ground"] and len(meta["bodies"]) == 12
    assert meta["plots"][0]["unit"] == "N"
    assert "wrote" in capsys.readouterr().out
    # never overwrite an input
    assert main(["view3d", str(d / "subject01.osim"), "-o", str(d / "subject01.osim")]) == 1
    assert "one of the inputs" in capsys.readouterr().err
