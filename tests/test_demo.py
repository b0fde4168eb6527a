"""`ahbm demo`: its checks pass, and it says when it compiles the kernels."""

from ahbm._engine import compilation
from ahbm.cli import demo


def test_demo_says_when_it_compiles(monkeypatch, tmp_path, capsys):
    """On a first run (kernels not cached) the demo says so and compiles ABA in a helper process."""
    started = []
    real = compilation.compile_in_background

    def background(names):
        started.append(tuple(names))
        return real(names)

    import ahbm.cli._compiling as compiling

    monkeypatch.setattr(compilation, "is_compiled", lambda names: False)
    monkeypatch.setattr(compilation, "compile_in_background", background)
    monkeypatch.setattr(compiling, "uncached", lambda command: ["rnea", "aba"])
    assert demo.toolbox_demo(out_dir=tmp_path) == 0
    captured = capsys.readouterr()
    out = captured.out
    # the announcement goes to stderr, with the estimate of the wait
    assert "ahbm demo: compiling 2 numba kernel(s)" in captured.err
    assert started == [("aba",)]
    # the compile time is reported on its own line, before the run times
    assert out.index("compiled the kernels in") < out.index("RNEA over 200 frames in one call")
    assert "all 6 checks passed" in out


def test_demo_compiles_in_process_when_no_helper_can_start(monkeypatch, tmp_path, capsys):
    """If the second interpreter cannot be started, the demo compiles everything itself."""

    def fail(names):
        raise OSError("no interpreter")

    monkeypatch.setattr(compilation, "is_compiled", lambda names: False)
    monkeypatch.setattr(compilation, "compile_in_background", fail)
    assert demo.toolbox_demo(out_dir=tmp_path) == 0
    out = capsys.readouterr().out
    assert "compiled the kernels in" in out and "all 6 checks passed" in out
