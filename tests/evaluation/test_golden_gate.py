"""The repo's own golden suites gate every change (seed 001: golden tests MUST run in CI)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_golden_suites_pass_the_ci_gate_against_the_committed_baseline(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    out = tmp_path / "report"
    r = CliRunner().invoke(load_commands(), [
        "ci", str(ROOT / "eval_sets"), "--baseline", str(ROOT / "eval_sets" / "baseline.json"), "--no-ragas",
        "--junit", str(out / "junit.xml"), "--markdown", str(out / "report.md"), "--json", str(out / "report.json"),
    ])
    assert r.exit_code == 0, r.output[-3000:]
    report = json.loads((out / "report.json").read_text())
    overall = report["summary"]["overall"] if "summary" in report else report["run"]["summary"]["overall"]
    assert overall["leaks"] == 0
    # irrelevant labels gate outside documented limitations (tag known-gap, reported only)
    gated = [q for c in report["cases"] for q in c["queries"] if "known-gap" not in q["tags"]]
    assert sum(len(q["irrelevant_violations"]) for q in gated) == 0
    assert len(gated) < overall["n_queries"]  # the known-gap cases are in the run, not dropped
    cases = ET.parse(out / "junit.xml").getroot().iter("testcase")
    assert sum(1 for _ in cases) == overall["n_queries"] >= 150
    md = (out / "report.md").read_text()
    assert md.startswith("## memwb eval") and "✅ pass" in md and "supersessions right" in md
