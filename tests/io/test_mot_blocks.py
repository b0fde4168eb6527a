"""The numeric block of MOT/STO files: the numbers read are those of Python's ``float``
per field, whichever reader (numpy's for regular blocks, pandas' otherwise) ran.

Covers tabs and spaces, blank lines, CRLF, NaN spellings, short rows (NaN
filled), long rows and text (errors naming the file and line), headers with
and without ``endheader`` variants.
"""

from __future__ import annotations

import numpy as np
import pytest

from ahbm.errors import FileFormatError
from ahbm.opensim import read_mot

HEAD = "t\nversion=1\ninDegrees=no\nendheader\n"


def _write(tmp_path, text, newline="\n"):
    path = tmp_path / "x.mot"
    path.write_bytes(text.replace("\n", newline).encode("latin-1"))
    return path


def _table(read):
    return np.column_stack([read.time, read.data.to_numpy()])


def _reference(rows: list[str]) -> np.ndarray:
    """Python's float per whitespace-separated field (NaN for the C runtimes' NaN)."""
    nan = {"nan(ind)", "-nan(ind)", "1.#qnan", "-1.#ind", "1.#ind", "-nan", "nan"}
    out = []
    for r in rows:
        if r.strip():
            out.append([np.nan if f.lower() in nan else float(f) for f in r.split()])
    return np.array(out)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("sep", ["\t", " ", "\t  ", "   "])
def test_regular_blocks_read_as_python_floats(tmp_path, sep, newline):
    rng = np.random.default_rng(4)
    values = rng.standard_normal((40, 5)) * 10.0 ** rng.integers(-9, 9, (40, 5))
    values[:, 0] = np.arange(40) / 60.0
    fmts = (repr, lambda v: f"{v:.8f}", lambda v: f"{v:.15e}", lambda v: f"{v:16.8f}")
    rows = [sep.join(fmts[k % 4](v) for v in row) for k, row in enumerate(values.tolist())]
    rows[3] = sep + rows[3] + sep  # leading and trailing separators
    body = "\n".join(rows[:10]) + "\n\n  \n" + "\n".join(rows[10:]) + "\n\n"
    path = _write(tmp_path, HEAD + sep.join("time a b c d".split()) + "\n" + body, newline)
    got = _table(read_mot(path))
    np.testing.assert_array_equal(got, _reference(rows))
    assert got.dtype == np.float64


def test_single_row_single_column_and_infinities(tmp_path):
    path = _write(tmp_path, HEAD + "time\ta\n0.5\t-inf\n")
    got = _table(read_mot(path))
    assert got.shape == (1, 2) and got[0, 0] == 0.5 and got[0, 1] == -np.inf
    path = _write(tmp_path, HEAD + "time\n0\n1e400\n")
    assert read_mot(path).time.tolist() == [0.0, np.inf]


@pytest.mark.parametrize(
    "spelling", ["nan", "NaN", "-nan", "nan(ind)", "-nan(ind)", "1.#QNAN", "-1.#IND", "NA"]
)
def test_nan_spellings(tmp_path, spelling):
    path = _write(tmp_path, HEAD + f"time\ta\tb\n0\t1\t2\n1\t{spelling}\t4\n")
    got = _table(read_mot(path))
    assert got.shape == (2, 3)
    assert np.isnan(got[1, 1]) and got[1, 2] == 4.0
    np.testing.assert_array_equal(got[0], [0, 1, 2])


def test_short_rows_are_nan_filled(tmp_path):
    path = _write(tmp_path, HEAD + "time a b\n0 1 2\n1 3\n2 5 6\n")
    got = _table(read_mot(path))
    np.testing.assert_array_equal(got[[0, 2]], [[0, 1, 2], [2, 5, 6]])
    assert got[1, 1] == 3.0 and np.isnan(got[1, 2])


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("0 1 2\n1 2 3 4\n", r"from line 6\) is not a numeric table.*line 2"),
        ("0 1 2\n1 x 3\n", "from line 6"),
        ("0 1 2\n# comment\n", "from line 6"),
        ("0 1,5 2\n", "from line 6"),
    ],
)
def test_bad_rows_name_the_file_and_line(tmp_path, body, match):
    path = _write(tmp_path, HEAD + "time a b\n" + body)
    with pytest.raises(FileFormatError, match=match) as err:
        read_mot(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("end", ["endheader", "ENDHEADER", "  endheader \t", "endheader\r"])
def test_endheader_spellings_and_blank_label_lines(tmp_path, end):
    text = f"t\nversion=1\nnRows=2\nnColumns=2\n{end}\n\ntime\ta\n0\t1.5\n0.01\t2.5\n"
    table = read_mot(_write(tmp_path, text))
    np.testing.assert_array_equal(_table(table), [[0, 1.5], [0.01, 2.5]])
    assert table.columns == ["a"]
