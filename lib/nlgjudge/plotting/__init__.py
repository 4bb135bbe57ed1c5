"""Figures for the book, one module per chapter, in one style (:mod:`~nlgjudge.plotting.style`).

* :mod:`~nlgjudge.plotting.datasets`: score distributions, aspect correlations, scales;
* :mod:`~nlgjudge.plotting.comparative`: the paper's correlations beside ours;
* :mod:`~nlgjudge.plotting.bias`: P(A) per model, prompt and aspect;
* :mod:`~nlgjudge.plotting.subsets`: Spearman against the number of comparisons.
* :mod:`~nlgjudge.plotting.runtime`: P(A) under two runtimes, and their paired differences.

Only this package imports matplotlib and seaborn (a test checks it). ``set_style`` and ``show``
are re-exported here for notebooks.
"""

from nlgjudge.plotting.style import CORRELATION_CMAP, PALETTE, set_style, show

__all__ = ["CORRELATION_CMAP", "PALETTE", "set_style", "show"]
