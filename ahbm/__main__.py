"""``python -m ahbm`` is the same as the ``ahbm`` command."""

import sys

from ahbm.cli import main

sys.exit(main())
