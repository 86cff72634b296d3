"""`memwb config/add/retrieve/forget` through Typer's runner on a real workspace."""

import json

import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands

pytestmark = pytest.mark.integration


@pytest.mark.slow  # measured 5-15 s on 2 shared cores; still runs in make test
def test_add_retrieve_forget_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    app = load_commands()
    run = CliRunner().invoke
    common = ["--set", "tracing.warehouse=false"]
    r = run(app, ["add", "I prefer aisle seats on long flights", "--user", "u1", *common])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["outcome"] == "stored" and out["memory_type"] == "semantic"
    r = run(app, ["retrieve", "which seats on flights", "--user", "u1", "--explain", *common])
    assert r.exit_code == 0 and out["memory_id"] in r.output and "1 hits" in r.output
    r = run(app, ["retrieve", "which seats on flights", "--user", "u2", *common])
    assert "0 hits" in r.output  # another owner sees nothing
    assert run(app, ["forget", out["memory_id"], "--user", "u2", *common]).exit_code == 1
    assert run(app, ["forget", out["memory_id"], "--user", "u1", *common]).exit_code == 0


def test_config_lists_keys_and_rejects_unknown():
    app = load_commands()
    r = CliRunner().invoke(app, ["config", "--grep", "tau_days"])
    assert r.exit_code == 0 and "retrieval.tau_days" in r.output and "7.0" in r.output
    r = CliRunner().invoke(app, ["config", "--set", "retrieval.flor=1"])
    assert r.exit_code == 2 and "unknown config key 'retrieval.flor'" in r.output
    r = CliRunner().invoke(app, ["config", "--toml", "--set", "retrieval.floor=0.3"])
    assert r.exit_code == 0 and "floor = 0.3" in r.output
