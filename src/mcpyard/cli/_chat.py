"""`mcpyard chat`: a terminal agent, a model driving the configured servers' tools through the pipeline (MOD-3).

The model comes from the flags, else the user config's `model` table (`base_url`, `model`,
`api_key = "${secret:NAME}"`, `provider`); the key is read from the saved secrets and is never
shown. On a terminal it is a conversation with prompts, approval cards and servers' questions (forms, asked
inline); from a pipe each line is one user message of one conversation, a call that must ask is
refused (the model reads why), and a server's question is declined with a line on standard error.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mcpyard.cli._chat_model import ChatModel
from mcpyard.cli._common import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    Globals,
    environ,
    fail,
    open_host,
    run,
    with_globals,
)
from mcpyard.cli._interrupts import ctrl_c_cancels

if TYPE_CHECKING:
    from mcpyard.config import ModelSettings
    from mcpyard.model import Model

__all__ = ["chat", "chat_model"]

DEFAULT_MAX_CALLS = 20
NO_ONE_HERE = "this chat reads from a pipe or prints JSON, so no one can answer it: run `mcpyard chat` on a terminal"


def chat_model(
    settings: ModelSettings, *, base_url: str | None, model: str | None, key_secret: str | None
) -> ChatModel:
    """The chat's model from the flags over the `model` table, its key read from the saved secrets.

    Raises:
        typer.Exit: (2) no model or address is configured, or the key's secret is not saved.
    """
    from mcpyard.model import AnthropicModel, OpenAIModel

    provider = settings.provider or "openai"
    name = model or settings.model
    address = base_url or settings.base_url
    secret = key_secret or settings.api_key_secret
    where = "pass --model NAME and --base-url URL, or set them in the user config's [model] table"
    if not name:
        fail(f"no model is configured: {where}")
    if provider == "openai" and not address:
        fail(f"no model address is configured: {where} (such as http://127.0.0.1:11434/v1 for a local server)")
    if address is not None and not address.startswith(("http://", "https://")):
        fail("--base-url must be an http:// or https:// address, such as http://127.0.0.1:11434/v1")
    key = _saved_key(secret) if secret else None
    if provider == "anthropic":
        from mcpyard.errors import UsageError

        try:
            backend: Model = AnthropicModel(model=name, api_key=key, base_url=address)
        except UsageError as exc:
            fail(str(exc))
        return ChatModel(backend, key, secret, f"{name} (Anthropic)")
    assert address is not None  # checked above for this provider
    backend = OpenAIModel(base_url=address, model=name, api_key=key)
    return ChatModel(backend, key, secret, f"{name} at {backend.shown_url}")


def _saved_key(name: str) -> str:
    from mcpyard._paths import data_home
    from mcpyard.secrets import default_secret_store

    saved = default_secret_store(data_home(environ())).get_all()
    if name not in saved:
        fail(f"no saved secret {name!r} holds the model's key: save it with `mcpyard secrets set {name}`")
    return saved[name]


@with_globals
def chat(
    opts: Globals,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="The model's OpenAI-compatible endpoint, such as http://127.0.0.1:11434/v1."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="The model's name there.", show_default=False)] = None,
    api_key_secret: Annotated[
        str | None,
        typer.Option(
            "--api-key-secret", help="The saved secret holding the API key (none: no key).", show_default=False
        ),
    ] = None,
    max_calls: Annotated[int, typer.Option("--max-calls", help="Tool calls one turn may make.")] = DEFAULT_MAX_CALLS,
    mode: Annotated[
        str | None, typer.Option("--mode", help="read-only, plan, ask or auto.", show_default=False)
    ] = None,
) -> None:
    """Chat with a model that uses the configured servers' tools; reads one message a line when piped.

    Exit codes: 0 at the end (of input, or /quit), 1 after the model's endpoint failed (piped), 2 for a
    usage or configuration error. With --json, one JSON object per event on each line.
    """
    from mcpyard.cli._approve import ask_on_stderr
    from mcpyard.cli._chat_face import ChatSession, NoOneToAsk, OneCardAtATime, TerminalApprover
    from mcpyard.cli._elicit import ConsoleElicitor, NoTerminalElicitor, OnePerson, read_secret_on_stderr

    if max_calls < 1:
        fail("--max-calls must be at least 1")
    interactive = sys.stdin.isatty() and not opts.json
    console = opts.console()
    person = OnePerson()
    approver: Any = OneCardAtATime(TerminalApprover(console), person) if interactive else NoOneToAsk()
    elicitor: Any = (
        ConsoleElicitor(console, ask_on_stderr, read_secret_on_stderr, person=person)
        if interactive
        else NoTerminalElicitor(NO_ONE_HERE)
    )

    async def main() -> int:
        import anyio

        code = EXIT_OK  # also when Ctrl-C ends the chat between turns
        # Ctrl-C at the prompt cancels `everything`: the host stops its servers in a hurry, as on any Ctrl-C.
        with anyio.CancelScope() as everything:
            async with open_host(opts, mode=mode, approver=approver, lazy=True, elicitor=elicitor) as host:
                # The model is checked before any server starts: a missing one is a usage error at once.
                chosen = chat_model(
                    host.config.settings.model, base_url=base_url, model=model, key_secret=api_key_secret
                )
                try:
                    await host.start()
                    session = ChatSession(host, chosen, opts, console, max_calls=max_calls, interactive=interactive)
                    session.greet()
                    async with anyio.create_task_group() as tg:
                        if interactive:
                            await tg.start(ctrl_c_cancels, session, everything)
                        code = await session.run()
                        tg.cancel_scope.cancel()
                finally:
                    with anyio.CancelScope(shield=True):
                        await chosen.close()
        return code

    code = run(main)
    raise typer.Exit(code if code in (EXIT_OK, EXIT_TOOL_ERROR) else EXIT_OK)
