"""What a fresh user of the CLI meets: `memwb add` gives the speaker, role, session, time and metadata the
engine's add accepts (and refuses bad values with exit 2 before the engine opens); `memwb retrieve --explain`
says for a dropped candidate which floor check it missed with the numbers; the hits table names every route
(hop and intent too). Typer's runner on a real workspace (bundled e5, qdrant-edge shard)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from memory_engine import EngineConfig
from memory_engine.cli import engine_cmds, load_commands
from memory_engine.workspace import open_workspace

pytestmark = pytest.mark.integration
NO_WH = ["--set", "tracing.warehouse=false"]


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    monkeypatch.setattr(engine_cmds.console, "width", 200)  # one table row a line
    app, run = load_commands(), CliRunner().invoke
    return lambda *args: run(app, [*args, *NO_WH])


def _stored(tmp_path, mid: str, user: str):
    with open_workspace(EngineConfig(workspace=str(tmp_path / "ws")).with_overrides(
            {"tracing.warehouse": False})) as ws:  # fmt: skip
        return ws.engine.memory(mid, user_id=user)


@pytest.mark.parametrize(("args", "says"), [
    (["--role", "robot"], "role must be one of ['assistant', 'system', 'tool', 'user']"),
    (["--meta", "channel"], "--meta expects KEY=VALUE, got 'channel'"),
    (["--meta", "=email"], "--meta expects KEY=VALUE"),
    (["--speaker", " "], "--speaker must be a non-empty name"),
    (["--speaker", "Ana", "--meta", "speaker=Bo"], "disagree"),
    (["--time", "2026-03-02T09:00:00"], "--time must carry a UTC offset"),
    (["--time", "last tuesday"], "--time must be an ISO 8601 time with a UTC offset"),
    (["--timezone", "Mars/Olympus"], "unknown timezone 'Mars/Olympus'"),
    (["--timezone", "+25:00"], "timezone offset '+25:00' is out of range"),
    (["--timezone", "+08:75"], "timezone offset '+08:75' is out of range"),
    (["--timezone", "-13:00"], "timezone offset '-13:00' is out of range"),
])
def test_add_refuses_bad_values_with_exit_2_and_stores_nothing(cli, tmp_path, args, says):
    r = cli("add", "I water the ferns on Sundays", "--user", "u1", *args)
    assert r.exit_code == 2 and says in " ".join(r.output.split()), r.output
    assert not (tmp_path / "ws").exists()  # refused before the workspace was opened


def test_add_refuses_empty_text_before_opening_a_workspace(cli, tmp_path):
    r = cli("add", "  ", "--user", "u1")
    assert r.exit_code == 2 and "the text to add is empty" in r.output, r.output
    assert not (tmp_path / "ws").exists()


def test_add_help_names_every_new_option(cli):
    out = CliRunner().invoke(load_commands(), ["add", "--help"], env={"COLUMNS": "160"}).output
    for opt in ("--role", "user|assistant|tool|system", "--speaker", "--meta", "KEY=VALUE", "--time", "--timezone",
                "--permanent"):
        assert opt in out, opt


@pytest.mark.slow  # opens the bundled model twice
def test_add_maps_its_options_onto_the_engines_add(cli, tmp_path):
    r = cli("add", "Let's move the retro to Thursday at 3pm", "--user", "u1", "--role", "assistant",
            "--session", "standup-12", "--speaker", "Ravi", "--meta", "channel=slack", "--meta", "team=infra",
            "--time", "2026-03-02T09:30:00+08:00", "--timezone", "Asia/Shanghai", "--permanent")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    rec = _stored(tmp_path, out["memory_id"], "u1")
    assert rec is not None
    assert (rec.role, rec.session_id, rec.permanent) == ("assistant", "standup-12", True)
    assert rec.source.value == "model_inferred"  # an assistant's word is never the user's fact
    assert {"speaker": "Ravi", "channel": "slack", "team": "infra"}.items() <= rec.metadata.items()
    assert rec.created_at == datetime(2026, 3, 2, 1, 30, tzinfo=UTC).timestamp()


@pytest.mark.slow  # opens the bundled model three times
def test_explain_gives_the_floor_check_and_its_numbers(cli):
    for text in ("My sister Anna lives in Berlin", "Anna works as a nurse at a children's hospital",
                 "I prefer aisle seats on long flights"):
        assert cli("add", text, "--user", "u1").exit_code == 0
    r = cli("retrieve", "what is my favourite board game?", "--user", "u1", "--explain")
    assert r.exit_code == 0 and "0 hits" in r.output
    rows = [line for line in r.output.splitlines() if "floor gate:" in line]
    assert len(rows) == 3, r.output  # every candidate, each with its value, the floor and the margin
    assert all("< retrieval.floor 0.250 (margin -" in line for line in rows)
    r = cli("retrieve", "where does Anna work?", "--user", "u1", "--explain")
    assert r.exit_code == 0 and "nurse" in r.output
    weak = [line for line in r.output.splitlines() if "candidate floor:" in line]
    # at the default retrieval.candidate_floor None the candidate floor is retrieval.floor's value: name that field
    assert weak and all("< retrieval.floor 0.250" in line and "(margin -" in line for line in weak), r.output
    assert "routes" in r.output and "vector #" in r.output


@pytest.mark.slow  # opens the bundled model four times
def test_the_hits_table_names_the_hop_route(cli):
    for i, text in enumerate(("Nadia leads the mobile onboarding revamp",
                              "The mobile onboarding revamp relies on the new identity API",
                              "The identity API launch is on hold until legal approves the consent text")):
        assert cli("add", text, "--user", "u1", "--session", f"s{i}").exit_code == 0
    r = cli("retrieve", "Is Nadia's work going to slip?", "--user", "u1", "--explain")
    assert r.exit_code == 0, r.output
    hits = r.output.split(" hits in ")[0]
    assert "hop" in hits and "consent text" in hits  # the blocker, reached through the hop, says so
    assert "hop #" in r.output.split(" hits in ")[1]  # and the explain table lists the route with its rank


@pytest.mark.slow  # opens the bundled model three times
def test_retrieve_reads_yesterday_against_now_and_timezone(cli):
    r = cli("add", "Had ramen at the new noodle bar on Elm street", "--user", "u1",
            "--time", "2026-03-03T20:00:00+08:00")
    assert r.exit_code == 0, r.output
    mid = json.loads(r.output.strip().splitlines()[-1])["memory_id"]
    ask = ("retrieve", "what did I eat yesterday?", "--user", "u1", "--timezone", "Asia/Shanghai")
    next_day = cli(*ask, "--now", "2026-03-04T09:00:00+08:00")
    assert next_day.exit_code == 0, next_day.output
    row = next(line for line in next_day.output.splitlines() if mid in line)
    assert "│ 1 │" in row and "date" in next_day.output  # the date route found the evening before
    week_on = cli(*ask, "--now", "2026-03-10T09:00:00+08:00")
    assert week_on.exit_code == 0 and "date" not in week_on.output  # 'yesterday' is now another day


@pytest.mark.parametrize(("args", "says"), [
    (["--now", "tomorrow"], "--now must be an ISO 8601 time with a UTC offset, got 'tomorrow'"),
    (["--now", "2026-03-04T09:00:00"], "--now must carry a UTC offset"),
    (["--timezone", "+25:00"], "timezone offset '+25:00' is out of range"),
])
def test_retrieve_refuses_bad_now_and_timezone_with_exit_2(cli, args, says):
    assert cli("add", "I water the ferns on Sundays", "--user", "u1").exit_code == 0
    r = cli("retrieve", "ferns", "--user", "u1", *args)
    assert r.exit_code == 2 and says in " ".join(r.output.split()), r.output
