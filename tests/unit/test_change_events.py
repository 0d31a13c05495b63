"""One way down, one way up: each change raises one event carrying the usage computed once;
the LSP layer publishes from that event, registers every method in one place, and calls the
service through its public methods only."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.messages import MessageInput
from baton.core.service.compaction import Compaction
from baton.core.service.data_dir_watch import DataDirWatch
from baton.core.service.drafts import Drafts
from baton.core.service.events import Event, SessionChanged
from baton.core.service.replies import Replies
from baton.core.service.service import BatonService
from baton.core.service.tool_setup import ToolSetup
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.core.workspace.editor_files import EditorFiles
from baton.lsp.server import create_server
from baton.lsp.session_document.publisher import SessionDocuments

LSP = Path(__file__).resolve().parents[2] / "server" / "baton" / "lsp"


class FakeServer:
    """What the session documents read of the language server."""

    position_encoding = "utf-16"

    def __init__(self, service: BatonService) -> None:
        self.service = service
        self.published: list[Any] = []

    def text_document_publish_diagnostics(self, params: Any) -> None:
        self.published.append(params)


@pytest.fixture
def service(tmp_path: Path, estimator: Estimator) -> Iterator[BatonService]:
    baton = BatonService(Settings(data_dir=str(tmp_path)), estimator=estimator)
    yield baton
    baton.store.close()


def test_an_append_raises_one_change_carrying_the_usage_it_answers(
    service: BatonService,
) -> None:
    sid = service.create().session_id
    heard: list[Event] = []
    service.connect(heard.append)
    done = service.append(sid, [MessageInput(role="user", content="hello there")])
    changes = [e for e in heard if isinstance(e, SessionChanged)]
    assert [c.reason for c in changes] == ["append"]
    assert changes[0].usage is done.usage  # computed once: the answer is the event's
    assert changes[0].session is service.session(sid)


def test_the_documents_publish_a_change_without_asking_the_service_again(
    service: BatonService, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FakeServer(service)
    documents = SessionDocuments(server, service)  # type: ignore[arg-type]
    sid = service.create().session_id
    done = service.append(sid, [MessageInput(role="user", content="hello there")])

    def asked(*_: Any, **__: Any) -> Any:
        raise AssertionError("the publisher asked the service about a change it heard")

    for name in ("render_data", "usage", "session"):
        monkeypatch.setattr(service, name, asked)
    documents.publish(sid)
    (published,) = server.published
    assert published.version == documents.version(sid)
    meter = published.diagnostics[0].message
    assert f"{done.usage.used_tokens:,}" in meter


def test_a_pin_changes_the_document_but_tells_no_new_usage(service: BatonService) -> None:
    sid = service.create().session_id
    message_id = service.append(sid, [MessageInput(role="user", content="keep me")]).message_ids[0]
    heard: list[Event] = []
    service.connect(heard.append)
    service.pin(sid, message_id, True)
    (change,) = [e for e in heard if isinstance(e, SessionChanged)]
    assert change.reason == "pin" and not change.tell_usage


# ---- the LSP layer's shape ----------------------------------------------------------------


def modules(*folders: str) -> Iterator[tuple[Path, ast.Module]]:
    for folder in folders:
        for path in sorted((LSP / folder).glob("*.py")) if folder else [LSP / "backend.py"]:
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_nothing_in_the_lsp_layer_sets_an_attribute_of_the_service() -> None:
    found = []
    for path, tree in modules("", "features", "session_document", "dispatch"):
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and _names_service(target.value):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


# The service's public parts a handler may call into (`service.drafts.preview(...)`), each
# held to the same rule: only its public methods, and only called.
PARTS: dict[str, type] = {
    "compaction": Compaction,
    "data_dir": DataDirWatch,
    "drafts": Drafts,
    "editor_files": EditorFiles,
    "replies": Replies,
    "tool_setup": ToolSetup,
}


def _public_methods(cls: type) -> set[str]:
    public = {n for n in dir(cls) if not n.startswith("_")}
    return {n for n in public if callable(getattr(cls, n, None))}


def _called(node: ast.Attribute, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node


def test_handlers_call_only_the_services_public_methods() -> None:
    methods = _public_methods(BatonService)
    found = []
    for path, tree in modules("features", "session_document"):
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _names_service(node.value)):
                continue
            if node.attr in PARTS:
                member = parents.get(node)
                if not (
                    isinstance(member, ast.Attribute)
                    and member.attr in _public_methods(PARTS[node.attr])
                    and _called(member, parents)
                ):
                    found.append(f"{path.name}:{node.lineno} service.{node.attr}")
            elif node.attr not in methods or not _called(node, parents):
                found.append(f"{path.name}:{node.lineno} service.{node.attr}")
    assert found == []


def test_a_part_a_handler_calls_into_is_one_the_service_makes(tmp_path: Path) -> None:
    service = BatonService(Settings(data_dir=str(tmp_path)))
    assert {name: type(getattr(service, name)) for name in PARTS} == PARTS


def test_every_method_is_registered_by_the_registry() -> None:
    found = []
    for path, tree in modules("", "features", "session_document", "dispatch"):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("feature", "command")
                and path.name != "registry.py"
            ):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_the_standard_features_are_registered_with_their_options(tmp_path: Path) -> None:
    from lsprotocol import types

    server = create_server(BatonService(Settings(data_dir=str(tmp_path))))
    features = server.protocol.fm.features
    for method in (
        types.INITIALIZE,
        types.INITIALIZED,
        types.SHUTDOWN,
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.TEXT_DOCUMENT_HOVER,
        "baton/session/append",
    ):
        assert method in features
    options = server.protocol.fm.feature_options
    assert options[types.TEXT_DOCUMENT_CODE_ACTION].code_action_kinds
    assert options[types.TEXT_DOCUMENT_DID_SAVE].include_text is False


def _names_service(node: ast.expr) -> bool:
    """`service`, `x.service` or `x.y.service`."""
    if isinstance(node, ast.Name):
        return node.id == "service"
    return isinstance(node, ast.Attribute) and node.attr == "service"
