"""`memwb app` / `memwb demo` argument handling (the full run is covered by test_browser)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands

pytestmark = pytest.mark.unit


def test_help_explains_every_option():
    cli = load_commands()
    out = CliRunner().invoke(cli, ["app", "--help"]).output
    for opt in ("--workspace", "--port", "--address", "--quick-demo", "--no-demo"):
        assert opt in out
    assert "--quick" in CliRunner().invoke(cli, ["demo", "--help"]).output


def test_demo_refuses_a_workspace_with_data(tmp_path):
    (tmp_path / "qdrant").mkdir()
    res = CliRunner().invoke(load_commands(), ["demo", "--workspace", str(tmp_path)])
    assert res.exit_code == 2 and "already holds data" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qdrant"]


def test_workspace_must_be_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    res = CliRunner().invoke(load_commands(), ["app", "--workspace", str(f), "--no-demo"])
    assert res.exit_code == 2 and "not a folder" in res.output
