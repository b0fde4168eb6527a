"""The outputs of the OpenSim tools: checked, created and named before the computation (internal).

Shared by :mod:`ahbm.opensim.id_tool`, ``ik_tool``, ``scale_tool`` and ``so_tool``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ahbm._internal.files import TEMP_MARKER, _host_tag
from ahbm._internal.output import check_output, inside_folder, os_error
from ahbm._internal.validation import output_path
from ahbm.errors import DataError
from ahbm.opensim.setup_files import ExternalLoads, _shown

# --- outputs ------------------------------------------------------------------------------
#
# The policy of every tool (docs/security.md): an output that is one of the run's inputs
# (setup, model, data files, external loads and their data, through links too) is refused;
# an existing file is replaced only when it has a suffix the writer writes, and atomically;
# names read from a setup cannot leave the results folder; the folders are created and
# checked before the computation; every OSError becomes a DataError naming the path.

#: Suffixes of the storage files the tools write (replaced when they exist).
_STORAGE = (".sto", ".mot")
#: Longest file name (bytes) of common file systems.
_NAME_MAX = 255


def _make_folder(folder: Path, argname: str = "results folder") -> None:
    """Create an output folder named by a setup (as OpenSim does); DataError on failure."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise os_error(err, folder, "create the output folder", argname=argname) from err


def _writable_folder(folder, *, argname: str, create: bool = False) -> Path:
    """Check, before a computation, that a file can be created in `folder`.

    `create`: create the folder first (the results folder a setup names, as
    OpenSim does); otherwise it must exist. The check creates and removes an
    empty temporary file (named as :func:`ahbm._internal.files.atomic_path` names its
    temporaries, so that :func:`~ahbm._internal.files.cleanup_temporaries` removes one
    left by a killed process): permissions, read-only file systems, quotas and
    ACLs are all tested as the write will meet them.
    """
    folder = Path(folder) if str(folder) else Path(".")
    if create:
        _make_folder(folder, argname)
    try:
        if not folder.is_dir():
            raise DataError(
                f"Cannot write `{argname}`: the folder {str(folder)!r} does not exist; create it "
                "first or choose another output"
            )
        fd, probe = tempfile.mkstemp(
            prefix=f".probe.{TEMP_MARKER}-{_host_tag()}-{os.getpid()}-", suffix=".tmp", dir=folder
        )
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise os_error(err, folder, "write in the folder", argname=argname) from err
    return folder


def _check_out(path, inputs, suffixes, argname: str) -> Path:
    """:func:`ahbm._internal.output.check_output`; an OSError (a folder not searchable) too."""
    try:
        return check_output(output_path(path, argname), inputs, suffixes=suffixes, argname=argname)
    except OSError as err:
        raise os_error(err, path, "check the output", argname=argname) from err


def _named_output(folder: Path, names, suffix: str) -> Path:
    """``folder / "_".join(names) + suffix`` for names read from a setup.

    `names` holds ``(name, where)`` pairs, `where` saying which attribute of
    which setup the name is (for the message); each name, and the whole file
    name, must be a plain file name: it cannot leave the results folder.
    """
    for name, where in names:
        if len(name) > _NAME_MAX:
            raise DataError(
                f"{where} {_shown(name)} is too long to be used in an output file name; "
                "rename it in the setup file"
            )
        if name:
            inside_folder(folder, name, argname=where)
    joined = "_".join(name for name, _ in names) + suffix
    if len(joined.encode("utf-8", "surrogateescape")) > _NAME_MAX:
        raise DataError(
            f"the output file name {_shown(joined)} made of {' and '.join(w for _, w in names)} "
            f"is longer than {_NAME_MAX} bytes, which file systems refuse; shorten the names"
        )
    return inside_folder(folder, joined, argname=names[0][1])


def _loads_inputs(loads: ExternalLoads | None) -> list:
    """The input files of an external-loads description, as (what, path) pairs."""
    if loads is None:
        return []
    return [
        ("external loads", loads.path),
        ("external loads data", loads.datafile),
        ("external loads kinematics", loads.model_kinematics_file),
    ]
