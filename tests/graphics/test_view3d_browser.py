"""view3d pages in headless Chromium: they draw, move, play fast and log no error.

The pages are written by :func:`ahbm.graphics.view3d` and opened from disk
with every network request refused, in the system's Chromium (``.ci/run``
installs Debian's ``chromium``) driven by Playwright without any browser
download. WebGL runs on SwiftShader (software). The tests skip, naming the
reason, where no Chromium or Playwright is installed.

``AHBM_UPDATE_GALLERY=1`` copies the walking trial's screenshot to
``docs/img/view3d_walk.png`` (the README's gallery).
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MAX_PAGE_BYTES = 5_000_000  # issue 32: the walking page under 5 MB (no meshes)
MIN_FPS = 30.0  # issue 32: playback of 10,000 frames, 40 markers, 20 bodies
GALLERY = Path(__file__).resolve().parents[2] / "docs" / "img" / "view3d_walk.png"


def _chromium() -> str | None:
    for name in (os.environ.get("AHBM_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Playwright on the system's executable)."""
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium: install Debian's 'chromium' (.ci/run does) to run the viewer")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    with sync_api.sync_playwright() as pw:
        # Playwright gives each launch a fresh temporary profile (--user-data-dir)
        b = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Page:
    """A view3d page opened offline, with its console errors and refused requests."""

    def __init__(self, browser, path: Path, size=(1000, 620)):
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        self.errors: list[str] = []
        self.requests: list[str] = []

        def _route(route):
            url = route.request.url
            if url.startswith(("file:", "data:", "blob:")):
                route.continue_()
            else:
                self.requests.append(url)
                route.abort()

        self.context.route("**/*", _route)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_function("window.__ahbm && window.__ahbm.ready === true", timeout=30000)

    def js(self, expr, arg=None):
        return self.page.evaluate(expr, arg)

    def shot(self, frame: int) -> np.ndarray:
        from PIL import Image

        self.js("i => window.__ahbm.setFrame(i)", frame)
        png = self.page.locator("#ahbm-scene canvas").screenshot()
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16), png

    def close(self):
        self.context.close()


def _drawn_fraction(img: np.ndarray) -> float:
    """Fraction of pixels far from the background colour (#f4f5f7) and the grid greys."""
    bg = np.array([0xF4, 0xF5, 0xF7])
    far = np.abs(img - bg).sum(axis=-1) > 60
    grey = (np.ptp(img, axis=-1) < 12) & (img.mean(axis=-1) > 150)  # grid lines
    return float(np.mean(far & ~grey))


def _check_two_frames(page: Page, f0: int, f1: int, tmp_path: Path, name: str):
    a, png_a = page.shot(f0)
    pos_a = np.array(page.js("window.__ahbm.bodyPositions()"))
    b, png_b = page.shot(f1)
    pos_b = np.array(page.js("window.__ahbm.bodyPositions()"))
    (tmp_path / f"{name}_{f0}.png").write_bytes(png_a)
    (tmp_path / f"{name}_{f1}.png").write_bytes(png_b)
    info = page.js("window.__ahbm.info()")
    assert info["triangles"] > 1000 and info["calls"] > 2, info
    assert _drawn_fraction(a) > 0.01 and _drawn_fraction(b) > 0.01  # the scene is not empty
    changed = np.mean(np.abs(a - b).sum(axis=-1) > 40)
    assert changed > 0.002, f"the screenshots of frames {f0} and {f1} hardly differ ({changed})"
    moved = np.linalg.norm(pos_a - pos_b, axis=1).max()
    assert moved > 0.01, f"no body moved between frames {f0} and {f1}"
    assert page.js("window.__ahbm.frame()") == f1
    assert not page.errors, page.errors
    assert not page.requests, f"the page asked the network for {page.requests}"
    return png_a, png_b


