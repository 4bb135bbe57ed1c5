"""nlgjudge: LLMs as judges of generated text.

Subpackages (imported on demand; importing ``nlgjudge`` does no work):

- ``nlgjudge.config``  where data, caches and released outputs live
- ``nlgjudge.data``    dataset loaders over a configurable data directory
- ``nlgjudge.models``  model registry (hub ids, local dirs, packaged offline weights)
- ``nlgjudge.engine``  judge operations: label probabilities, sampling, likelihoods, generation
- ``nlgjudge.cache``   persistent, content-addressed cache of every model output
- ``nlgjudge.prompts`` prompt templates and output parsers
- ``nlgjudge.stats``   pure numeric code: selection strategies, rankings, debiasing, Elo, metrics
"""

__version__ = "0.1.0"
