"""Judge operations over one model: label probabilities, sampling, log-likelihoods, generation."""

from nlgjudge.engine.judge import BACKENDS, Judge, RunReport, choose_backend, normalise
from nlgjudge.engine.llamacpp import BackendUnavailableError
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
    "BACKENDS",
    "BackendUnavailableError",
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
    "choose_backend",
    "normalise",
]
