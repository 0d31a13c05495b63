"""Seeded stand-ins for what Claude Code sessions hold: prompts, replies, code, tool output."""

from __future__ import annotations

import base64
import random
from typing import Any

WORDS = (
    (
        "the parser reads each record and keeps the order of the events so that nothing is lost "
        "when a session grows long; we check the cache, the token count, the retry loop and the "
        "config loader before touching the handler, then run the tests again and compare the "
        "output with what the fixture expects; the build fails on a missing import in the module "
        "that wraps the database client, which is why the migration never finished"
    )
    .replace(";", "")
    .replace(",", "")
    .split()
)
TOPICS = [
    "the login flow",
    "the CSV export",
    "pagination in the API client",
    "the flaky integration test",
    "the config loader",
    "rate limiting",
    "the release script",
    "the cache invalidation",
]
MODULES = ["api", "client", "config", "export", "auth", "cache", "cli", "models", "utils"]
TOOLS = ["Read"] * 4 + ["Bash"] * 3 + ["Edit"] * 2 + ["Grep", "Glob", "Write"]
ONE_PIXEL_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478"
        "9c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()
# a JPEG's opening and end (SOI, a JFIF APP0, EOI): what a screenshot pasted as a PNG holds
PASTED_JPEG = base64.b64encode(
    bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")
).decode()
ONE_PAGE_PDF = base64.b64encode(
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
).decode()


class Text:
    """Random but reproducible text of the kinds a coding session holds."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.prompt_number = 0

    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high)))

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.words(6, 18).capitalize() + "." for _ in range(sentences))

    def path(self) -> str:
        return f"/home/dev/project/src/{self.rng.choice(MODULES)}/{self.rng.choice(MODULES)}.py"

    def prompt(self) -> str:
        """A typed request; numbered, so that every prompt of a file is distinct."""
        self.prompt_number += 1
        ask = self.rng.choice(["Can you fix", "Please look at", "Let's refactor", "Explain"])
        return (
            f"{ask} {self.rng.choice(TOPICS)} (request {self.prompt_number}): "
            f"{self.words(8, 40)} in {self.path()}"
        )

    def reply(self) -> str:
        return self.paragraph(self.rng.randint(2, 7))

    def code(self, lines: int) -> str:
        out = []
        for n in range(lines):
            name = self.rng.choice(MODULES)
            out.append(f"    {name}_{n} = load_{self.rng.choice(MODULES)}({name!r})")
        return "\n".join(out)

    def tool_call(self, name: str) -> dict[str, Any]:
        if name == "Read":
            return {"file_path": self.path()}
        if name == "Bash":
            return {"command": f"pytest -q tests/test_{self.rng.choice(MODULES)}.py"}
        if name == "Grep":
            return {"pattern": self.rng.choice(WORDS), "path": "src"}
        if name == "Glob":
            return {"pattern": "**/*.py"}
        if name == "Edit":
            return {"file_path": self.path(), "old_string": "x = 1", "new_string": "x = 2"}
        return {"file_path": self.path(), "content": self.code(4)}

    def tool_output(self, name: str, call: dict[str, Any]) -> tuple[str, bool]:
        """What the tool printed, and whether it failed."""
        if name == "Read":
            body = self.code(self.rng.randint(20, 160)).splitlines()
            return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(body, start=1)), False
        if name == "Bash":
            if self.rng.random() < 0.3:
                trace = (
                    "Traceback (most recent call last):\n"
                    f'  File "{self.path()}", line {self.rng.randint(2, 300)}, in run\n'
                    f"ModuleNotFoundError: No module named '{self.rng.choice(MODULES)}_v2'"
                )
                return f"Exit code 1\n{trace}", True
            module = self.rng.choice(MODULES)
            head = "\n".join(
                f"tests/test_{module}.py::test_{n} PASSED" for n in range(self.rng.randint(0, 40))
            )
            return f"{head}\n{self.rng.randint(3, 90)} passed in {self.rng.randint(1, 9)}.2s", False
        if name in ("Grep", "Glob"):
            return "\n".join(self.path() for _ in range(self.rng.randint(1, 6))), False
        return f"The file {call.get('file_path')} has been updated.", False

    def summary(self, prompts: list[str]) -> str:
        """Claude Code's compaction summary: nine sections, the user messages as bullets."""
        quoted = "\n".join(f"   - {p}" for p in prompts) or "   - (none)"
        return (
            "This session is being continued from a previous conversation that ran out of "
            "context. The conversation is summarized below:\nAnalysis:\n"
            f"{self.paragraph(3)}\n\nSummary:\n"
            f"1. Primary Request and Intent:\n   - {self.words(8, 20)}\n"
            f"2. Key Technical Concepts:\n   - {self.words(3, 6)}\n"
            f"3. Files and Code Sections:\n   - {self.path()}\n"
            f"4. Errors and fixes:\n   - {self.words(5, 12)}\n"
            f"5. Problem Solving:\n   {self.paragraph(2)}\n"
            f"6. All user messages:\n{quoted}\n"
            f"7. Pending Tasks:\n   - {self.words(4, 10)}\n"
            f"8. Current Work:\n   {self.paragraph(2)}\n"
            f"9. Optional Next Step:\n   {self.words(6, 14)}"
        )
