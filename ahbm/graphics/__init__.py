"""Graphics built on matplotlib (imported lazily inside the functions):
StickViewer, XYViewer, gait-cycle plots, model drawing and animation export.

Everything works with a non-interactive backend (Agg) on a machine without a
display; no function calls ``plt.show()``. Each returns the matplotlib
Figure, or a viewer object holding it, so that the caller can restyle it.
"""

from ahbm.graphics._common import is_interactive_backend, plain_text, save_figure
from ahbm.graphics.gait import (
    GaitCycleSummary,
    gait_cycle_summary,
    gait_cycles_from_results,
    plot_gait_cycles,
)
from ahbm.graphics.model import draw_model, geometry_mesh, model_skeleton
from ahbm.graphics.simulation import plot_simulation
from ahbm.graphics.stick import (
    PLUG_IN_GAIT_SEGMENTS,
    StickViewer,
    plug_in_gait_segments,
    stick_view,
)
from ahbm.graphics.xy import XYViewer, xy_view

__all__ = [
    "PLUG_IN_GAIT_SEGMENTS",
    "StickViewer",
    "XYViewer",
    "draw_model",
    "gait_cycle_summary",
    "GaitCycleSummary",
    "gait_cycles_from_results",
    "geometry_mesh",
    "is_interactive_backend",
    "model_skeleton",
    "plain_text",
    "plot_gait_cycles",
    "plot_simulation",
    "plug_in_gait_segments",
    "save_figure",
    "stick_view",
    "xy_view",
]
