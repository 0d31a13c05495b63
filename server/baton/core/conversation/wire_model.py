"""The base of every payload that travels on the wire (LSP answers and notifications,
`--json`, transcripts, settings): camelCase there and snake_case in Python, and its one
wire form, with the null policy of `wire_nulls.py`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from baton.core.conversation.wire_nulls import restore_required_nulls


class WireModel(BaseModel):
    """Base for payloads that travel camelCase on the wire and snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def wire(self) -> dict[str, Any]:
        """The one wire form (LSP answers, notifications, `--json`, transcripts): camelCase,
        JSON types, and the null policy: a field that is None is left out, unless the model
        declares it without a default (`summary: str | None`), which is always sent, as null.
        """
        out = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        restore_required_nulls(self, out)
        return out
