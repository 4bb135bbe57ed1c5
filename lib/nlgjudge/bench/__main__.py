"""``python -m nlgjudge.bench [NAME] [ARGS...]``: see :mod:`nlgjudge.bench`."""

from nlgjudge.bench import main

raise SystemExit(main())
