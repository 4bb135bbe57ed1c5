"""From the studies' tidy frames to the chapters' tables: pure frame-to-table code.

One module per chapter (:mod:`~nlgjudge.analysis.comparative`, :mod:`~nlgjudge.analysis.bias`,
:mod:`~nlgjudge.analysis.subsets`, :mod:`~nlgjudge.analysis.datasets`), plus the shared schema of
the comparison frame (:mod:`~nlgjudge.analysis.frames`) and the one layout that puts a paper's
reported numbers beside ours (:mod:`~nlgjudge.analysis.side_by_side`).

Nothing here calls a model or imports torch, transformers, the engine or the model registry
(a test checks it): the numbers come from :mod:`nlgjudge.stats`, the frames from
:mod:`nlgjudge.studies`, the figures are drawn by :mod:`nlgjudge.plotting`.
"""