def test_subject01_walk_page(browser, shared_data, tmp_path, record_property):
    from ahbm.graphics import view3d
    from ahbm.io import read_trial
    from ahbm.opensim import read_mot, read_osim

    d = shared_data / "opensim"
    model = read_osim(d / "subject01.osim")
    motion = read_mot(d / "subject01_walk_IK.mot")
    view = view3d(
        model,
        motion,
        markers=read_trial(d / "subject01_walk.trc"),
        forces=read_mot(d / "subject01_walk_grf.mot"),
        plots=["knee_angle_r", "hip_flexion_r", "ground Fy"],
        mesh_dirs=[d],
        title="subject01 walk",
    )
    path = view.save(tmp_path / "walk.html")
    size = path.stat().st_size
    record_property("walk_page_bytes", size)
    print(f"subject01 walk page: {size / 1e6:.2f} MB, {view.n_frames} frames")
    assert size < MAX_PAGE_BYTES
    text = path.read_text(encoding="utf-8")
    assert "http://" not in text.split("<script", 1)[0] and "<link" not in text
    page = Page(browser, path)
    try:
        assert page.js("window.__ahbm.nFrames") == motion.values.shape[0]
        info = page.js("window.__ahbm.info()")
        assert (info["bodies"], info["forces"], info["plots"]) == (12, 2, 3)
        assert info["markers"] == 39 + 41 and info["muscle_segments"] >= 18
        png, _ = _check_two_frames(page, 20, 80, tmp_path, "walk")
        # scrubbing: the time readout and the page's time follow the frame
        page.js("window.__ahbm.setFrame(60)")
        t = page.js("window.__ahbm.time()")
        assert t == pytest.approx(float(motion.time[60]), abs=1e-6)
        assert f"frame 61 / {view.n_frames}" in page.page.inner_text("#ahbm-time")
        # hovering a marker shows its label
        k = 39 + 5  # an experimental marker
        xy = page.js("k => window.__ahbm.markerScreen(k)", k)
        assert xy is not None
        label = page.js("xy => window.__ahbm.labelAt(xy[0], xy[1])", xy)
        assert label is not None and label.startswith("marker ")
        # the camera presets and the helpers of the viewer
        for name in ("sagittal", "frontal", "transverse"):
            page.js("n => window.__ahbm.view(n)", name)
        util = page.js(
            "(() => { const u = window.__ahbm.util; return [u.frameAt([0, 1, 2], 1.5),"
            " u.frameAt([0, 1, 2], -1), u.frameAt([0, 1, 2], 9), u.colormap(1, [0, 0, 0]),"
            " Array.from(u.decodeBase64('AQID'))]; })()"
        )
        assert util[:3] == [1, 0, 2] and util[3][0] > util[3][2] and util[4] == [1, 2, 3]
        assert not page.errors, page.errors
    finally:
        page.close()
    if os.environ.get("AHBM_UPDATE_GALLERY"):
        GALLERY.parent.mkdir(parents=True, exist_ok=True)
        from PIL import Image

        img = Image.open(io.BytesIO(png)).convert("RGB")
        img.thumbnail((720, 720))
        img.save(GALLERY, optimize=True)


def test_muscle_driven_result_page(browser, tmp_path):
    from ahbm.graphics import view3d
    from ahbm.models.arm import arm_model
    from ahbm.muscles import simulate_muscles

    model = arm_model()
    t = np.linspace(0.0, 0.5, 26)
    u = np.full((t.size, len(model.muscles)), 0.05)
    names = [m.name for m in model.muscles]
    for m in ("BIClong", "BICshort", "BRA"):  # the flexors switch on
        u[:, names.index(m)] = np.clip(8 * t, 0.05, 0.5)
    res = simulate_muscles(
        model,
        (0.0, 0.5),
        [0.2, 0.4],
        excitations=u,
        excitation_time=t,
        t_eval=t,
        curves="degroote2016",
        rigid_tendon=True,
        method="RK45",
        rtol=1e-5,
        atol=1e-7,
    )
    assert abs(res.q[-1] - res.q[0]).max() > 0.1  # it moved
    view = view3d(model, res, plots=["BIClong", "elbow"], title="arm, muscle-driven")
    assert view.meta["muscles"]["color_by"] == "activation"
    page = Page(browser, view.save(tmp_path / "arm.html"))
    try:
        assert page.js("window.__ahbm.info()")["muscle_segments"] >= len(names)
        _check_two_frames(page, 0, t.size - 1, tmp_path, "arm")
    finally:
        page.close()
    # Jupyter's inline form: the page in a sandboxed frame of a notebook-like document
    nb = tmp_path / "notebook.html"
    nb.write_text(f"<html><body><h1>cell</h1>{view._repr_html_()}</body></html>", "utf-8")
    ctx = browser.new_context(viewport={"width": 900, "height": 700})
    try:
        errors = []
        p = ctx.new_page()
        p.on("pageerror", lambda e: errors.append(str(e)))
        p.goto(nb.resolve().as_uri())
        frame = p.frame_locator("iframe").first
        frame.locator("#ahbm-scene canvas").wait_for(timeout=30000)
        inner = next(f for f in p.frames if f != p.main_frame)
        inner.wait_for_function("window.__ahbm && window.__ahbm.ready === true", timeout=30000)
        assert inner.evaluate("window.__ahbm.nFrames") == t.size and not errors
    finally:
        ctx.close()


