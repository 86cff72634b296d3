"""`memwb lifecycle run/forget/erase-user`, `consolidate`, `replay-dead-letters` on a real workspace."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands
from memory_engine.config import EngineConfig
from memory_engine.engine import MemoryEngine

pytestmark = pytest.mark.integration


@pytest.mark.slow  # measured 5-15 s on 2 shared cores; still runs in make test
def test_cli_lifecycle_commands(tmp_path, day, monkeypatch):
    ws = tmp_path / "ws"
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    with MemoryEngine(EngineConfig(workspace=str(ws))) as eng:
        old = eng.add("Visited the Louvre museum in Paris", user_id="u1", memory_type="episodic", now=day(0))
        eng.add("I like jasmine tea", user_id="u1", memory_type="semantic", metadata={"topic": "drinks"}, now=day(0))
        keep = eng.add("Went to the dentist at Smile Clinic", user_id="u1", memory_type="episodic", now=day(80))
    app = load_commands()
    runner = CliRunner()
    assert "--dry-run" in runner.invoke(app, ["lifecycle", "run", "--help"]).output

    res = runner.invoke(app, ["lifecycle", "run", "--now", day(91).isoformat(), "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["scanned"] == 3 and rep["counts"] == {"archive": 1, "expire": 1}
    assert {c["memory_id"]: c["action"] for c in rep["changes"]}[old.memory_id] == "archive"

    res = runner.invoke(app, ["lifecycle", "run", "--now", "not-a-time"])
    assert res.exit_code == 2 and "ISO 8601" in res.output

    res = runner.invoke(app, ["consolidate", "--user", "u1", "--now", day(92).isoformat()])
    assert res.exit_code == 0 and "user u1: 0 actions over 1 memories" in res.output

    res = runner.invoke(app, ["lifecycle", "forget", "--user", "u1", "--id", keep.memory_id, "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["deleted"] == [keep.memory_id]
    assert runner.invoke(app, ["lifecycle", "forget", "--user", "u1"]).exit_code == 2

    res = runner.invoke(app, ["lifecycle", "erase-user", "u1", "--warehouse", "keep", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["store"] == 2

    dl = tmp_path / "dl.jsonl"
    dl.write_text(json.dumps({"request": {"request_id": "r1", "text": "Paid invoice INV-77 by card", "user_id": "u2",
                                          "at": day(1).timestamp()}, "error": "StoreError: x", "attempts": 4}) + "\n")
    res = runner.invoke(app, ["replay-dead-letters", str(dl), "--mode", "events"])
    assert res.exit_code == 0 and "replayed 1" in res.output and not dl.exists()
    with MemoryEngine(EngineConfig(workspace=str(ws))) as eng:
        assert [r.content for r in eng.list_memories(user_id="u2")] == ["Paid invoice INV-77 by card"]
        assert eng.list_memories(user_id="u1") == []
