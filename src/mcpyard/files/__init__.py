"""Local files sent as tool arguments: path rules and a safe single read (FILE-1 to FILE-3)."""

from mcpyard.files._read import LocalFile, read_local_file
from mcpyard.files._rules import CREDENTIAL_PATTERNS, PROTECTED_FOLDERS, FileRefused, refused_component

__all__ = [
    "CREDENTIAL_PATTERNS",
    "PROTECTED_FOLDERS",
    "FileRefused",
    "LocalFile",
    "read_local_file",
    "refused_component",
]
