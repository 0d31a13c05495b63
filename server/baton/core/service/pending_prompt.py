"""A prompt being written, before it is sent: its usage as it would be once sent, against
the budget of the session's model, and what Send would do (`usage/draft.py`); a large one
counted in a worker thread first. Writing one holds off the session's idle compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.core.conversation.turn_framing import ends_in_user_turn
from baton.core.service import heavy
from baton.core.usage.budget import budget_for
from baton.core.usage.draft import Draft, DraftUsage, with_draft

if TYPE_CHECKING:
    from baton.core.service.service import BatonService


class PendingPrompt:
    """Front ends call it through `service.draft_usage`; nothing is written."""

    def __init__(self, service: BatonService) -> None:
        self._service = service

    async def usage(self, session_id: str, draft: Draft) -> DraftUsage:
        """The usage as it would be once `draft` is sent, and what Send would do. A large
        draft is counted in a worker thread (`heavy.counted_draft`)."""
        service = self._service
        service.session(session_id)  # an unknown id fails before any counting
        counted = await heavy.counted_draft(draft, service.estimator)
        model = service.session(session_id).model or service.settings.model
        limits = service.models.limits(model, service.settings, service.changes.limits_arrived)
        budget = budget_for(model, service.settings, limits)[0]
        service.idle.timers.draft(session_id, bool(draft.text.strip() or draft.attachments))
        joins = ends_in_user_turn(service.session(session_id).view_messages())
        usage = service.usage(session_id)
        return with_draft(usage, draft, service.estimator, budget, counted, joins)
