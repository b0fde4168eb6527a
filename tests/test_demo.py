"""`ahbm demo`: its checks pass, and it says when it compiles the kernels."""

from ahbm import demo
from ahbm._engine import kernels


def test_demo_says_when_it_compiles(monkeypatch, tmp_path, capsys):
    """On a first run (kernels not cached) the demo says so and compiles ABA in a helper process."""
    started = []
    real = kernels.compile_in_background

    def background(names):
        started.append(tuple(names))
        return real(names)

    monkeypatch.setattr(kernels, "is_compiled", lambda names: False)
    monkeypatch.setattr(kernels, "compile_in_background", background)
    assert demo.run_demo(out_dir=tmp_path) == 0
    out = capsys.readouterr().out
    assert "compiling the dynamics kernels (first run only" in out
    assert started == [("aba",)]
    # the compile time is reported on its own line, before the run times
    assert out.index("compiled the kernels in") < out.index("RNEA over 200 frames in one call")
    assert "all 6 checks passed" in out
