"""What a new user reads on the command line (session 13 trial): help placeholders that say what to type
(none for a flag), a retrieve table that shows every memory id and the whole of a Chinese memory on an
80-column terminal, and progress lines when stderr is not a terminal (``nohup memwb eval ...``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from memory_engine.cli import engine_cmds, load_commands
from memory_engine.cli.progress import LineProgress

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "suites" / "tiny_recall.yaml"
NO_WH = ["--set", "tracing.warehouse=false"]


def _command_names() -> list[list[str]]:
    names: list[list[str]] = [[]]

    def walk(cmd: Any, prefix: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            names.append([*prefix, name])
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(load_commands()), [])
    return names


def test_every_help_shows_readable_placeholders_and_none_for_flags():
    app, run = load_commands(), CliRunner().invoke
    names = _command_names()
    assert len(names) > 20
    for name in names:
        out = run(app, [*name, "--help"], env={"COLUMNS": "120"}).output
        assert "Usage:" in out, name
        for raw in ("<bool>", "<str>", "<int>", "<float>", "<path>", "list[", "BOOL"):
            assert raw not in out, (name, raw, out)
    out = run(app, ["retrieve", "--help"], env={"COLUMNS": "120"}).output
    explain = next(line for line in out.splitlines() if "│" in line and "--explain" in line)
    assert "Also show every candidate" in explain and "TEXT" not in explain  # a flag: no value placeholder
    assert any("--set" in line and "KEY=VALUE" in line for line in out.splitlines())
    assert any("--top-k" in line and "INTEGER" in line for line in out.splitlines())
    out = run(app, ["ingest", "--help"], env={"COLUMNS": "120"}).output
    assert any("files..." in line and "PATH..." in line for line in out.splitlines())


def test_retrieve_table_folds_chinese_content_and_keeps_ids_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    monkeypatch.setattr(engine_cmds.console, "width", 80)
    app, run = load_commands(), CliRunner().invoke
    text = "我上个月搬到了杭州西湖区文三路，新地址是文三路478号华星时代广场B座1203室，快递请都寄到这里，周末不在家的话放丰巢快递柜就行"
    r = run(app, ["add", text, "--user", "u1", *NO_WH])
    assert r.exit_code == 0, r.output
    mid = json.loads(r.output.strip().splitlines()[-1])["memory_id"]
    r = run(app, ["retrieve", "我的新地址是哪里？", "--user", "u1", *NO_WH])
    assert r.exit_code == 0, r.output
    rows = [line for line in r.output.splitlines() if line.startswith("│")]
    from rich.cells import cell_len  # display width: a Chinese character is two cells

    assert rows and max(cell_len(line) for line in r.output.splitlines()) <= 80
    assert "…" not in r.output
    assert mid in r.output  # the id, whole: memwb forget needs it
    content = "".join(line.split("│")[-2].strip() for line in rows)
    assert content == text


def test_line_progress_is_sparse_and_ends_with_the_total():
    t = [0.0]
    out = io.StringIO()
    with LineProgress(out, step_share=0.1, min_seconds=5, max_seconds=60, clock=lambda: t[0]) as p:
        task = p.add_task("replaying cases", total=1000)
        for _ in range(1000):
            t[0] += 0.1  # 100 s in all
            p.advance(task)
    lines = out.getvalue().splitlines()
    assert lines[0] == "replaying cases: 0/1000 (0%) 0 s"
    assert lines[-1] == "replaying cases: 1000/1000 (100%) 100 s"
    assert 5 <= len(lines) <= 12, lines


def test_line_progress_prints_after_max_seconds_without_a_step():
    t = [0.0]
    out = io.StringIO()
    p = LineProgress(out, step_share=0.5, min_seconds=5, max_seconds=60, clock=lambda: t[0])
    task = p.add_task("sweep", total=100)
    t[0] = 61.0
    p.advance(task, 1)  # 1 % only, but a minute passed: one line says it is alive
    assert out.getvalue().splitlines()[-1] == "sweep: 1/100 (1%) 61 s"


@pytest.mark.integration
def test_eval_prints_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    r = CliRunner().invoke(load_commands(), ["eval", str(TINY), "--no-store", "-w", str(tmp_path / "ws")])
    assert r.exit_code == 0, r.output
    assert "replaying cases: 0/3 (0%)" in r.stderr
    assert "replaying cases: 3/3 (100%)" in r.stderr
    assert "replaying" not in r.stdout  # the report stays clean for pipes


def test_retrieve_with_no_hits_prints_no_empty_table(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    app, run = load_commands(), CliRunner().invoke
    assert run(app, ["add", "我对花生过敏", "--user", "u1", *NO_WH]).exit_code == 0
    r = run(app, ["retrieve", "anything", "--user", "nobody", *NO_WH])
    assert r.exit_code == 0 and "0 hits" in r.output
    assert "┏" not in r.output and "content" not in r.output


@pytest.mark.integration
def test_sweep_prints_progress_lines_not_carriage_returns_off_a_terminal(tmp_path):
    r = CliRunner().invoke(load_commands(), ["sweep", str(TINY), "-p", "retrieval.floor=0.2,0.3", "--no-store",
                                             "-w", str(tmp_path / "ws")])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "sweep trials: 2/2 (100%)" in r.stderr
    assert "\r" not in r.stderr


def test_help_paragraphs_are_unwrapped_so_summaries_read_as_sentences():
    """`memwb --help` printed each command's summary cut where its docstring's source line ended."""
    root = typer.main.get_command(load_commands())
    cmds: list[Any] = [root]
    while cmds:
        cmd = cmds.pop()
        cmds.extend(getattr(cmd, "commands", {}).values())
        for para in (cmd.help or "").split("\n\n"):
            lines = para.splitlines()
            assert all(line.lstrip().startswith(("- ", "* ")) for line in lines[1:]), (cmd.name, para)
    out = CliRunner().invoke(load_commands(), ["--help"], env={"COLUMNS": "200"}).output
    assert "differs from the built-in default because of --config" in out


def test_every_user_and_tenant_option_has_its_short_form():
    """Session 19 trial: `lifecycle forget` took --user / --tenant but not the -u / -t that add, retrieve and forget
    take. Every command's --user and --tenant option answers to both."""
    app = typer.main.get_command(load_commands())

    def walk(cmd: Any, path: list[str]) -> None:
        for p in getattr(cmd, "params", []):
            opts = set(getattr(p, "opts", ())) | set(getattr(p, "secondary_opts", ()))
            for long, short in (("--user", "-u"), ("--tenant", "-t")):
                if long in opts:
                    assert short in opts, (path, long)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(app, [])
