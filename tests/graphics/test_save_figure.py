"""save_figure: folders created, format by extension, never a half-written file."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from ahbm.errors import DataError  # noqa: E402
from ahbm.graphics import save_figure  # noqa: E402


def _fig():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig


def test_writes_png_and_pdf_creating_folders(tmp_path):
    fig = _fig()
    out = save_figure(fig, tmp_path / "a" / "b" / "line.png", dpi=50)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)  # closed by default
    fig = _fig()
    pdf = save_figure(fig, tmp_path / "line.PDF", close=False)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert plt.fignum_exists(fig.number)
    plt.close(fig)


def test_unsupported_extension(tmp_path):
    fig = _fig()
    with pytest.raises(DataError, match=r"`report`.*\.png"):
        save_figure(fig, tmp_path / "line.xyz", argname="report")
    assert list(tmp_path.iterdir()) == []
    assert not plt.fignum_exists(fig.number)


def test_failure_leaves_existing_file_untouched(tmp_path, monkeypatch):
    target = tmp_path / "line.png"
    target.write_bytes(b"old")
    fig = _fig()

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fig, "savefig", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        save_figure(fig, target)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["line.png"]  # no temporary left
    assert not plt.fignum_exists(fig.number)


def test_folder_that_cannot_be_created(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="folder"):
        save_figure(_fig(), tmp_path / "file" / "sub" / "line.png")
