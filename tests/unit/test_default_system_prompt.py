"""A session created without a system prompt gets Baton's default: the editor, the
workspace folders, the `systemPrompt` setting, the project's instructions file."""

from __future__ import annotations

from pathlib import Path

from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.turn.system_prompt import default_system_prompt, made_for_other_folders


async def test_the_default_names_the_editor_and_folders_and_is_extended(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("Use tabs.\n")
    service = BatonService(
        Settings(data_dir=str(tmp_path / "data"), system_prompt="Answer in French.")
    )
    try:
        service.set_workspace_folders([folder.as_uri()])
        service.editor_name = "Neovim"
        prompt = service.create("t").system_prompt or ""
        assert prompt.startswith(
            "You are a coding assistant working with the user in Neovim, on the workspace "
            f"folder {folder}."
        )
        assert "Answer in French." in prompt
        assert f"Project instructions from {folder / 'CLAUDE.md'}:\nUse tabs." in prompt
        assert service.create("own", system_prompt="Mine.").system_prompt == "Mine."
        assert service.usage(service.create("c").session_id).breakdown.system > 20
    finally:
        await service.close()


def test_only_the_default_made_for_other_folders_is_made_again() -> None:
    here, there = Path("/work/here"), Path("/work/there")
    made = default_system_prompt("Zed", [here], "Answer in French.")
    assert made_for_other_folders(made, [there])
    assert not made_for_other_folders(made, [here])
    assert made_for_other_folders(default_system_prompt(None, []), [here])
    # a folder whose name another one's starts with is another folder
    assert made_for_other_folders(default_system_prompt(None, [Path("/work/here2")]), [here])
    assert not made_for_other_folders("Mine: work in /work/there.", [here])
    assert not made_for_other_folders(None, [here])
