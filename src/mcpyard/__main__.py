"""`python -m mcpyard` runs the console."""

from mcpyard.cli import console_main

console_main()
