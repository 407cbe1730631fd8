"""The call pipeline: resolve, validate, dispatch, shape (CALL)."""

from mcpyard.pipeline._result import CallResult
from mcpyard.pipeline._stages import resolve, shape, validate_arguments

__all__ = ["CallResult", "resolve", "shape", "validate_arguments"]
