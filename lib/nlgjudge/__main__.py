"""``python -m nlgjudge``: the same as the ``nlgjudge`` console script (see :mod:`nlgjudge.cli`)."""

import sys

from nlgjudge.cli import main

sys.exit(main())
