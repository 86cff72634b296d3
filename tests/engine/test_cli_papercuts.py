"""Papercuts a fresh user hit on the command line (session 11): one ``--workspace`` option on every command
that opens a workspace, ``--set`` examples that fit their command, one file name per error message, one
``--ragas`` default, no design-seed citations in what a user reads."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from memory_engine.cli import load_commands
from memory_engine.cli.options import WORKSPACE_HELP
from memory_engine.config import EngineConfig
from memory_engine.errors import MemoryEngineError

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "suites" / "tiny_recall.yaml"
SEED_CITATION = re.compile(r"\bseeds? ?[-#]?\d{3}\b|\bissue ?#?\d+\b|\bsession \d+\b", re.I)
"""A design-source citation: 'seed 004', 'issue 16', 'session 10' (of the project's own history)."""


def _commands() -> dict[str, Any]:
    """Every leaf command (Typer's click command objects) by its full name ("eval", "lifecycle run", ...)."""
    out: dict[str, Any] = {}

    def walk(cmd: Any, prefix: str) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, f"{prefix} {name}".strip())
        else:
            out[prefix] = cmd

    walk(typer.main.get_command(load_commands()), "")
    return out


def _param(cmd: Any, name: str) -> Any:
    return next((p for p in cmd.params if p.name == name), None)


def test_every_command_that_opens_a_workspace_has_the_one_workspace_option():
    cmds = _commands()
    for name in ("eval", "ci", "sweep"):  # the three that had none
        assert _param(cmds[name], "workspace") is not None, name
    with_config = {n for n, c in cmds.items() if _param(c, "config") is not None}
    missing = sorted(n for n in with_config if _param(cmds[n], "workspace") is None)
    assert missing == []
    shapes = {n: (tuple(p.opts), p.help) for n, c in cmds.items() if (p := _param(c, "workspace")) is not None}
    assert len(shapes) >= 20
    assert set(shapes.values()) == {(("--workspace", "-w"), WORKSPACE_HELP)}, shapes


def test_set_examples_name_a_field_their_command_reads():
    cmds = _commands()
    cfg = EngineConfig()
    examples = {}
    for name, c in cmds.items():
        p = _param(c, "set_") or _param(c, "sets")
        if p is None:
            continue
        m = re.search(r"e\.g\. ([\w.]+)=(\S+?)\.?(?:\s|$)", p.help or "")
        assert m, f"{name}: --set help without an example: {p.help!r}"
        key, value = m.groups()
        cfg.with_overrides({key: value})  # a real key with a valid value (ConfigError otherwise)
        examples[name] = key
    assert examples["reembed"].split(".")[0] in {"storage", "embedding"}
    assert examples["replay-dead-letters"].startswith("write.")
    assert examples["lifecycle erase-user"].startswith("lifecycle.erase")
    # the old copy-paste: lifecycle.archive_after_days belongs to `lifecycle run` only
    assert [n for n, k in examples.items() if k == "lifecycle.archive_after_days"] == ["lifecycle run"]


def test_eval_and_ci_agree_on_the_ragas_default_off():
    cmds = _commands()
    defaults = {n: _param(cmds[n], "ragas").default for n in ("eval", "ci")}
    assert defaults == {"eval": False, "ci": False}


def _help_texts() -> list[tuple[str, str]]:
    out = []
    for name, c in _commands().items():
        out.append((name, c.help or ""))
        out += [(f"{name} {p.name}", getattr(p, "help", None) or "") for p in c.params]
    return out


