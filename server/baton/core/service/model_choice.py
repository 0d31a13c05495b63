"""The model a session talks to: switched (the name checked, recorded, the usage told
against the new budget at once, with a warning), and the picker's list of models with the
session's marked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.core.conversation.records import check_writable
from baton.core.conversation.session import Session
from baton.core.errors import InvalidParams
from baton.core.models.windows import model_name_problem
from baton.core.service.model_catalog import ModelCatalog
from baton.core.service.runtime import Runtimes
from baton.core.usage.budget import Usage
from baton.core.usage.draft import switch_warning

if TYPE_CHECKING:
    from baton.core.service.service import BatonService


class ModelChoice:
    """Front ends call it through `service.set_model` and `service.model_catalog`; a
    switch is told as a change of the service's."""

    def __init__(self, service: BatonService, runtimes: Runtimes) -> None:
        self._service = service
        self._runtimes = runtimes

    async def model_catalog(self, session_id: str | None) -> ModelCatalog:
        """The models a picker offers (`ModelAccess.catalog`), the session's marked."""
        service = self._service
        current = (
            (service.session(session_id).model or service.settings.model) if session_id else None
        )
        return await service.models.catalog(service.settings, current)

    def set_model(self, session_id: str, model: str) -> tuple[Session, Usage, str | None]:
        """Switch the session's model; its usage is re-evaluated against the new budget at
        once (published, so meters and diagnostics follow), with a warning when the
        conversation is now past the auto-compact point or over the limit."""
        runtime = self._runtimes.of(session_id)
        model = model.strip()
        check_writable(model, "model")
        if not model:
            raise InvalidParams("model must not be empty")
        problem = model_name_problem(model)
        if problem:  # acp's picker offers the `models` setting's names as written
            raise InvalidParams(problem)
        if model != runtime.session.model:
            runtime.session.set_meta(model=model)
            usage = self._service.changes.changed(runtime, "model")
        else:
            usage = self._service.usage(session_id)
        return runtime.session, usage, switch_warning(usage)
