"""Graphics built on matplotlib (imported lazily inside the functions):
StickViewer, XYViewer, gait-cycle plots, model drawing and animation export.

Everything works with a non-interactive backend (Agg) on a machine without a
display; no function calls ``plt.show()``. Each returns the matplotlib
Figure, or a viewer object holding it, so that the caller can restyle it.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "stick",
        "xy",
        "gait",
        "model",
        "simulation",
        "figures",
        "spm",
        "gait_scores",
        "view3d",
    ],
)