def _descriptions(model: type, prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for n, f in model.model_fields.items():
        out.append((prefix + n, f.description or ""))
        if hasattr(f.annotation, "model_fields"):
            out += _descriptions(f.annotation, f"{prefix}{n}.")
    return out


def _non_docstring_strings(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docs |= {id(s.value) for s in node.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
    return [(f"{path.relative_to(ROOT)}:{n.lineno}", n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_user_facing_texts_cite_no_design_seeds():
    """CLI help, config descriptions (`memwb config`, the app's config pages), error messages and app
    texts: a user knows neither the seeds nor the issue tracker's sessions; docstrings and comments keep
    the design source."""
    texts = _help_texts() + _descriptions(EngineConfig)
    for base in (ROOT / "memory_engine", ROOT / "app"):
        for p in sorted(base.rglob("*.py")):
            texts += _non_docstring_strings(p)
    assert len(texts) > 2000
    cited = [(where, t[:90]) for where, t in texts if SEED_CITATION.search(t)]
    assert cited == []


@pytest.mark.parametrize("what", ["baseline", "config", "benchmark", "exemplars", "active_embedding"])
def test_an_unreadable_file_is_named_once(tmp_path, what):
    from memory_engine.evaluation.ci import load_baseline
    from memory_engine.evaluation.importers import import_benchmark
    from memory_engine.lifecycle.reembed import load_active_embedding
    from memory_engine.write.categories import load_examples

    bad = tmp_path / "unreadable_file_x"
    bad.mkdir()  # a folder where a file is expected: the OS error's own text names the path too
    calls = {
        "baseline": lambda: load_baseline(bad),
        "config": lambda: EngineConfig.from_toml(bad),
        "benchmark": lambda: import_benchmark("locomo", [bad], tmp_path / "out"),
        "exemplars": lambda: load_examples(bad),
        "active_embedding": lambda: load_active_embedding(bad.parent),
    }
    if what == "active_embedding":
        bad.rmdir()
        bad = tmp_path / "active_embedding.json"
        bad.mkdir()
    with pytest.raises(MemoryEngineError) as got:
        calls[what]()
    msg = str(got.value)
    assert msg.count(bad.name) == 1, msg
    assert "Errno" not in msg and ("directory" in msg.lower() or "denied" in msg.lower()), msg


@pytest.mark.integration
def test_ingest_names_a_missing_file_once(tmp_path):
    missing = tmp_path / "nothere_traces.jsonl"
    r = CliRunner().invoke(load_commands(), ["ingest", str(missing), "-w", str(tmp_path / "ws"), "--no-progress"])
    assert r.exit_code == 2
    line = next(x for x in r.output.splitlines() if "nothere_traces" in x)
    assert line.count("nothere_traces.jsonl") == 1 and "cannot read" in line, line


@pytest.mark.integration
@pytest.mark.slow  # three real replays of a two-case suite and one sweep trial: about 10-30 s on 2 shared cores
def test_eval_ci_and_sweep_write_into_the_given_workspace(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("MEMWB_HOME", str(home))
    app = load_commands()
    run = CliRunner().invoke
    r = run(app, ["eval", str(TINY), "-q", "--workspace", str(tmp_path / "w_eval")])
    assert r.exit_code == 0, r.output
    r = run(app, ["ci", str(TINY), "-q", "-w", str(tmp_path / "w_ci"), "--baseline", str(tmp_path / "b.json"),
                  "--update-baseline"])
    assert r.exit_code == 0, r.output
    r = run(app, ["sweep", str(TINY), "-q", "-w", str(tmp_path / "w_sweep"), "--param", "retrieval.top_k=3,5",
                  "--trials", "1", "--objective", "pass"])
    assert r.exit_code == 0, r.output
    for ws in ("w_eval", "w_ci", "w_sweep"):
        assert (tmp_path / ws / "warehouse.duckdb").is_file(), ws
    assert (tmp_path / "w_sweep" / "sweeps.sqlite3").is_file()
    assert not home.exists()  # nothing went to $MEMWB_HOME
    from memory_engine.observability.warehouse import Warehouse

    wh = Warehouse.open(tmp_path / "w_eval")
    try:
        (stored,) = wh.list_eval_runs()
        assert stored["meta"].get("ragas") is None  # the default is off
    finally:
        wh.close()
