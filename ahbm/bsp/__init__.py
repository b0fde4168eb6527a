"""Body-segment parameters: regression tables (Dempster, de Leva, Dumas, ...),
geometric segment models, and scaling of a model's inertial parameters.
"""

__all__: list[str] = []
