"""The call pipeline: sendable, resolve, validate, decide, read files, cache, ask, recheck, dispatch, shape, record.

`run(view, session, request)` takes one call through every stage over a host's view
(`mcpyard.HostView`) and session; each stage is a function of its own in `_stages.py`.
"""

from mcpyard.connect import (
    MAX_ARGUMENTS_BYTES,
    MAX_ARGUMENTS_DEPTH,
    sendable_copy,
    sendable_problem,
    unsendable_text,
)
from mcpyard.pipeline._cache import IdempotentCache, cache_key
from mcpyard.pipeline._call import Call, CallRequest, Refusal, watching_progress
from mcpyard.pipeline._find import FIND_TOOLS, FIND_TOOLS_TOOL, over_budget, search, searchable
from mcpyard.pipeline._found import FoundTools
from mcpyard.pipeline._record import CallRecord, CallRecorder, CallStatus, FileRecord, MemoryRecorder, Recorders
from mcpyard.pipeline._resolve import resolve
from mcpyard.pipeline._result import CallResult
from mcpyard.pipeline._run import READ_RESULT, READ_RESULT_TOOL, STAGES, Stage, read_result, refused, run
from mcpyard.pipeline._session import Session
from mcpyard.pipeline._shape import (
    CACHED_LINE,
    IN_THE_FENCE,
    ShapeContext,
    beside_the_fence,
    cut_to_bytes,
    fence,
    file_line,
    shape_result,
)
from mcpyard.pipeline._stages import (
    ask,
    check_sendable,
    decide_call,
    dispatch,
    look_up_cache,
    read_files,
    recheck,
    shape,
    validate,
)
from mcpyard.pipeline._store import MAX_STORED_RESULT_BYTES, Results, ResultStore, Window
from mcpyard.pipeline._unfence import FencedResults, TextPart, fenced_parts
from mcpyard.pipeline._validate import VALIDATION_BUDGET_SECS, check_arguments, quick_check, validate_arguments

__all__ = [
    "CACHED_LINE",
    "FIND_TOOLS",
    "FIND_TOOLS_TOOL",
    "IN_THE_FENCE",
    "MAX_ARGUMENTS_BYTES",
    "MAX_ARGUMENTS_DEPTH",
    "MAX_STORED_RESULT_BYTES",
    "READ_RESULT",
    "READ_RESULT_TOOL",
    "STAGES",
    "VALIDATION_BUDGET_SECS",
    "Call",
    "CallRecord",
    "CallRecorder",
    "CallRequest",
    "CallResult",
    "CallStatus",
    "FencedResults",
    "FileRecord",
    "FoundTools",
    "IdempotentCache",
    "MemoryRecorder",
    "Recorders",
    "Refusal",
    "ResultStore",
    "Results",
    "Session",
    "ShapeContext",
    "Stage",
    "TextPart",
    "Window",
    "ask",
    "beside_the_fence",
    "cache_key",
    "check_arguments",
    "check_sendable",
    "cut_to_bytes",
    "decide_call",
    "dispatch",
    "fence",
    "fenced_parts",
    "file_line",
    "look_up_cache",
    "over_budget",
    "quick_check",
    "read_files",
    "read_result",
    "recheck",
    "refused",
    "resolve",
    "run",
    "search",
    "searchable",
    "sendable_copy",
    "sendable_problem",
    "shape",
    "shape_result",
    "unsendable_text",
    "validate",
    "validate_arguments",
    "watching_progress",
]
