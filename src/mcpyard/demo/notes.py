"""A demo MCP server over stdio that keeps notes in memory: `python -m mcpyard.demo.notes`."""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

__all__ = ["INSTRUCTIONS", "MAX_SUMMARY_STEPS", "NoteStore", "build_server", "main"]

INSTRUCTIONS = (
    "A small in-memory notebook. Call list_notes to see which notes exist and read_note to read one "
    "by its exact title. add_note creates a note and never overwrites one; delete_note removes a note "
    "for good. word_count counts the words of any text. summarize_slowly is deliberately slow and "
    "reports progress, to show long-running calls. Notes live only as long as this server process."
)

MAX_SUMMARY_STEPS = 50
"""The most steps `summarize_slowly` takes, whatever it is asked for."""

_STEP_SECONDS = 0.2

_SEED_NOTES = {
    "welcome": "This is the mcpyard notes demo. Try reading, adding and deleting notes.",
    "groceries": "oat milk, coffee beans, two lemons, bread",
}


class NoteStore:
    """Notes kept in memory, keyed by title, in the order they were added."""

    def __init__(self, notes: dict[str, str] | None = None) -> None:
        self._notes: dict[str, str] = dict(_SEED_NOTES if notes is None else notes)

    def titles(self) -> list[str]:
        """Return every title, oldest first."""
        return list(self._notes)

    def read(self, title: str) -> str:
        """Return the body of the note called `title`.

        Raises:
            ToolError: No note has that title.
        """
        try:
            return self._notes[title]
        except KeyError:
            raise ToolError(f"No note is titled {title!r}; list_notes shows the titles.") from None

    def add(self, title: str, body: str) -> None:
        """Store a new note.

        Raises:
            ToolError: The title is empty or already taken.
        """
        if not title.strip():
            raise ToolError("A note needs a non-empty title.")
        if title in self._notes:
            raise ToolError(f"A note titled {title!r} already exists; delete it first or pick another title.")
        self._notes[title] = body

    def delete(self, title: str) -> None:
        """Remove the note called `title`.

        Raises:
            ToolError: No note has that title.
        """
        if self._notes.pop(title, None) is None:
            raise ToolError(f"No note is titled {title!r}; list_notes shows the titles.")


def build_server(store: NoteStore | None = None) -> MCPServer:
    """Build the notes server around `store` (a fresh, seeded store by default)."""
    notes = NoteStore() if store is None else store
    server = MCPServer("notes", instructions=INSTRUCTIONS, version="1.0", log_level="WARNING")

    @server.tool(title="List notes", annotations=ToolAnnotations(read_only_hint=True))
    def list_notes() -> list[str]:
        """List the titles of all notes, oldest first."""
        return notes.titles()

    @server.tool(title="Read a note", annotations=ToolAnnotations(read_only_hint=True))
    def read_note(title: str) -> str:
        """Return the body of the note with this exact title."""
        return notes.read(title)

    @server.tool(
        title="Add a note",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    def add_note(title: str, body: str) -> str:
        """Create a note. Fails if a note with this title exists (notes are never overwritten)."""
        notes.add(title, body)
        return f"Added note {title!r}."

    @server.tool(title="Delete a note", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_note(title: str) -> str:
        """Delete the note with this exact title. This cannot be undone."""
        notes.delete(title)
        return f"Deleted note {title!r}."

    @server.tool(title="Count words", annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def word_count(text: str) -> int:
        """Count the whitespace-separated words in a text."""
        return len(text.split())

    @server.tool(title="Summarize notes slowly", annotations=ToolAnnotations(read_only_hint=True))
    async def summarize_slowly(ctx: Context, steps: int = 3) -> str:
        """Summarize all notes, taking about 0.2 s per step and reporting progress after each step.

        `steps` is clamped to 1..50.
        """
        total = max(1, min(steps, MAX_SUMMARY_STEPS))
        for step in range(1, total + 1):
            await anyio.sleep(_STEP_SECONDS)
            await ctx.report_progress(step, total, f"step {step} of {total}")
        titles = notes.titles()
        words = sum(len(notes.read(title).split()) for title in titles)
        listing = ", ".join(titles) if titles else "none"
        return f"{len(titles)} notes, {words} words in all. Titles: {listing}."

    return server


def main() -> None:
    """Serve the notes demo over stdio until stdin closes."""
    build_server().run("stdio")


if __name__ == "__main__":
    main()
