"""StickViewer: animated 3-D stick figures of markers, segments, frames and forces."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ahbm._internal.validation import as_finite_float, as_positive_float
from ahbm.errors import AhbmError, DataError
from ahbm.graphics._common import check_names, pyplot, set_equal_3d
from ahbm.graphics._stick_data import (
    _AXES,
    _DEFAULT_RATE,
    _MAX_FPS,
    _TRIAD_COLORS,
    PLUG_IN_GAIT_SEGMENTS,
    _as_body_frames,
    _as_markers,
    _force_segments,
    _model_transforms,
    _segment_indices,
    _triad_segments,
    plug_in_gait_segments,
)
from ahbm.graphics.figures import atomic_output, is_interactive_backend, plain_text

__all__ = ["PLUG_IN_GAIT_SEGMENTS", "StickViewer", "plug_in_gait_segments", "stick_view"]


class StickViewer:
    """An animated 3-D stick figure (created by :func:`stick_view`).

    Attributes
    ----------
    fig : matplotlib.figure.Figure
    ax : mpl_toolkits.mplot3d.axes3d.Axes3D
    points : ndarray, shape (n_frames, n_points, 3)
        Marker positions drawn, m (NaN where missing).
    labels : list of str
        Marker labels.
    time : ndarray, shape (n_frames,)
        Time of each frame, s (frame numbers when no rate is known).
    rate : float or None
        Frame rate of the data, Hz.
    frames : ndarray of int
        Frames that the animation plays.
    frame_index : int
        Number of the frame currently displayed.
    artists : dict
        The matplotlib artists by role: ``"markers"``, ``"joints"`` and
        ``"model_markers"`` (Line3D), ``"segments"``, ``"model"`` (sticks of
        :func:`~ahbm.graphics.model_skeleton`), ``"triads"``, ``"forces"``
        (Line3DCollection), ``"labels"``
        (list of Text3D), ``"floor"`` (Poly3DCollection), ``"time"`` (Text).
    floor_corners : ndarray, shape (4, 3) or None
        Corners of the drawn floor polygon, m.
    slider : matplotlib.widgets.Slider or None
        Frame slider (interactive backends only, or ``interactive=True``).

    Notes
    -----
    Each drawing element is precomputed for all frames as an array, so moving
    to a frame only hands slices of those arrays to the artists.
    """

    def __init__(
        self,
        points: np.ndarray,
        labels: list[str],
        time: np.ndarray,
        rate: float | None,
        *,
        segments: np.ndarray,
        model_sticks: np.ndarray | None,
        model_points: dict | None,
        triads: np.ndarray | None,
        forces: np.ndarray | None,
        plate_outlines: list[np.ndarray],
        frames: np.ndarray,
        show_labels: bool,
        floor: bool,
        floor_height: float,
        vertical_axis: str,
        ax,
        interactive: bool | None,
        title: str | None,
        follow: bool = False,
    ):
        self.points = points
        self.labels = labels
        self.time = time
        self.rate = rate
        self.frames = frames
        self.frame_index = int(frames[0])
        self.slider = None
        self._segments = segments
        self._model_sticks = model_sticks
        self._model_points = model_points or {}
        self._triads = triads
        self._forces = forces
        self._listeners: list[Callable[[float, int], None]] = []
        self._anim = None
        self._syncing = False
        self.artists: dict = {}
        self.floor_corners = None
        self.follow = bool(follow)

        plt = pyplot()
        if ax is None:
            fig = plt.figure(figsize=(6.4, 6.4))
            ax = fig.add_subplot(projection="3d")
        elif getattr(ax, "name", "") != "3d":
            raise DataError("`ax` must be a 3-D axes, e.g. fig.add_subplot(projection='3d')")
        self.fig = ax.figure
        self.ax = ax
        self._build(
            model_points, plate_outlines, show_labels, floor, floor_height, vertical_axis, title
        )
        if interactive is None:
            interactive = is_interactive_backend()
        if interactive:
            self._add_interaction()
        self.show_frame(self.frame_index)

    # -- construction -----------------------------------------------------
    def _build(self, model_points, plate_outlines, show_labels, floor, floor_height, vaxis, title):
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

        ax = self.ax
        (markers,) = ax.plot([], [], [], "o", ls="", ms=4, color="tab:blue", label="markers")
        self.artists["markers"] = markers
        p0 = self.points[self.frame_index]
        if self._segments.shape[0]:
            coll = Line3DCollection(p0[self._segments], colors="0.2", linewidths=2.0)
            ax.add_collection3d(coll)
            self.artists["segments"] = coll
        if self._model_sticks is not None:
            coll = Line3DCollection(
                self._model_sticks[self.frame_index], colors="tab:brown", linewidths=3.0
            )
            ax.add_collection3d(coll)
            self.artists["model"] = coll
            (joints,) = ax.plot([], [], [], "o", ls="", ms=5, color="tab:brown", mfc="white")
            self.artists["joints"] = joints
            if self._model_points.get("model_markers") is not None:
                (mk,) = ax.plot([], [], [], "^", ls="", ms=4, color="tab:orange")
                self.artists["model_markers"] = mk
        if self._triads is not None and self._triads.shape[1]:
            n_triads = self._triads.shape[1] // 3
            colors = list(_TRIAD_COLORS) * n_triads
            coll = Line3DCollection(self._triads[self.frame_index], colors=colors, linewidths=1.5)
            ax.add_collection3d(coll)
            self.artists["triads"] = coll
        if self._forces is not None and self._forces.shape[1]:
            coll = Line3DCollection(
                self._forces[self.frame_index], colors="tab:purple", linewidths=2.5
            )
            ax.add_collection3d(coll)
            self.artists["forces"] = coll
        if show_labels:
            self.artists["labels"] = [
                ax.text(0.0, 0.0, 0.0, lab, fontsize=7) for lab in self.labels
            ]
        v = _AXES.index(vaxis)
        h = [k for k in range(3) if k != v]

        # Bounding box over every frame of every drawn point.
        clouds = [self.points.reshape(-1, 3)]
        for arr in (model_points or {}).values():
            clouds.append(arr.reshape(-1, 3))
        clouds.extend(plate_outlines)
        allpts = np.concatenate(clouds, axis=0) if clouds else np.zeros((0, 3))
        finite = np.isfinite(allpts).all(axis=1)
        if not finite.any():
            raise DataError(
                "Nothing to draw: every marker (and model point) is missing (NaN) in every "
                "frame; check the data or choose other frames"
            )
        lo = allpts[finite].min(axis=0)
        hi = allpts[finite].max(axis=0)
        if floor:
            lo[v] = min(lo[v], floor_height)
            hi[v] = max(hi[v], floor_height)
        if self.follow:
            self._setup_follow(model_points, lo, hi, v, h)
            lo, hi = self._window(self.frame_index)
        if floor:
            span = max(float(np.max(hi[h] - lo[h])), 0.5)
            a0, a1 = lo[h[0]] - 0.1 * span, hi[h[0]] + 0.1 * span
            b0, b1 = lo[h[1]] - 0.1 * span, hi[h[1]] + 0.1 * span
            quad = np.zeros((4, 3))
            quad[:, v] = floor_height
            quad[:, h[0]] = [a0, a1, a1, a0]
            quad[:, h[1]] = [b0, b0, b1, b1]
            self.floor_corners = quad
            poly = Poly3DCollection([quad], facecolors="0.85", edgecolors="0.6", alpha=0.4)
            ax.add_collection3d(poly)
            self.artists["floor"] = poly
        for k, corners in enumerate(plate_outlines):
            closed = np.vstack([corners, corners[:1]])
            style = {"color": "0.4", "lw": 1.0, "label": f"plate {k + 1}"}
            try:  # matplotlib >= 3.10 hides what lies outside the view (follow mode)
                ax.plot(*closed.T, axlim_clip=True, **style)
            except (TypeError, AttributeError):
                ax.plot(*closed.T, **style)
        set_equal_3d(ax, lo, hi, bottom_axis=v if floor else None)
        from matplotlib.ticker import MaxNLocator

        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
            axis.set_major_locator(MaxNLocator(5))
            axis.set_tick_params(labelsize=7)
        ax.view_init(elev=15.0, azim=-60.0, vertical_axis=vaxis)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_zlabel("z (m)")
        if title:
            ax.set_title(title)
        self.artists["time"] = ax.text2D(0.02, 0.97, "", transform=ax.transAxes)
        plain_text(ax)  # marker labels and the title (a file name) are data, not mathtext

    def _setup_follow(self, model_points, lo, hi, v: int, h: list[int]) -> None:
        """Per-frame window centres (horizontal axes) that follow the subject."""
        clouds = [self.points] + [a for a in (model_points or {}).values()]
        allp = np.concatenate(clouds, axis=1)  # (n, m, 3)
        ok = np.isfinite(allp).all(axis=2)
        n = allp.shape[0]
        centres = np.full((n, 3), np.nan)
        extent = 0.0
        with np.errstate(invalid="ignore"):
            for k in h:
                vals = np.where(ok, allp[..., k], np.nan)
                cnt = ok.sum(axis=1)
                has = cnt > 0
                mn = np.where(has, np.nanmin(np.where(ok, vals, np.inf), axis=1), np.nan)
                mx = np.where(has, np.nanmax(np.where(ok, vals, -np.inf), axis=1), np.nan)
                centres[:, k] = 0.5 * (mn + mx)
                if has.any():
                    extent = max(extent, float(np.nanmax(mx - mn)))
                    idx = np.flatnonzero(has)
                    centres[:, k] = np.interp(np.arange(n), idx, centres[idx, k])
        centres[:, v] = 0.5 * (lo[v] + hi[v])
        extent = max(extent, float(hi[v] - lo[v]), 0.5)
        self._follow_centres = centres
        self._follow_half = 0.5 * extent * 1.15
        self._vertical = v

    def _window(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Box (lo, hi) of the follow view at frame i."""
        c = self._follow_centres[i]
        half = self._follow_half
        lo, hi = c - half, c + half
        v = self._vertical
        lo[v] = c[v] - (hi[v] - lo[v]) / 2.0
        return lo, hi

    def _add_interaction(self) -> None:
        from matplotlib.widgets import Slider

        self.fig.subplots_adjust(bottom=0.12)
        sax = self.fig.add_axes((0.15, 0.03, 0.7, 0.03))
        n = self.points.shape[0]
        self.slider = Slider(
            sax, "frame", 0, n - 1, valinit=self.frame_index, valstep=1, valfmt="%d"
        )
        self.slider.on_changed(lambda val: self.show_frame(int(round(val))))
        self._key_cid = self.fig.canvas.mpl_connect("key_press_event", self._on_key)

    def _on_key(self, event) -> None:
        n = self.points.shape[0]
        steps = {"right": 1, "left": -1, "up": 10, "down": -10, "pageup": 10, "pagedown": -10}
        if event.key in steps:
            self.show_frame(min(max(self.frame_index + steps[event.key], 0), n - 1))
        elif event.key == "home":
            self.show_frame(0)
        elif event.key == "end":
            self.show_frame(n - 1)
        elif event.key == " " and self._anim is not None:
            running = getattr(self, "_running", True)
            (self._anim.pause if running else self._anim.resume)()
            self._running = not running
        else:
            return
        self.fig.canvas.draw_idle()

    # -- frame updates ----------------------------------------------------
    def add_listener(self, callback: Callable[[float, int], None]) -> None:
        """Call ``callback(time, frame_index)`` whenever the displayed frame changes.

        :func:`xy_view` uses this to move its cursor with the animation.
        """
        self._listeners.append(callback)
        callback(float(self.time[self.frame_index]), self.frame_index)

    def show_frame(self, i: int):
        """Display frame `i` (0-based index into the data) and return the Figure.

        Raises
        ------
        DataError
            If `i` is outside ``[0, n_frames)``.
        """
        n = self.points.shape[0]
        if not isinstance(i, (int, np.integer)) or not -n <= i < n:
            raise DataError(f"Frame index `i` = {i!r} is outside [0, {n}) for this viewer")
        i = int(i) % n
        self.frame_index = i
        p = self.points[i]
        self.artists["markers"].set_data_3d(p[:, 0], p[:, 1], p[:, 2])
        if "segments" in self.artists:
            self.artists["segments"].set_segments(p[self._segments])
        if "model" in self.artists:
            self.artists["model"].set_segments(self._model_sticks[i])
            for role in ("joints", "model_markers"):
                if role in self.artists:
                    xyz = self._model_points[role][i]
                    self.artists[role].set_data_3d(xyz[:, 0], xyz[:, 1], xyz[:, 2])
        if "triads" in self.artists:
            self.artists["triads"].set_segments(self._triads[i])
        if "forces" in self.artists:
            self.artists["forces"].set_segments(self._forces[i])
        for text, xyz in zip(self.artists.get("labels", []), p, strict=False):
            ok = bool(np.isfinite(xyz).all())
            text.set_visible(ok)
            if ok:
                text.set_position_3d(xyz)
        if self.follow:
            v = self._vertical
            getters = (self.ax.get_xlim, self.ax.get_ylim, self.ax.get_zlim)
            setters = (self.ax.set_xlim, self.ax.set_ylim, self.ax.set_zlim)
            half = 0.5 * float(np.ptp(getters[v]()))  # keep the equal scaling
            centre = self._follow_centres[i]
            lo, hi = centre - half, centre + half
            for k in range(3):
                if k != v:
                    setters[k](lo[k], hi[k])
            if "floor" in self.artists:
                quad = self.floor_corners.copy()
                h = [k for k in range(3) if k != v]
                quad[:, h[0]] = [lo[h[0]], hi[h[0]], hi[h[0]], lo[h[0]]]
                quad[:, h[1]] = [lo[h[1]], lo[h[1]], hi[h[1]], hi[h[1]]]
                self.floor_corners = quad
                self.artists["floor"].set_verts([quad])
        t = float(self.time[i])
        unit = "s" if self.rate is not None else ""
        self.artists["time"].set_text(f"t = {t:.3f} {unit}  (frame {i})")
        if self.slider is not None and not self._syncing and int(self.slider.val) != i:
            self._syncing = True
            try:
                self.slider.set_val(i)
            finally:
                self._syncing = False
        for callback in self._listeners:
            callback(t, i)
        return self.fig

    # -- animation --------------------------------------------------------
    def _playback(self, fps: float | None, speed: float) -> tuple[list[int], float]:
        """Frames to play and the display rate (fps) for real time x `speed`."""
        if not (isinstance(speed, (int, float)) and math.isfinite(speed) and speed > 0):
            raise DataError(f"`speed` must be a positive number, got {speed!r}")
        data_rate = (self.rate or _DEFAULT_RATE) * speed
        if fps is None:
            step = max(1, math.ceil(data_rate / _MAX_FPS - 1e-9))
            fps = data_rate / step
        elif not (isinstance(fps, (int, float)) and math.isfinite(fps) and fps > 0):
            raise DataError(f"`fps` must be a positive number, got {fps!r}")
        step = data_rate / fps
        n = len(self.frames)
        count = max(1, int(math.floor((n - 1) / step + 1e-9)) + 1)
        pos = np.minimum(np.round(np.arange(count) * step).astype(int), n - 1)
        return [int(self.frames[k]) for k in pos], float(fps)

    def animate(self, *, fps: float | None = None, speed: float = 1.0):
        """Build the animation of the selected frames.

        Parameters
        ----------
        fps : float, optional
            Display frames per second. Default: the data rate times `speed`
            (every frame shown), reduced by an integer step to at most 60.
        speed : float, optional
            Playback speed relative to real time (0.5 = slow motion). Frames
            are skipped or repeated so that the animation lasts
            ``duration / speed`` seconds at `fps`.

        Returns
        -------
        matplotlib.animation.FuncAnimation
            Kept alive by the viewer (``viewer.animation``).
        """
        from matplotlib.animation import FuncAnimation

        order, fps = self._playback(fps, speed)
        self._anim = FuncAnimation(
            self.fig,
            self.show_frame,
            frames=order,
            interval=1000.0 / fps,
            blit=False,
            repeat=True,
            cache_frame_data=False,
        )
        self._anim_fps = fps
        self._running = True
        return self._anim

    @property
    def animation(self):
        """The last animation built by :meth:`animate` (None before)."""
        return self._anim

    def to_html(self, *, fps: float | None = None, speed: float = 1.0) -> str:
        """Return the animation as a self-contained HTML/JavaScript player.

        Display it in a notebook with ``IPython.display.HTML(viewer.to_html())``.
        The frames are embedded as PNG images; matplotlib's
        ``rcParams["animation.embed_limit"]`` (MB) bounds the size.
        """
        anim = self.animate(fps=fps, speed=speed)
        html = anim.to_jshtml(fps=self._anim_fps, embed_frames=True, default_mode="loop")
        self.show_frame(self.frame_index)
        return html

    def save(
        self,
        path,
        *,
        fps: float | None = None,
        speed: float = 1.0,
        dpi: float | None = None,
    ) -> Path:
        """Save the animation (.gif, .mp4, .html) or the current frame (.png, .pdf, .svg).

        Parameters
        ----------
        path : str or Path
            Output file; the format follows the extension. GIF uses Pillow;
            MP4 needs the ``ffmpeg`` program; HTML is a self-contained player.
        fps, speed : float, optional
            See :meth:`animate`.
        dpi : float, optional
            Resolution of the rendered frames (default: the figure's).

        Returns
        -------
        Path
            The written file. It is written to a temporary name in the same
            folder and renamed into place, so a failed save leaves no file.

        Raises
        ------
        AhbmError
            For ``.mp4`` when ffmpeg is not installed (the message says how to
            get it), or for an unsupported extension.
        """
        import matplotlib.animation as manim

        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".png", ".pdf", ".svg", ".jpg", ".jpeg"):
            with atomic_output(path) as tmp:
                self.fig.savefig(tmp, dpi=dpi or "figure", format=suffix[1:])
            return path
        if suffix not in (".gif", ".mp4", ".html", ".htm"):
            raise DataError(
                f"Cannot save to {str(path)!r}: unsupported extension {suffix or '(none)'!r}; "
                "use .gif, .mp4 or .html for the animation, .png/.pdf/.svg for one frame"
            )
        if suffix == ".mp4" and not manim.writers.is_available("ffmpeg"):
            raise AhbmError(
                f"Cannot save {str(path)!r}: MP4 export needs the ffmpeg program, which was "
                "not found on PATH. Install it (e.g. `apt install ffmpeg`, `conda install "
                "ffmpeg` or `brew install ffmpeg`) or set "
                "matplotlib.rcParams['animation.ffmpeg_path'], or save as .gif or .html instead"
            )
        current = self.frame_index
        if suffix in (".html", ".htm"):
            html = self.to_html(fps=fps, speed=speed)
            with atomic_output(path) as tmp:
                tmp.write_text(html, encoding="utf-8")
            return path
        order, fps = self._playback(fps, speed)
        with atomic_output(path) as tmp:
            if suffix == ".gif":
                self._write_gif(tmp, order, fps, dpi)
            else:
                writer = manim.FFMpegWriter(fps=fps)
                with writer.saving(self.fig, str(tmp), dpi or self.fig.dpi):
                    for i in order:
                        self.show_frame(i)
                        writer.grab_frame()
        self.show_frame(current)
        return path

    def _write_gif(self, path: Path, order: list[int], fps: float, dpi) -> None:
        """Render `order` frames and write them as a looping GIF with Pillow.

        Each frame is rendered once and reduced to a 255-colour palette (fast
        octree) as it is grabbed, which keeps memory and the final encoding
        small.
        """
        import io

        from PIL import Image

        fig = self.fig
        dpi = float(dpi) if dpi else float(getattr(fig, "_original_dpi", fig.dpi))
        width_in, height_in = fig.get_size_inches()
        size = (int(width_in * dpi), int(height_in * dpi))
        frames = []
        for i in order:
            self.show_frame(i)
            buf = io.BytesIO()
            fig.savefig(buf, format="rgba", dpi=dpi)
            if buf.getbuffer().nbytes == 4 * size[0] * size[1]:
                rgba = Image.frombuffer("RGBA", size, buf.getbuffer(), "raw", "RGBA", 0, 1)
            else:  # size rounded differently: let PNG carry the size
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=dpi)
                buf.seek(0)
                rgba = Image.open(buf)
            frames.append(
                rgba.convert("RGB").quantize(
                    colors=255, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
                )
            )
        frames[0].save(
            path,
            format="GIF",
            save_all=True,
            append_images=frames[1:],
            duration=max(int(round(1000.0 / fps)), 10),
            loop=0,
        )

    def __repr__(self) -> str:
        n, m = self.points.shape[:2]
        return (
            f"StickViewer(frames={n}, markers={m}, rate={self.rate}, "
            f"frame_index={self.frame_index})"
        )


