"""Read and write C3D motion-capture files with numpy.

`read_c3d` parses the header, the complete parameter section and the data
section of a C3D file written by any of the three processor types (Intel,
DEC, SGI/MIPS) in integer or floating-point storage, and returns a
:class:`~ahbm.io.trial.Trial`. The data section is decoded in one vectorized
pass (``np.frombuffer`` with a structured dtype over the whole block).

Every size read from the file is checked against the file length before any
array is allocated; a malformed or truncated file raises
:class:`~ahbm.errors.FileFormatError` naming the byte offset or the parameter
at fault, and recoverable inconsistencies issue an
:class:`~ahbm.errors.AhbmWarning`.

`write_c3d` writes an Intel floating-point C3D file atomically (temporary
file in the same folder, then ``os.replace``).

Modules, one per stage: ``header`` (the header block, frame counts),
``parameters`` (parameter records, the group tree, typed access), ``data``
(layout and vectorized decoding of the frames), ``interpret`` (units, analog
calibration, labels, rates, events, subject, force plates), ``reader``
(:func:`read_c3d` composing them), ``writer`` (:func:`write_c3d`),
``numbers`` (processor formats, DEC floats).

References
----------
Motion Lab Systems, *The C3D File Format User Guide* (2008), chapters 2-5
(header, parameter section, data section, processor formats).
"""

from ahbm._internal.lazy import lazy_package

__getattr__, __dir__, __all__ = lazy_package(__name__, ["reader", "writer"])
