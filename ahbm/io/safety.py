"""Safety settings of ahbm's readers and writers.

:func:`max_read_bytes` and :func:`set_max_read_bytes` give and set the memory
cap of one read (a crafted file cannot make a reader allocate more);
:func:`cleanup_temporaries` removes the temporary files that writers killed
by SIGKILL left behind in a folder. See ``docs/security.md``.
"""

from ahbm._internal.files import cleanup_temporaries
from ahbm._internal.validation import max_read_bytes, set_max_read_bytes

__all__ = ["max_read_bytes", "set_max_read_bytes", "cleanup_temporaries"]