def stick_view(
    data=None,
    *,
    labels: Sequence[str] | None = None,
    rate: float | None = None,
    segments: Sequence | None = None,
    model=None,
    q=None,
    body_frames=None,
    frames=None,
    show_labels: bool = False,
    forces: bool = True,
    force_scale: float = 1e-3,
    reaction: bool = True,
    floor: bool = True,
    floor_height: float = 0.0,
    follow: bool = False,
    vertical_axis: str = "z",
    triad_length: float = 0.1,
    ax=None,
    interactive: bool | None = None,
    title: str | None = None,
) -> StickViewer:
    """Draw a 3-D stick figure of markers, segments, body frames and forces.

    Parameters
    ----------
    data : Trial or array_like, shape (n_frames, n_points, 3) or (n_points, 3), optional
        Marker positions, m (a Trial in mm or cm is converted), NaN where
        missing. May be omitted when `model` and `q` are given.
    labels : sequence of str, optional
        Marker labels (default: the trial's labels, or ``P1, P2, ...``).
    rate : float, optional
        Frame rate, Hz (default: the trial's point rate). Without a rate,
        times are frame numbers and playback runs at 25 frames per second.
    segments : sequence of (a, b) pairs, optional
        Sticks drawn between markers `a` and `b`, given as labels or indices.
    model : ahbm Model, optional
        Multibody model drawn at coordinates `q`: a stick from each body's
        origin to each child's origin (and from a leaf body's origin to its
        centre of mass), joint centres, model markers, and an RGB triad per
        body.
    q : array_like, shape (n_frames, nq) or (nq,), optional
        Generalized coordinates of `model`, one row per frame.
    body_frames : array_like or mapping, optional
        Extra frames drawn as RGB triads (x red, y green, z blue): world
        transforms of shape (n_frames, n_triads, 4, 4) or (n_triads, 4, 4), or
        a mapping name -> (n_frames, 4, 4).
    frames : slice or sequence of int, optional
        Frames that the animation plays (default: all).
    show_labels : bool, optional
        Write each marker's label next to it.
    forces : bool, optional
        Draw the force-plate forces of a Trial as vectors from the centre of
        pressure, sampled at the marker frames, and the plate outlines.
    force_scale : float, optional
        Drawn length per newton, m/N (default 1 mm/N: 800 N is 0.8 m).
    reaction : bool, optional
        If True (default) draw the ground reaction force: ``ForcePlate.force``
        or its negative, whichever has a positive vertical component during
        contact (the floor can only push, and sources differ on whether they
        store the force on the plate or its reaction). If False, draw
        ``ForcePlate.force`` as stored.
    floor : bool, optional
        Draw the floor plane at `floor_height` (m) across the data.
    follow : bool, optional
        Move the view with the subject: the horizontal limits are centred on
        the markers of each frame, with a fixed window that holds the largest
        frame (default False: one fixed view that holds every frame).
    vertical_axis : {"z", "y", "x"}, optional
        Lab axis that points up (Z up by default, as in ahbm).
    triad_length : float, optional
        Length of the triad axes, m.
    ax : Axes3D, optional
        Axes to draw into (default: a new figure).
    interactive : bool, optional
        Add a frame slider and keyboard control (left/right: one frame,
        up/down: ten frames, home/end, space: pause). Default: only when the
        matplotlib backend is interactive.
    title : str, optional
        Axes title.

    Returns
    -------
    StickViewer
        Call ``.show_frame(i)``, ``.animate(fps=..., speed=...)``,
        ``.save("walk.gif")`` or ``.to_html()``. Nothing is shown on screen
        until the caller asks (``plt.show()``).

    Raises
    ------
    DataError
        If the arrays have the wrong shape, a segment names an unknown
        marker, or nothing is drawable.

    Notes
    -----
    The three axes get equal scales (a metre is as long on every axis), the
    limits enclose every frame so the view does not jump while playing.
    Force samples are matched to marker frames by nearest sample:
    ``k_plate = round(k * rate_plate / rate)``.

    Examples
    --------
    >>> import numpy as np
    >>> from ahbm.graphics import stick_view
    >>> pts = np.zeros((10, 2, 3)); pts[:, 1, 2] = 1.0
    >>> viewer = stick_view(pts, segments=[(0, 1)], rate=10.0)
    >>> viewer.show_frame(3)  # doctest: +ELLIPSIS
    <Figure ...>
    >>> viewer.artists["markers"].get_data_3d()[2].tolist()
    [0.0, 1.0]
    >>> import matplotlib.pyplot as plt; plt.close(viewer.fig)
    """
    if vertical_axis not in ("x", "y", "z"):
        raise DataError(f"`vertical_axis` must be 'x', 'y' or 'z', got {vertical_axis!r}")
    if rate is not None:
        rate = as_positive_float(rate, "rate", unit="Hz")
    force_scale = as_positive_float(force_scale, "force_scale", unit="m/N")
    triad_length = as_positive_float(triad_length, "triad_length", unit="m")
    floor_height = as_finite_float(floor_height, "floor_height", unit="m")
    labels = check_names(labels, "labels")
    if segments is not None and (
        isinstance(segments, (str, bytes, dict)) or not hasattr(segments, "__iter__")
    ):
        raise DataError(f"Expected `segments` to be a list of (a, b) pairs, got {segments!r}")
    if data is None and model is None:
        raise DataError("Nothing to draw: give marker `data` (a Trial or an array) or a `model`")
    if (model is None) != (q is None):
        raise DataError("Give `model` and `q` together (q: one row of coordinates per frame)")
    if data is not None:
        pts, labels, rate, time, trial = _as_markers(data, labels, rate)
    else:
        pts, labels, trial, time = None, [], None, None

    T_model = None
    if model is not None:
        T_model = _model_transforms(model, q, None if pts is None else pts.shape[0])
        if pts is None:
            n = T_model.shape[0]
            pts = np.zeros((n, 0, 3))
            time = np.arange(n) / rate if rate is not None else np.arange(n, dtype=float)
    n_frames = pts.shape[0]

    seg_idx = _segment_indices(segments, labels) if segments is not None else np.zeros((0, 2))
    seg_idx = seg_idx.astype(int)

    model_sticks = model_points = None
    triad_list = []
    if T_model is not None:
        from ahbm.graphics.model import model_skeleton

        model_sticks = model_skeleton(model, T_model)
        model_points = {"joints": T_model[..., :3, 3]}
        local = [
            (i, np.asarray(p, dtype=float))
            for i, body in enumerate(model.bodies)
            for p in getattr(body, "markers", {}).values()
        ]
        if local:
            model_points["model_markers"] = np.stack(
                [T_model[:, i, :3, :3] @ p + T_model[:, i, :3, 3] for i, p in local], axis=1
            )
        triad_list.append(T_model)
    if body_frames is not None:
        T_extra, _names = _as_body_frames(body_frames, n_frames)
        triad_list.append(T_extra)
    triads = None
    if triad_list:
        if not (np.isfinite(triad_length) and triad_length > 0):
            raise DataError(f"`triad_length` must be a positive length in m, got {triad_length}")
        triads = _triad_segments(np.concatenate(triad_list, axis=1), triad_length)

    force_segs, outlines = None, []
    if forces and trial is not None and trial.force_plates:
        if rate is None:
            raise DataError("The trial has no point rate; forces cannot be matched to frames")
        force_segs, outlines = _force_segments(
            trial, n_frames, rate, force_scale, reaction, _AXES.index(vertical_axis)
        )

    if frames is None:
        sel = np.arange(n_frames)
    elif isinstance(frames, slice):
        sel = np.arange(n_frames)[frames]
    else:
        sel = np.asarray(frames)
        if sel.size == 0:
            raise DataError("`frames` selects no frame; choose at least one")
        if sel.ndim != 1 or not np.issubdtype(sel.dtype, np.integer):
            raise DataError("`frames` must be a slice or a sequence of integer frame indices")
        bad = (sel < 0) | (sel >= n_frames)
        if bad.any():
            raise DataError(
                f"`frames` contains {int(sel[bad][0])}, outside [0, {n_frames}) for this data"
            )
    if sel.size == 0:
        raise DataError("`frames` selects no frame; choose at least one")

    return StickViewer(
        pts,
        labels,
        np.asarray(time, dtype=float),
        rate,
        segments=seg_idx,
        model_sticks=model_sticks,
        model_points=model_points,
        triads=triads,
        forces=force_segs,
        plate_outlines=outlines,
        frames=sel.astype(int),
        show_labels=show_labels,
        floor=floor,
        floor_height=float(floor_height),
        vertical_axis=vertical_axis,
        ax=ax,
        interactive=interactive,
        title=title,
        follow=follow,
    )
