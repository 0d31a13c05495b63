"""`baton usage FILE` and `baton show FILE`: a session file's context usage and its view."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from baton.cli.common import (
    EXIT_OK,
    Subparsers,
    add_settings_file,
    api_limits,
    data_dir_estimator,
    data_dir_of,
    file_or_example,
    file_settings,
    json_text,
    open_session_file,
    title_line,
    use_model,
    utf8_argument,
)
from baton.core.errors import InvalidParams
from baton.core.one_line import one_line

if TYPE_CHECKING:
    from baton.cli.session_files import LoadedFile
    from baton.core.conversation.session import Session
    from baton.core.settings import Settings
    from baton.core.usage.budget import ModelLimits, Usage
    from baton.core.usage.estimator import Estimator

CLAUDE_CODE = "Claude Code session file"


def cmd_usage(args: argparse.Namespace) -> int:
    from baton.cli.usage_report import plain_text, shows_blocks, usage_report
    from baton.core.models.windows import model_name_problem

    utf8_argument(args.model, "--model")
    settings = file_settings(args.settings)  # a bad file: one line, before anything is read
    path = file_or_example(args.file)
    problem = None if args.model is None else model_name_problem(args.model)
    if problem:
        raise InvalidParams(f"--model: {problem}")
    # a data dir's session: estimated as its server does
    estimator = data_dir_estimator(data_dir_of(path))
    with open_session_file(path, estimator.count_message) as loaded:
        session = loaded.session
        use_model(session, args.model, settings)
        # within the limits a server with the same key counts against
        limits, why_table = api_limits(session.model or settings.model, settings)
        # what the last send offered, counted as the server does
        usage = served_usage(session, settings, estimator, session.sent_tools, limits)
        usage = exact_usage(session, settings, usage, session.sent_tools, limits)
        if args.json:
            print(json_text(usage_json(usage, loaded)))
            return EXIT_OK
        messages = session.view_messages()
        anchor = session.anchor()
        what = "Baton transcript" if loaded.kind == "baton" else CLAUDE_CODE
        report = usage_report(
            title=title_line(session.title),
            source=f"{path} ({what})",
            settings_from=args.settings or "the defaults (--settings FILE for an editor's)",
            messages=messages,
            usage=usage,
            plain_tokens=estimator.count_text(plain_text(messages)),
            imported=loaded.imported,
            anchored_on=f"message {messages[anchor[0]].id}" if anchor else None,
            window_from=window_source(why_table, settings),
            ascii_only=not shows_blocks(getattr(sys.stdout, "encoding", None)),
            estimate_only=estimator.calibrated(
                sum(m.tokens for m in messages),
                estimator.media_in(messages),
            ),
        )
        # the file's text (its title, its model, its ids) as one line each: its escape
        # sequences are shown, not run
        print("\n".join(one_line(line) for line in report.splitlines()))
    return EXIT_OK


def usage_json(usage: Usage, loaded: LoadedFile) -> dict[str, Any]:
    """The `Usage` object --json prints: a Claude Code file's `sessionId` is null (its
    import was a temporary one, under an id made for the run and gone with it), and the
    file's own Claude Code session ids (a file may join several) are named as such."""
    wire = usage.wire()
    if loaded.kind != "baton":
        wire["sessionId"] = None
        wire["claudeCodeSessionIds"] = loaded.imported.session_ids if loaded.imported else []
    return wire


def exact_usage(
    session: Session,
    settings: Settings,
    usage: Usage,
    tools: list[dict[str, Any]] | None,
    limits: ModelLimits | None,
) -> Usage:
    """`usage` re-stated around the API's count of the view (count_tokens, asked once), as
    a server with the exactCounts setting and a key shows it; as it is without either,
    or when the API does not answer (the server's estimate stands then too)."""
    import asyncio
    import os

    from baton.core import environment
    from baton.core.background import Background
    from baton.core.model_api.exact_counts import ExactCounts, fingerprint, with_exact_count
    from baton.core.service.model_access import KEY_ENV, api_timeout
    from baton.core.usage.budget import budget_for

    key = environment.api_key(os.environ.get(KEY_ENV))
    base_url = settings.resolved_base_url()
    if not settings.exact_counts or key is None:
        return usage
    if base_url is not None and not environment.is_http_url(base_url):
        return usage
    model = session.model or settings.model
    counts = ExactCounts(Background())

    async def ask() -> None:
        from baton.core.model_api.client import AnthropicClient

        client = AnthropicClient(key, base_url=base_url, timeout=api_timeout())
        try:
            await counts.count(session, model, tools, client)
        finally:
            await client.aclose()

    asyncio.run(ask())
    tokens = counts.figure(session.session_id, fingerprint(session, model, tools))
    if tokens is None:
        return usage
    return with_exact_count(usage, tokens, budget_for(model, settings, limits)[0])


def window_source(why_table: str | None, settings: Settings) -> str:
    """Whose the window is: the contextWindow setting's, else the Models API's, else the
    model table's and why (`api_limits`)."""
    if settings.context_window:
        return "the contextWindow setting's"
    return f"the model table's; {why_table}" if why_table else "the Models API's"


def served_usage(
    session: Session,
    settings: Settings,
    estimator: Estimator,
    tools: list[dict[str, Any]] | None,
    limits: ModelLimits | None = None,
) -> Usage:
    """The session's usage as a server started on its file computes it, with `tools`
    offered (and the Models API's `limits`, when they are known): a pause the transcript
    keeps counts, as that server shows it."""
    from baton.core.usage.session_usage import compute_usage

    pause = session.auto_pause
    return compute_usage(
        session,
        settings,
        estimator,
        tools_tokens=estimator.count_json(tools) if tools else 0,
        auto_paused=pause is not None,
        api_limits=limits,
        paused_by=pause.by if pause is not None else None,
    )


def cmd_show(args: argparse.Namespace) -> int:
    from baton.cli.message_table import rows, table
    from baton.core.usage.estimator import default_estimator

    path = file_or_example(args.file)
    estimator = default_estimator()
    with open_session_file(path, estimator.count_message) as loaded:
        session = loaded.session
        found = rows(session)
        if args.json:
            kind = "baton" if loaded.kind == "baton" else "claude-code"
            payload = {"title": session.title, "source": str(path), "kind": kind}
            print(json_text({**payload, "messages": found}))
            return EXIT_OK
        what = "Baton transcript" if loaded.kind == "baton" else CLAUDE_CODE
        # the file's text as one line each, its escape sequences shown, not run
        title = title_line(session.title)
        print(one_line(f"{title} ({path}, {what}): {len(found):,} messages in the view"))
        print("\n".join(one_line(line) for line in table(found)))
        print("Ids may be given to `baton compact --up-to/--from/--range` as shown or in full.")
    return EXIT_OK


def add_usage(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "usage", help="context usage of a Claude Code session file or a Baton transcript"
    )
    parser.add_argument("file", nargs="?", help="the file (default: the bundled example)")
    parser.add_argument(
        "--model", help="count against this model's window (an unknown one assumes 200,000)"
    )
    add_settings_file(parser)
    parser.add_argument("--json", action="store_true", help="print the Usage wire object")
    parser.set_defaults(func=cmd_usage)


def add_show(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "show",
        aliases=["messages"],
        help="the messages of a session file's view: index, id, role, kind, tokens, first words",
    )
    parser.add_argument("file", nargs="?", help="the file (default: the bundled example)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.set_defaults(func=cmd_show)
