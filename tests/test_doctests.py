"""Run the examples in the docstrings of every ahbm module as tests."""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import ahbm


def _modules():
    names = ["ahbm"]
    for info in pkgutil.walk_packages(ahbm.__path__, "ahbm."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write here
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    globs = {"np": np}
    for test in finder.find(module, name, globs=dict(globs, **vars(module))):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
