"""Everything OpenSim: models, motion files, setup files and the tools that run them.

- :mod:`ahbm.opensim.osim` reads ``.osim`` models (bodies, joints,
  coordinates, constraints, markers, muscles and wrapping) and
  :mod:`ahbm.opensim.osim_write` writes them; :mod:`ahbm.opensim.osim_section`
  keeps what ahbm does not model, :mod:`ahbm.opensim.coordinate_table` the
  coordinate table and OpenSim's generalized speeds;
  :mod:`ahbm.opensim.muscle_paths` turns their muscles into ahbm paths.
- :mod:`ahbm.opensim.storage` reads and writes MOT/STO tables.
- :mod:`ahbm.opensim.setup_files` reads OpenSim's IK and ID setup files and
  external-loads files.
- :mod:`ahbm.opensim.processing` reproduces OpenSim's processing of
  coordinates for inverse dynamics (padding, 3rd-order Butterworth low-pass run
  forward and backward, quintic spline and its derivatives).
- :mod:`ahbm.opensim.coordinates` orders and converts a model's coordinates as
  OpenSim's tools do; :mod:`ahbm.opensim.external_loads` turns external loads
  into ``f_ext`` for :func:`ahbm.dynamics.rnea`.
- :mod:`ahbm.opensim.id_tool` and :mod:`ahbm.opensim.ik_tool` run the setups
  (``ahbm id SETUP.xml``, ``ahbm ik SETUP.xml``) and write OpenSim's files.
- :mod:`ahbm.opensim.so_tool` runs OpenSim's AnalyzeTool setups with a
  StaticOptimization (and JointReaction) analysis (``ahbm so SETUP.xml``)
  and writes OpenSim's activation, force and reaction-load files.
- :mod:`ahbm.opensim.scale_tool` reads and runs OpenSim's Scale setups
  (``ahbm scale SETUP.xml``): scale factors from marker pairs, model scaling,
  marker placement.
- :mod:`ahbm.opensim.rra_tool` runs OpenSim's RRATool setups (``ahbm rra
  SETUP.xml``) on the tracking core of :mod:`ahbm.opensim.cmc_tracking`:
  residual reduction, COM adjustment, OpenSim's result files.
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(
    __name__,
    [
        "osim",
        "osim_write",
        "osim_section",
        "coordinate_table",
        "muscle_paths",
        "smooth_contacts",
        "meshes",
        "storage",
        "setup_files",
        "processing",
        "coordinates",
        "external_loads",
        "id_tool",
        "ik_tool",
        "scale_setup",
        "scale_tool",
        "so_setup",
        "so_tool",
        "analyze_setup",
        "analyze_tool",
        "cmc_tracking",
        "rra_setup",
        "rra_tool",
    ],
)
