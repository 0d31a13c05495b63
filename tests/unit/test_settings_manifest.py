"""The extension's settings manifest (package.json's `contributes.configuration`, generated
from the server's settings) refuses what the server refuses, so VS Code's Settings editor
marks a value the server will warn of and replace with its default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from baton.core.settings_read import parse_settings

ROOT = Path(__file__).resolve().parents[2]
PROPERTIES = json.loads((ROOT / "client-vscode/package.json").read_text(encoding="utf-8"))[
    "contributes"
]["configuration"]["properties"]

REFUSED: list[tuple[str, Any]] = [
    ("model", ""),
    ("model", "   "),
    ("model", "claude-sonnet-4-5\nsecond line"),
    ("model", "claude\u2028x"),
    ("models", ["claude-opus-5", ""]),
    ("models", ["claude\tx"]),
    ("model", "claude-" + "x" * 300),
    ("model", " " + "x" * 201 + " "),
    ("models", ["claude-opus-5", "y" * 201]),
    ("summaryModel", "z" * 201),
    ("summaryModel", ""),
    ("anthropicBaseUrl", "localhost:8080"),
    ("anthropicBaseUrl", "ftp://example.com"),
    ("anthropicBaseUrl", "http://"),
    ("anthropicBaseUrl", "https://:8080/v1"),
    ("dataDir", "/tmp/a\0b"),
    ("thinking", "sometimes"),
    ("thinking", 100),
    ("thinking", 2_000_000),
    ("previewBeforeCompact", "no"),
]
TAKEN: list[tuple[str, Any]] = [
    ("model", "claude-sonnet-4-5"),
    ("model", " claude-opus-4-1 "),
    ("models", ["claude-opus-5", "my-proxy/claude-haiku-4-5"]),
    ("model", "x" * 200),
    ("model", "  " + "x y" * 66 + "xy  "),  # 200 characters once trimmed, as create takes it
    ("summaryModel", None),
    ("summaryModel", "claude-haiku-4-5"),
    ("anthropicBaseUrl", None),
    ("anthropicBaseUrl", "http://localhost:8080"),
    ("anthropicBaseUrl", "HTTPS://proxy.example.com/anthropic"),
    ("anthropicBaseUrl", "http://user@[::1]:8080"),
    ("dataDir", "~/baton data"),
    ("thinking", "adaptive"),
    ("thinking", " Off "),
    ("thinking", 1024),
    ("thinking", "32000"),
    ("previewBeforeCompact", True),
]


def server_warns(key: str, value: Any) -> bool:
    warnings: list[str] = []
    parse_settings({key: value}, warnings.append)
    return bool(warnings)


def manifest_refuses(key: str, value: Any) -> bool:
    return not Draft202012Validator(PROPERTIES[f"baton.{key}"]).is_valid(value)


@pytest.mark.parametrize(("key", "value"), REFUSED)
def test_the_manifest_refuses_a_value_the_server_refuses(key: str, value: Any) -> None:
    """An empty model, a base URL without http(s)://... were marked valid by the Settings
    editor and then warned of by the server, which kept the default."""
    assert server_warns(key, value)
    assert manifest_refuses(key, value)


@pytest.mark.parametrize(("key", "value"), TAKEN)
def test_the_manifest_takes_a_value_the_server_takes(key: str, value: Any) -> None:
    assert not server_warns(key, value)
    assert not manifest_refuses(key, value)
