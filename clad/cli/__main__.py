"""``python -m clad.cli``: the ``clad`` command."""

import sys

from . import main

sys.exit(main())
