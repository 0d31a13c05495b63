"""The summary request, custom compact instructions, and the summary message placed in the view."""

from __future__ import annotations

import re
from pathlib import Path

from baton.core.conversation.boundary import DIRECTIONS, Direction
from baton.core.conversation.files import open_read
from baton.core.errors import InvalidParams

SUMMARY_SYSTEM = (
    "You write faithful, detailed summaries of conversations between a user and an AI "
    "coding assistant, so that the work can continue from the summary alone."
)

SECTION_TITLES: tuple[str, ...] = (
    "Primary request and intent",
    "Key technical concepts",
    "Files and code sections",
    "Errors and fixes",
    "Problem solving",
    "All user messages",
    "Pending tasks",
    "Current work",
    "Optional next step",
)
# For `up_to` newer messages follow the summary, so the last two sections look backwards.
UP_TO_TITLES: tuple[str, ...] = (
    *SECTION_TITLES[:7],
    "Work completed",
    "Context for continuing work",
)

CLAUDE_MD = "CLAUDE.md"
BATON_INSTRUCTIONS = Path(".baton") / "instructions.md"
INSTRUCTIONS_HEADING = "## compact instructions"
MAX_INSTRUCTIONS_BYTES = 256 * 1024


def check_direction(direction: str) -> Direction:
    if direction not in DIRECTIONS:
        raise InvalidParams(
            f"unknown compaction direction {direction!r}; expected one of {', '.join(DIRECTIONS)}",
            direction=direction,
        )
    return direction


def section_titles(direction: str) -> tuple[str, ...]:
    """The nine section titles of a summary for this direction."""
    return UP_TO_TITLES if check_direction(direction) == "up_to" else SECTION_TITLES


_SCOPE = {
    "all": (
        "Summarize the whole conversation above. Only your summary and a few of the most "
        "recent messages will remain, so the summary must let the work carry on without "
        "the original messages."
    ),
    "up_to": (
        "Summarize the conversation above. It is the earlier part of a longer conversation: "
        "the newer messages stay verbatim and will follow your summary, so write what a "
        "reader needs before reading them, and do not guess at what comes after."
    ),
    "from": (
        "Summarize only the recent part of the conversation. The earlier messages stay "
        "verbatim ahead of your summary; they are shown for context only, so do not repeat "
        "them, and cover the messages that follow them."
    ),
    "range": (
        "Summarize only a middle span of the conversation. The messages before the span and "
        "the messages after it stay verbatim around your summary; they are shown for context "
        "only. Cover the span itself, so that the conversation still reads continuously."
    ),
}

_SECTION_GUIDE = {
    "Primary request and intent": "every explicit request of the user and what they are after.",
    "Key technical concepts": "the technologies, frameworks, ideas and conventions discussed.",
    "Files and code sections": (
        "each file read, changed or created, why it matters, and the code snippets that "
        "matter (full signatures and the changed lines)."
    ),
    "Errors and fixes": (
        "each error met and how it was fixed, and every correction or complaint from the user."
    ),
    "Problem solving": "problems solved and troubleshooting still under way.",
    "All user messages": (
        "every message the user wrote that is not a tool result, in order, as close to "
        "verbatim as you can; these show how the user's intent changed."
    ),
    "Pending tasks": "tasks the user asked for that are not done yet.",
    "Current work": (
        "exactly what was being worked on just before this summary, with file names and "
        "code snippets."
    ),
    "Optional next step": (
        "the next step, only if it follows directly from the latest request; quote the "
        "latest request verbatim so the task is not misread. Leave it out when the work "
        "was finished."
    ),
    "Work completed": "what the summarized part achieved by its end.",
    "Context for continuing work": (
        "what a reader needs in order to understand the newer messages that follow "
        "(state, decisions, open questions); quote the last request verbatim."
    ),
}


def summary_prompt(direction: str, instructions: str | None) -> str:
    """The request that asks a model for a summary of the given direction."""
    titles = section_titles(direction)
    sections = "\n".join(
        f"{number}. {title}: {_SECTION_GUIDE[title]}"
        for number, title in enumerate(titles, start=1)
    )
    skeleton = "\n".join(f"## {n}. {t}\n..." for n, t in enumerate(titles, start=1))
    parts = [
        "You are writing a detailed summary of a conversation between a user and an AI "
        "coding assistant, so that the conversation can continue from the summary.",
        "Answer with text only. Do not call any tool: no tool is available for this request "
        "and any tool call would make it fail.",
        _SCOPE[check_direction(direction)],
        "First, inside <analysis> tags, draft your notes by going through the messages in "
        "chronological order. For each part note the user's explicit requests and intent, "
        "the approach taken, decisions made, technical concepts, file names, code snippets, "
        "function signatures and edits, errors and their fixes, and any feedback from the "
        "user, above all where they asked for something to be done differently. Then check "
        "the draft for accuracy and for anything left out.",
        "Then write the summary inside <summary> tags, with these nine sections:\n" + sections,
        "Use this layout:\n<analysis>\n...\n</analysis>\n<summary>\n" + skeleton + "\n</summary>",
    ]
    if instructions and instructions.strip():
        parts.append("## Additional instructions\n" + instructions.strip())
    return "\n\n".join(parts)


_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.DOTALL | re.IGNORECASE)
_OPEN_SUMMARY = re.compile(r"<summary>", re.IGNORECASE)
_CLOSE_SUMMARY = re.compile(r"</summary>", re.IGNORECASE)


SUMMARY_REMINDER = (
    "Your previous answer had no <summary> section, so it could not be used. Answer again "
    "with the summary itself inside <summary> and </summary> tags, in the layout above. "
    "Summarize what the conversation holds, however little; do not refuse or comment."
)


