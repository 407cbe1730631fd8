"""`python -m mcpyard` runs the console."""

from mcpyard.cli import main

raise SystemExit(main())
