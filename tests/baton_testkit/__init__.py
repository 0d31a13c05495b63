"""Baton's test kit: the fake Anthropic Messages API (with its compaction and thinking) and
the seeded Claude Code transcripts, shared by the tests, bench/, scripts/ and the VS Code
protocol test. Installed with the package (`pip install -e '.[dev]'`); never used by it."""
