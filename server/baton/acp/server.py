"""`baton acp`: the agent on stdio (newline-delimited JSON-RPC), over a service on the same
data dir as `baton serve`. Logs go to stderr; stdout carries the protocol alone."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

from acp.agent.connection import AgentSideConnection
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.stdio import stdio_streams

from acp import Agent
from baton.acp.agent import BatonAgent
from baton.core.service.service import BatonService

log = logging.getLogger(__name__)


async def serve_acp(data_dir: str | None = None) -> None:
    service = BatonService()
    if data_dir:
        service.configure({"dataDir": data_dir})
    agent = BatonAgent(service)
    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    conn = AgentSideConnection(
        cast(Agent, agent),  # the SDK's Protocol: BatonAgent implements what Baton offers
        writer,
        reader,
        listening=False,
        use_unstable_protocol=True,  # session/resume and session/close
        observers=[agent.observe],
    )
    try:
        await conn.listen()
    finally:
        for live in list(agent.live.values()):
            if live.turn is not None:
                live.turn.cancel()
        if agent.outbox is not None:
            await agent.outbox.close()
        await asyncio.shield(conn.close())
        await service.close()


def run(data_dir: str | None = None, log_level: str = "WARNING") -> int:
    logging.getLogger().setLevel(log_level)
    try:
        asyncio.run(serve_acp(data_dir))
    except KeyboardInterrupt:
        return 130
    return 0
