"""The model table: known families' windows and output caps; what the Models API reports."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

LONG_WINDOW = 1_000_000  # what a model id naming the 1M-token variant gets


@dataclass(frozen=True)
class ModelSpec:
    context_window: int
    max_output: int


# Prefixes of current model ids; the longest matching prefix wins, so dated ids such as
# "claude-sonnet-4-5-20250929" find their family.
MODELS: dict[str, ModelSpec] = {
    "claude-fable-5": ModelSpec(1_000_000, 128_000),
    "claude-mythos": ModelSpec(1_000_000, 128_000),
    "claude-opus-5": ModelSpec(1_000_000, 128_000),
    "claude-sonnet-5": ModelSpec(1_000_000, 128_000),
    "claude-opus-4-8": ModelSpec(1_000_000, 128_000),
    "claude-opus-4-7": ModelSpec(1_000_000, 128_000),
    "claude-opus-4-6": ModelSpec(1_000_000, 128_000),
    "claude-sonnet-4-6": ModelSpec(1_000_000, 128_000),
    "claude-opus-4-5": ModelSpec(200_000, 64_000),
    "claude-opus-4-1": ModelSpec(200_000, 32_000),
    "claude-opus-4": ModelSpec(200_000, 32_000),
    "claude-sonnet-4-5": ModelSpec(200_000, 64_000),
    "claude-sonnet-4": ModelSpec(200_000, 64_000),
    "claude-haiku-4-5": ModelSpec(200_000, 64_000),
    "claude-3-7-sonnet": ModelSpec(200_000, 64_000),
    "claude-3-5-sonnet": ModelSpec(200_000, 8_192),
    "claude-3-5-haiku": ModelSpec(200_000, 8_192),
    "claude-3-opus": ModelSpec(200_000, 4_096),
    "claude-3-haiku": ModelSpec(200_000, 4_096),
}
LONG_SUFFIXES = ("[1m]", "-1m")


@dataclass(frozen=True)
class ModelLimits:
    """What the Models API says about a model (either figure may be missing)."""

    max_input_tokens: int | None = None
    max_tokens: int | None = None

    @classmethod
    def from_api(cls, info: object) -> ModelLimits:
        """From an SDK `ModelInfo` or its JSON; anything not a positive int is dropped."""

        def pick(name: str) -> int | None:
            value = info.get(name) if isinstance(info, Mapping) else getattr(info, name, None)
            ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
            return value if ok else None

        return cls(pick("max_input_tokens"), pick("max_tokens"))


def model_name_problem(model: str) -> str | None:
    """Why `model` names no model, or None. A name is one line without control characters:
    it is written into the session document's header line, which must stay one line. Its
    length is counted trimmed, as baton/session/create and setModel count it."""
    if not model.strip():
        return "a model is named, not empty"
    if any(ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029" for c in model):
        return "a model name is one line without control characters"
    if len(model.strip()) > MODEL_NAME_MAX:
        return f"a model name is at most {MODEL_NAME_MAX} characters"
    return None


MODEL_NAME_MAX = 200
# the second look-ahead: a non-blank character MODEL_NAME_MAX or more after another, so that
# the name is longer once trimmed
MODEL_NAME_PATTERN = (
    r"^(?!\s*$)(?!\s*\S.{" + str(MODEL_NAME_MAX - 1) + r",}\S)"
    r"[^\u0000-\u001f\u007f-\u009f\u2028\u2029]+$"
)
"""What model_name_problem takes, as a JSON schema pattern that Python's re and JavaScript's
RegExp read alike: the settings manifest's, so that VS Code marks a name the server refuses."""
MODEL_NAME_RULE = (
    f"a model name: not empty, one line of at most {MODEL_NAME_MAX} characters without "
    "control characters"
)


def model_name(model: str) -> tuple[str, bool]:
    """`model` as the tables spell it (lower case, from "claude-" on, without a 1M-token
    suffix), and whether it named the 1M-token variant."""
    name = model.strip().lower()
    long = False
    for suffix in LONG_SUFFIXES:
        if name.endswith(suffix):
            name, long = name[: -len(suffix)], True
    start = name.find("claude-")
    return (name[start:] if start >= 0 else name), long


def longest_prefix(name: str, keys: Iterable[str], separators: str = "-@:") -> str | None:
    """The longest of `keys` that `name` starts with, followed by nothing or a separator
    (so dated ids such as "claude-sonnet-4-5-20250929" find theirs)."""
    best: str | None = None
    for prefix in keys:
        rest = name[len(prefix) :]
        fits = name.startswith(prefix) and (not rest or rest[0] in separators)
        if fits and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def lookup_model(model: str) -> tuple[ModelSpec | None, bool]:
    """(the table's entry for `model` or None, whether it names the 1M-token variant).

    Accepts provider spellings too ("us.anthropic.claude-...-v1:0", "claude-...@date").
    """
    name, long = model_name(model)
    best = longest_prefix(name, MODELS)
    return (MODELS[best] if best else None), long
