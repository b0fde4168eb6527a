"""Dynamics: spatial (6-D) vector algebra, inverse dynamics (RNEA, segment
Newton-Euler), forward dynamics (ABA, CRBA, constrained systems), constraints,
force elements and simulation.
"""

__all__: list[str] = []
