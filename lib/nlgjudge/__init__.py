"""nlgjudge: LLMs as judges of generated text.

Subpackages (imported on demand; importing ``nlgjudge`` does no work):

- ``nlgjudge.config``  where data, caches and released outputs live
- ``nlgjudge.data``    dataset loaders over a configurable data directory
- ``nlgjudge.models``  model registry (hub ids, local dirs, packaged offline weights)
- ``nlgjudge.engine``  judge operations: label probabilities, sampling, likelihoods, generation
- ``nlgjudge.cache``   persistent, content-addressed cache of every model output
- ``nlgjudge.prompts`` prompt templates and output parsers
- ``nlgjudge.stats``   pure numeric code: selection strategies, rankings, debiasing, Elo, metrics
- :func:`nlgjudge.rank` rank your own systems' outputs (``nlgjudge rank`` on the command line)
"""

__version__ = "0.1.0"


def rank(outputs, model=None, **options):  # type: ignore[no-untyped-def]
    """Rank systems from their outputs with a judge; returns the leaderboard (see :mod:`nlgjudge.ranking`)."""
    from nlgjudge.ranking import rank as _rank

    return _rank(outputs, model, **options)