def _chain_model(n_bodies: int):
    from ahbm.kinematics import Model

    m = Model("chain20")
    parent = "ground"
    for k in range(n_bodies):
        axis = [[1, 0, 0], [0, 1, 0], [0, 0, 1]][k % 3]
        m.add_body(
            f"b{k}",
            parent,
            {"type": "revolute", "axis": axis},
            position=[0.0, 0.0, 0.0 if k == 0 else -0.09],
            mass=1.0,
            com=[0.0, 0.0, -0.045],
            inertia=np.diag([0.001, 0.001, 0.0004]),
        )
        parent = f"b{k}"
    return m


def test_playback_rate_of_a_long_trial(browser, tmp_path, record_property):
    from ahbm.graphics import view3d

    n, n_bodies, n_markers = 10_000, 20, 40
    model = _chain_model(n_bodies)
    t = np.arange(n) / 100.0
    q = 0.4 * np.sin(2 * np.pi * 0.5 * t[:, None] + np.arange(n_bodies) * 0.3)
    rng = np.random.default_rng(0)
    markers = rng.normal(0.0, 0.3, (n_markers, 3)) + 0.05 * np.sin(t)[:, None, None]
    view = view3d(model, q, time=t, markers=markers, com=True, title="10,000 frames")
    path = view.save(tmp_path / "long.html")
    page = Page(browser, path, size=(960, 600))
    try:
        info = page.js("window.__ahbm.info()")
        assert (info["bodies"], info["markers"]) == (n_bodies, n_markers)
        # real time (1 s of the trial per second); 2 s of warm-up in which the drawing
        # resolution settles, then 5 s measured by the page
        page.js("window.__ahbm.setSpeed(1)")
        stats = page.js("window.__ahbm.measure(5000, 2000)")
        page.js("window.__ahbm.pause()")
        fps = stats["fps"]
        record_property("playback_fps", round(fps, 1))
        record_property("page_bytes", path.stat().st_size)
        per = stats["ms_per_frame"]
        print(
            f"playback of {n} frames, {n_markers} markers, {n_bodies} bodies: {fps:.1f} fps "
            f"({stats['frames_drawn']} frames drawn in {stats['seconds']:.2f} s after "
            f"{stats['warmup_seconds']:.1f} s of warm-up, {stats['drawing_buffer']} pixels, "
            f"pixel ratio {stats['pixel_ratio']}; viewer {per['total']:.2f} ms a frame: "
            f"frame {per['frame']:.2f}, ui {per['ui']:.2f}, render call {per['render']:.2f})"
        )
        # it played in real time: between the first and the last frame drawn in the window the
        # trial advanced as much as the frame clock (to a frame of the data), and each frame
        # drawn showed a new frame of the trial (100 Hz data, at most 60 drawn a second)
        assert stats["clock_seconds"] > 0.5 * stats["seconds"]
        assert stats["trial_seconds"] == pytest.approx(stats["clock_seconds"], abs=0.02)
        assert stats["frames_advanced"] >= stats["frames_drawn"] - 1
        assert fps >= MIN_FPS
        assert not page.errors, page.errors
    finally:
        page.close()
