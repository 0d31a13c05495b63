"""Settings and lifecycle: initializationOptions, workspace/configuration, folders, shutdown.

`initialize` is answered before the service is loaded: what it carries (the key, the
settings, the folders) is applied to the service before anything else uses it. Registered
with the rest (lsp/dispatch/registry.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from baton.core import redaction
from baton.lsp.dispatch.registry import Feature

if TYPE_CHECKING:
    from baton.core.service.events import DataDirChanged
    from baton.core.service.service import BatonService
    from baton.lsp.server import BatonServer

log = logging.getLogger(__name__)

SECTION = "baton"
API_KEY_OPTION = "anthropicApiKey"


def split_options(options: Any) -> tuple[dict[str, Any], str | None]:
    """(the `baton` settings, the API key) from initializationOptions.

    The keys may sit at the top level or under `baton`; the key never joins the settings.
    """
    if not isinstance(options, Mapping):
        return {}, None
    raw = dict(options)
    key = raw.pop(API_KEY_OPTION, None)
    nested = raw.pop(SECTION, None)
    if isinstance(nested, Mapping):
        nested = dict(nested)
        key = key or nested.pop(API_KEY_OPTION, None)
        raw.update(nested)
    return raw, key if isinstance(key, str) and key else None


def _get(obj: Any, *path: str) -> Any:
    for name in path:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def configure(ls: BatonServer, raw: Any) -> None:
    """Apply settings; each problem goes to the log once, and the set of them is shown."""
    if raw is None:
        return
    said: list[str] = []

    def warn(message: str) -> None:
        said.append(message)
        ls.warn_once(message)

    if isinstance(raw, Mapping):
        ls.service.configure(raw, warn)
    else:
        warn(f"baton settings must be an object, got {type(raw).__name__}")
    # what the data dir does not allow (read-only, no permission), naming the path and
    # cause; logged once, as the start or a change found while running told it
    for problem in ls.service.data_dir_problems():
        message = f"Baton: {problem}"
        said.append(message)
        if message not in ls.settings_problems:
            ls.warn_once(message)
    show_warnings(ls, said)


def show_warnings(ls: BatonServer, said: list[str]) -> None:
    """The settings' problems as one message the client shows (window/showMessage), once per
    distinct set: settings that leave the same problems show nothing again, and settings
    that leave none clear them, so a bad value set again after a fix is shown again."""
    problems = tuple(dict.fromkeys(said))
    if problems and set(problems) != set(ls.settings_problems):
        lines = [p.removeprefix("Baton: ") for p in problems]
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message=redaction.redact("Baton: " + "\n".join(lines)),
            )
        )
    ls.settings_problems = problems


def data_dir_changed(ls: BatonServer, event: DataDirChanged) -> None:
    """A change of the data dir found while the server runs, told as the start tells what
    the data dir does not allow: in the log and in a message the client shows, once (the
    service tells each change once); what it no longer says of the data dir is no longer
    among the problems shown, so a change of settings that finds the same shows nothing."""
    kind = types.MessageType.Info if event.back else types.MessageType.Warning
    message = redaction.redact("Baton: " + "\n".join(event.lines))
    ls.window_log_message(types.LogMessageParams(type=kind, message=message))
    ls.window_show_message(types.ShowMessageParams(type=kind, message=message))
    before = {f"Baton: {problem}" for problem in event.before}
    kept = [problem for problem in ls.settings_problems if problem not in before]
    now = [f"Baton: {problem}" for problem in event.problems]
    ls.settings_problems = tuple(dict.fromkeys([*kept, *now]))


async def pull_configuration(ls: BatonServer) -> None:
    if not _get(ls.client_capabilities, "workspace", "configuration"):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
    except Exception as exc:  # a client that fails this keeps the settings it sent
        log.warning("workspace/configuration failed: %s", exc)
        return
    if values:
        configure(ls, values[0])


def initialize(ls: BatonServer, params: types.InitializeParams) -> None:
    raw, key = split_options(params.initialization_options)
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]

    def apply(service: BatonService) -> None:
        service.set_api_key(key)
        configure(ls, raw)
        service.keep_calibration()
        service.set_workspace_folders(folders)
        service.set_editor_name(params.client_info.name if params.client_info else None)

    ls.with_service(apply)
    ls.load_after_answer()


async def initialized(ls: BatonServer, params: types.InitializedParams) -> None:
    # the tokenizer loads now that `initialize` is answered; counts wait for it
    ls.service.start_loading_tokenizer()
    if _get(
        ls.client_capabilities, "workspace", "did_change_configuration", "dynamic_registration"
    ):
        # in the pull model a client only says "something changed" if asked to
        registration = types.Registration(
            id="baton-configuration", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION
        )
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:
            log.debug("client refused configuration registration: %s", exc)
    await pull_configuration(ls)


async def did_change_configuration(
    ls: BatonServer, params: types.DidChangeConfigurationParams
) -> None:
    settings = params.settings
    if isinstance(settings, Mapping) and isinstance(settings.get(SECTION), Mapping):
        configure(ls, settings[SECTION])
    else:
        await pull_configuration(ls)


def folders_changed(ls: BatonServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    ls.service.set_workspace_folders([folder.uri for folder in ls.workspace.folders.values()])


async def shutdown(ls: BatonServer, params: Any) -> None:
    ls.documents.close()
    await ls.service.close()


FEATURES = (
    Feature(types.INITIALIZE, initialize),
    Feature(types.INITIALIZED, initialized),
    Feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration),
    Feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, folders_changed),
    Feature(types.SHUTDOWN, shutdown),
)
