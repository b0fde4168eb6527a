"""Data analysis: filters, numerical derivatives, gap filling, gait events,
cycles and time normalization, statistics.
"""

__all__: list[str] = []