def summary_section(model_text: str) -> str | None:
    """The `<summary>` body of a model's answer; None when it has no `<summary>` section
    (or an empty one): then the answer is not a summary, whatever else it says."""
    if _summary_opening(model_text) is None:
        return None
    return extract_summary(model_text) or None


def extract_summary(model_text: str) -> str:
    """The `<summary>` body of a text, without its analysis draft; a text without the tag
    (an earlier summary in another layout) is kept whole.

    The body runs to the last closing tag, and only an analysis draft before it is taken
    out: the summary quotes the user's messages verbatim, and one that mentions the tags
    ("take what is between <summary> and </summary>") must not end it there, or a later
    compaction reads back only its head (and none of the prompts it quoted)."""
    opening = _summary_opening(model_text)
    if opening is None:
        # No summary tag: drop an unclosed analysis opening tag but keep what follows it.
        text = _ANALYSIS.sub("", model_text)
        return re.sub(r"</?analysis>", "", text, flags=re.IGNORECASE).strip()
    body = model_text[opening:]
    closings = [match.start() for match in _CLOSE_SUMMARY.finditer(body)]
    if closings:
        body = body[: closings[-1]]
    return body.strip()


def _summary_opening(text: str) -> int | None:
    """Where the body after the first `<summary>` tag outside an analysis draft starts."""
    at = 0
    while True:
        opening = _OPEN_SUMMARY.search(text, at)
        draft = _ANALYSIS.search(text, at)
        if draft is not None and (opening is None or draft.start() < opening.start()):
            at = draft.end()  # a tag the draft mentions is not the summary's
            continue
        return None if opening is None else opening.end()


_INTRO = {
    "all": "This session continues from an earlier part of the conversation that was "
    "summarized to free context. The summary below stands for it.",
    "up_to": "This session continues from an earlier part of the conversation that was "
    "summarized to free context. The summary below stands for it; the newer messages "
    "after it are verbatim.",
    "from": "The messages above are verbatim. The later part of the conversation that "
    "followed them was summarized to free context; the summary below stands for it.",
    "range": "A middle part of this conversation was summarized to free context. The "
    "messages before and after this summary are verbatim; the summary below stands for "
    "the part between them.",
}


def summary_message_text(
    summary: str, *, transcript_path: str | None, auto: bool, direction: str
) -> str:
    """The text of the summary message that takes the summarized messages' place."""
    parts = [_INTRO[check_direction(direction)], "<summary>\n" + summary.strip() + "\n</summary>"]
    if transcript_path:
        parts.append(
            "The full, unsummarized history is in the transcript file "
            f"{transcript_path} (one JSON record per line). Read it when you need an exact "
            "detail the summary leaves out, such as a code snippet or an error message."
        )
    if auto:
        parts.append(
            "Carry on with the last task you were working on, right where it stopped. Do not "
            "recap the summary, do not acknowledge it, and do not ask the user anything "
            "further before continuing."
        )
    return "\n\n".join(parts)


MAX_SYSTEM_INSTRUCTIONS_CHARS = 20_000  # of each file, in the default system prompt


def instruction_files(workspace_folders: list[Path]) -> list[Path]:
    """Project instruction files that exist in the workspace folders, in folder order."""
    found: list[Path] = []
    for folder in workspace_folders:
        for relative in (Path(CLAUDE_MD), BATON_INSTRUCTIONS):
            candidate = folder / relative
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
    return found


def instructions_block(path: Path) -> str | None:
    """An instructions file as Baton's default system prompt carries it (its heading, then
    its text, bounded), None when it has no text: a compaction does not restore a file the
    session's system prompt carries as it is now (one edited since comes back)."""
    try:
        with open_read(path) as handle:
            raw = handle.read(MAX_SYSTEM_INSTRUCTIONS_CHARS * 4)
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace").strip()[:MAX_SYSTEM_INSTRUCTIONS_CHARS]
    return f"Project instructions from {path}:\n{text}" if text else None


def _read_head(path: Path) -> str | None:
    try:
        with open_read(path) as handle:
            raw = handle.read(MAX_INSTRUCTIONS_BYTES)
    except OSError:
        return None
    return raw.decode("utf-8", errors="replace")


def compact_section(markdown: str) -> str | None:
    """The body of a `## Compact Instructions` heading, up to the next heading of level 1-2
    (headings inside fenced code blocks do not count)."""
    body: list[str] = []
    inside = False
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        heading = not fenced and (line.startswith("## ") or line.startswith("# "))
        if inside and heading:
            break
        if inside:
            body.append(line)
        elif heading and line.strip().lower() == INSTRUCTIONS_HEADING:
            inside = True
    text = "\n".join(body).strip()
    return text or None


def project_instructions(workspace_folders: list[Path]) -> str | None:
    """Compact instructions the project gives: CLAUDE.md's `## Compact Instructions` section
    and the whole `.baton/instructions.md`, from every workspace folder, in that order."""
    found: list[str] = []
    for path in instruction_files(workspace_folders):
        text = _read_head(path)
        if text is None:
            continue
        part = compact_section(text) if path.name == CLAUDE_MD else text.strip()
        if part and part not in found:
            found.append(part)
    return "\n\n".join(found) or None


def merge_instructions(request: str | None, settings_text: str, project: str | None) -> str | None:
    """The request's own instructions, then the setting's, then the project's."""
    parts = [p.strip() for p in (request, settings_text, project) if p and p.strip()]
    return "\n\n".join(parts) or None
