"""Judge operations over one model: label probabilities, sampling, log-likelihoods, generation."""

from nlgjudge.engine.judge import Judge, RunReport, normalise
from nlgjudge.engine.requests import (
    ClassifyRequest,
    ClassifyResult,
    ContextTooLongError,
    EngineInputError,
    GenerateRequest,
    GenerateResult,
    LoglikRequest,
    LoglikResult,
    NumericalError,
    SampleRequest,
    SampleResult,
)

__all__ = [
    "ClassifyRequest",
    "ClassifyResult",
    "ContextTooLongError",
    "EngineInputError",
    "GenerateRequest",
    "GenerateResult",
    "Judge",
    "LoglikRequest",
    "LoglikResult",
    "NumericalError",
    "RunReport",
    "SampleRequest",
    "SampleResult",
    "normalise",
]
