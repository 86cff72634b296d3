"""A read command given a ``--workspace`` that does not exist says so (exit 2) and creates nothing: on 5c702b8
``memwb retrieve q --user u -w /typo/ws`` built an empty workspace at the typo (folders, a Qdrant shard, a
warehouse) and printed '0 hits'; ``metrics`` printed 'no data', ``timeline`` 'no events' (fresh-user trial)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands


@pytest.mark.parametrize("args", [
    ["retrieve", "where do I live?", "--user", "u"],
    ["metrics"],
    ["timeline", "0123456789abcdef"],
    ["health"],
])
def test_a_read_command_on_a_missing_workspace_fails_and_creates_nothing(tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "typo" / "ws"
    res = CliRunner().invoke(load_commands(), [*args, "--workspace", str(missing)])
    assert res.exit_code == 2, res.output
    assert "no workspace" in res.output and str(missing) in res.output
    assert not (tmp_path / "typo").exists()


def test_a_write_command_still_creates_its_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "new"
    res = CliRunner().invoke(load_commands(), ["add", "I live in Chengdu", "--user", "u", "--workspace", str(ws)])
    assert res.exit_code == 0, res.output
    assert ws.is_dir()
