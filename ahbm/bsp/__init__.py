"""Body-segment parameters: regression tables (Dempster, de Leva, Dumas, ...),
geometric segment models, and scaling of a model's inertial parameters.

- :mod:`ahbm.bsp.tables`: the published tables and :func:`segment_parameters`.
- :mod:`ahbm.bsp.geometric`: inertia of geometric solids (ellipsoid, cone, ...).
- :mod:`ahbm.bsp.scaling`: :func:`scale_model`, a model's inertial parameters
  from a table.
- :mod:`ahbm.bsp.segment_scaling`: scale factors from marker measurements and
  scaling by them, as OpenSim's Scale tool does.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__, ["tables", "geometric", "scaling", "segment_scaling"]
)
