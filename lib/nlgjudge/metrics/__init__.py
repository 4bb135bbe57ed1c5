"""Reference-based text metrics (ROUGE, BERTScore): one implementation shared by every chapter.

:mod:`~nlgjudge.metrics.reference` scores candidate texts against references with the kept
libraries (``rouge-score``, ``bert-score`` on the packaged MiniLM encoder). The first paper's
baselines, the Elo chapter's ROUGE judge and the narcissism chapter's quality anchor all use it.
"""
