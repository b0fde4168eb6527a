"""The table of an OpenSim MOT or STO file: :class:`OpenSimTable`.

A table read from a file keeps its numbers as one float array; its pandas
DataFrame (:attr:`OpenSimTable.data`) is built the first time it is asked
for. Code that needs only the numbers (``time``, ``values``, ``columns``),
such as ``ahbm id``, never imports pandas (about 0.3 s of a command's
start-up).
"""

from __future__ import annotations

import numpy as np

from ahbm.errors import DataError

__all__ = ["OpenSimTable"]


class OpenSimTable:
    """A MOT or STO table: time-indexed columns plus the file's header.

    Parameters
    ----------
    data : pandas.DataFrame
        One column per file column except the first, indexed by the first
        column (normally ``time``, s).
    name, in_degrees, angle_columns, header, comments, source
        See the attributes.

    Attributes
    ----------
    data : pandas.DataFrame
        The table (built on first access for tables made by
        :meth:`from_arrays`, e.g. by :func:`ahbm.opensim.read_mot`). Angle
        columns are in radians (SI), see `angle_columns`.
    name : str
        The first header line (the table's name), "" if absent.
    in_degrees : bool
        What the file said (``inDegrees=yes``): its angles were in degrees.
    angle_columns : list of str
        Columns treated as angles: converted from degrees to radians on read
        when `in_degrees` is True, and back to degrees on write.
    header : dict of str to str
        The other ``key=value`` header lines (``version``, ``DataType``,
        ``OpenSimVersion``, ...), excluding ``nRows``/``nColumns``/``inDegrees``
        which are derived from the data.
    comments : list of str
        Free-text header lines (e.g. "Units are S.I. units ...").
    source : str
        The path the table was read from ("" if built in code).

    Examples
    --------
    >>> import pandas as pd
    >>> from ahbm.opensim import read_mot, write_mot
    >>> df = pd.DataFrame({"knee_angle_r": [0.5]}, index=pd.Index([0.0], name="time"))
    >>> write_mot(df, "ik.mot", in_degrees=True)
    >>> table = read_mot("ik.mot")
    >>> table.in_degrees, float(table.data["knee_angle_r"].iloc[0])  # radians again
    (True, 0.5)
    >>> table.values.shape, table.columns
    ((1, 1), ['knee_angle_r'])
    """

    __slots__ = (
        "_data", "_arrays", "name", "in_degrees", "angle_columns", "header", "comments", "source",
    )  # fmt: skip

    def __init__(
        self,
        data,
        name: str = "",
        in_degrees: bool = False,
        angle_columns=None,
        header=None,
        comments=None,
        source: str = "",
    ):
        self._data = data
        self._arrays = None
        self.name = name
        self.in_degrees = in_degrees
        self.angle_columns = [] if angle_columns is None else angle_columns
        self.header = {} if header is None else header
        self.comments = [] if comments is None else comments
        self.source = source

    @classmethod
    def from_arrays(
        cls, time, values, columns, *, index_name: str = "time", **fields
    ) -> OpenSimTable:
        """A table from its numbers, without building a DataFrame yet.

        Parameters
        ----------
        time : array_like, shape (n_rows,)
            The first column (the index).
        values : array_like, shape (n_rows, n_columns)
            The other columns.
        columns : list of str
            Their labels.
        index_name : str
            The first column's label.
        **fields
            ``name``, ``in_degrees``, ``angle_columns``, ``header``,
            ``comments``, ``source``.

        Examples
        --------
        >>> t = OpenSimTable.from_arrays([0.0, 0.01], [[1.0], [2.0]], ["pelvis_tx"])
        >>> t.time.tolist(), t.data["pelvis_tx"].tolist()
        ([0.0, 0.01], [1.0, 2.0])
        """
        time = np.asarray(time, dtype=np.float64)
        values = np.asarray(values, dtype=np.float64)
        columns = [str(c) for c in columns]
        if time.ndim != 1 or values.ndim != 2 or values.shape != (time.size, len(columns)):
            raise DataError(
                f"OpenSimTable.from_arrays: `values` must have shape (len(time), len(columns)) "
                f"= ({time.size}, {len(columns)}), got {values.shape} (time {time.shape})"
            )
        table = cls(None, **fields)
        table._arrays = (time, values, columns, str(index_name))
        return table

    @property
    def data(self):
        """The table as a pandas DataFrame indexed by time (built once, on first use)."""
        if self._data is None and self._arrays is not None:
            import pandas as pd

            time, values, columns, index_name = self._arrays
            index = pd.Index(time, name=index_name)
            self._data = pd.DataFrame(values, columns=columns, index=index)
            self._arrays = None  # the DataFrame is the table from now on (it may be edited)
        return self._data

    @data.setter
    def data(self, value) -> None:
        self._data, self._arrays = value, None

    @property
    def time(self) -> np.ndarray:
        """The index as a float array, shape (n_rows,)."""
        if self._arrays is not None:
            return self._arrays[0]
        return self.data.index.to_numpy(dtype=np.float64)

    @property
    def values(self) -> np.ndarray:
        """The columns' numbers, shape (n_rows, n_columns) (a view: do not write)."""
        if self._arrays is not None:
            return self._arrays[1]
        return self.data.to_numpy(dtype=np.float64)

    @property
    def index_name(self) -> str:
        """The first column's label (normally ``time``)."""
        if self._arrays is not None:
            return self._arrays[3]
        name = self.data.index.name
        return "time" if name is None else str(name)

    @property
    def columns(self) -> list[str]:
        """Column labels (without the time column)."""
        if self._arrays is not None:
            return list(self._arrays[2])
        return [str(c) for c in self.data.columns.tolist()]  # (iterating an Index is slower)

    def replace(self, **changes) -> OpenSimTable:
        """A copy with some attributes replaced (``data``, ``name``, ``angle_columns``...).

        Examples
        --------
        >>> t = OpenSimTable.from_arrays([0.0], [[1.0]], ["a"], name="q")
        >>> t.replace(name="r").name, t.name
        ('r', 'q')
        """
        new = object.__new__(type(self))
        for slot in self.__slots__:
            setattr(new, slot, getattr(self, slot))
        for key, value in changes.items():
            if key not in ("data", *self.__slots__[2:]):
                raise DataError(f"OpenSimTable.replace: unknown attribute {key!r}")
            setattr(new, key, value)
        return new

    def __len__(self) -> int:
        return self.time.shape[0]

    def __repr__(self) -> str:
        cols = self.columns
        shown = ", ".join(cols[:8]) + (f", ... (+{len(cols) - 8} more)" if len(cols) > 8 else "")
        t = self.time if len(self) else np.zeros(0)
        span = f"{t[0]:.4g}..{t[-1]:.4g} s" if t.size else "no rows"
        source = self.source if len(self.source) <= 60 else "..." + self.source[-57:]
        return (
            f"OpenSimTable(name={self.name[:40]!r}, {len(self)} rows {span}, {len(cols)} "
            f"columns [{shown}], in_degrees={self.in_degrees}, source={source!r})"
        )
