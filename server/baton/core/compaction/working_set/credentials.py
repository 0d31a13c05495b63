"""What a restored file must never carry: text that looks like a private key or a token.

File names are the first line of defence (`restore.exclude`, matched case-insensitively);
this is the second: a file whose text holds a credential is left out of the restore even
when its name gave nothing away. Only the kind of credential is ever reported, never the
matched text.
"""

from __future__ import annotations

import re

# (what it is, its shape). Shapes are the documented formats of each issuer, anchored so
# that ordinary identifiers do not match.
_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    (
        "a private key",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ),
    ("a PuTTY private key", re.compile(r"^PuTTY-User-Key-File-\d+:", re.MULTILINE)),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    (
        "an AWS secret key",
        re.compile(r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}\b"),
    ),
    ("a GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("a GitHub token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}\b")),
    (
        "a Slack webhook",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/\w+"),
    ),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a Stripe key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}\b")),
    ("an npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("an npm token", re.compile(r"_authToken\s*=\s*\S{8,}")),
    ("a PyPI token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}")),
]


def credential_in(text: str) -> str | None:
    """What kind of credential `text` seems to hold ("a private key", ...), or None."""
    for kind, shape in _SHAPES:
        if shape.search(text):
            return kind
    return None
