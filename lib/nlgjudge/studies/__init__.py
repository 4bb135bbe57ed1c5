"""Studies: the papers' experiments as library calls (request building, running, tidy results).

Model calls happen only through :class:`nlgjudge.engine.Judge` (every output cached); analysis of
the tidy results lives in :mod:`nlgjudge.stats`. Notebooks call these functions and stay thin.

* :mod:`~nlgjudge.studies.prompting`: how a template becomes an engine request for a model
  (chat template, plain text, or encoder-decoder) - one place, explicit;
* :mod:`~nlgjudge.studies.comparative`: all ordered pairs of every context -> P(A) frame and
  comparison matrices (seed 000 sections 3-5);
* :mod:`~nlgjudge.studies.scoring`: prompt scoring (score distribution and sampling) and G-Eval;
* :mod:`~nlgjudge.studies.released`: released outputs (``data/outputs``) in and out of the cache;
* ``python -m nlgjudge.studies``: the resumable background runner.
"""
