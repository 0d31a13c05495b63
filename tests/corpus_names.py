"""The real Claude Code transcripts the corpus tier reads (in BATON_CORPUS), by file name."""

from __future__ import annotations

CORPUS_FILES = [
    "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "iansherr__claude-code-log__37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl",
    "iansherr__claude-code-log__9e953218-585f-4692-89df-9e0747a31c68.jsonl",
    "iansherr__claude-code-log__cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
    "iansherr__claude-code-log__ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "kesslerio__attio-mcp-server__chat.json",
]
CHAT_JSON = CORPUS_FILES[-1]  # the JSON-array variant
