"""The call pipeline: resolve, validate, decide, read files, cache, ask, dispatch, shape (CALL)."""

from mcpyard.pipeline._cache import IdempotentCache, cache_key
from mcpyard.pipeline._result import CallResult
from mcpyard.pipeline._run import READ_RESULT, READ_RESULT_TOOL, CallRunner, Session
from mcpyard.pipeline._shape import CACHED_LINE, ShapeContext, cut_to_bytes, fence, file_line, shape_result
from mcpyard.pipeline._stages import resolve, validate_arguments
from mcpyard.pipeline._store import MAX_STORED_RESULT_BYTES, ResultStore, Window

__all__ = [
    "CACHED_LINE",
    "MAX_STORED_RESULT_BYTES",
    "READ_RESULT",
    "READ_RESULT_TOOL",
    "CallResult",
    "CallRunner",
    "IdempotentCache",
    "ResultStore",
    "Session",
    "ShapeContext",
    "Window",
    "cache_key",
    "cut_to_bytes",
    "fence",
    "file_line",
    "resolve",
    "shape_result",
    "validate_arguments",
]
