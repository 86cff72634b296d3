"""The replay runner, ragas bridge, warehouse persistence and `memwb eval|ci|import` on the real engine
(in-memory Qdrant edge shards, the bundled e5 model, a real DuckDB file)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_engine.config import EngineConfig
from memory_engine.evaluation.runner import MissKind, run_suites
from memory_engine.evaluation.suite import load_suites

pytestmark = pytest.mark.integration

SUITES = Path(__file__).resolve().parents[1] / "fixtures" / "suites"
RECALL = SUITES / "tiny_recall.yaml"
MUST_PASS = SUITES / "tiny_must_pass.yaml"
SUPERSEDE = SUITES / "tiny_supersede.yaml"
LME = Path(__file__).resolve().parents[3] / "shared" / "data" / "longmemeval" / "longmemeval_oracle_1q_sample.json"


@pytest.fixture(scope="module")
def run():  # noqa: ANN201
    return run_suites(load_suites([RECALL, MUST_PASS, SUPERSEDE]), EngineConfig())


@pytest.fixture()
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    from memory_engine.cli import load_commands

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    app = load_commands()
    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args])


def by_key(run):  # noqa: ANN001, ANN201
    return {q.key: q for q in run.queries}


def test_labels_map_to_real_ids_and_metrics(run) -> None:  # noqa: ANN001
    q = by_key(run)["tiny-recall/ident-passport/q_passport"]
    assert q.passed and q.relevant_ranks == {"m_passport": 1}
    assert (q.hit, q.recall, q.rr, q.ndcg) == (1.0, 1.0, 1.0, 1.0)
    assert q.retrieved[0].labels == ("m_passport",)
    assert q.latency_ms > 0
    case = next(c for c in run.cases if c.case_id == "ident-passport")
    ids = {w.label: w.memory_id for w in case.writes}
    assert q.retrieved[0].memory_id == ids["m_passport"]


def test_never_stored_miss_counts_against_recall(run) -> None:  # noqa: ANN001
    q = by_key(run)["tiny-recall/allergy-zh/q_allergy"]
    assert q.relevant_ranks["m_allergy"] is not None and q.relevant_ranks["m_thanks"] is None
    assert q.recall == 0.5 and not q.passed
    (miss,) = q.misses
    assert miss.label == "m_thanks" and miss.kind is MissKind.NEVER_STORED
    assert miss.detail.startswith("never stored: write rejected (")


def test_filtered_miss_names_the_superseding_label(run) -> None:  # noqa: ANN001
    q = by_key(run)["tiny-supersede/colour-correction/q_colour"]
    (miss,) = q.misses
    assert (miss.kind, miss.detail) == (MissKind.FILTERED, "filtered: superseded by m_green")
    case = next(c for c in run.cases if c.case_id == "colour-correction")
    green = next(w for w in case.writes if w.label == "m_green")
    assert green.supersession == (("m_blue", "right"),)


def test_must_pass_case_fails_and_write_expectation_holds(run) -> None:  # noqa: ANN001
    case = next(c for c in run.cases if c.case_id == "mp-chitchat")
    assert case.must_pass and not case.passed
    assert next(w for w in case.writes if w.label == "m_ok").expectation_ok is True


def test_below_floor_miss_with_explain() -> None:
    cfg = EngineConfig().with_overrides({"retrieval.floor": 0.99})
    r = run_suites(load_suites([RECALL]), cfg)
    q = by_key(r)["tiny-recall/allergy-zh/q_allergy"]
    floor = next(m for m in q.misses if m.label == "m_allergy")
    assert floor.kind is MissKind.BELOW_FLOOR
    assert floor.relevance is not None and floor.relevance < 0.99
    # the floor's gate (no candidate reached 0.99) with the value it read, the threshold and the margin
    m = re.match(r"below the floor gate: gate relevance (\d\.\d{3}) < retrieval\.floor 0\.990 \(margin (-\d\.\d{3})\)",
                 floor.detail)
    assert m, floor.detail
    assert float(m.group(2)) == pytest.approx(float(m.group(1)) - 0.99, abs=1e-3)
    assert "vector #" in floor.detail


def test_ragas_non_llm_metrics(run, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import sys

    from memory_engine.evaluation.ragas_bridge import ENV_BASE_URL, evaluate_queries

    monkeypatch.delenv(ENV_BASE_URL, raising=False)
    r = evaluate_queries(run.queries)
    assert "ragas.testset" not in sys.modules
    assert r.n_samples == 4  # passport, dentist, allergy, colour; q_city returned nothing
    assert r.excluded == {"no_relevant_labels": 0, "empty_retrieval": 1}
    pq = r.per_query["tiny-recall/allergy-zh/q_allergy"]
    assert pq["id_based_context_recall"] == pytest.approx(0.5)  # one of two reference ids retrieved
    assert r.per_query["tiny-recall/ident-passport/q_passport"]["id_based_context_precision"] == pytest.approx(1.0)
    assert r.llm_skipped is not None and ENV_BASE_URL in r.llm_skipped


def test_cli_eval_stores_run_and_writes_reports(cli, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "out"
    res = cli("eval", RECALL, "--format", "json", "--out", out, "--quiet", "--no-ragas")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["summary"]["overall"]["n_queries"] == 3
    assert {p.name for p in out.iterdir()} == {"report.json", "report.md", "report.html", "junit.xml"}
    from memory_engine.observability.warehouse import Warehouse

    wh = Warehouse.open(tmp_path / "ws")  # the instance the CLI wrote through (one per file and process)
    runs = wh.list_eval_runs()
    assert [r["run_id"] for r in runs] == [doc["run_id"]]
    assert runs[0]["config_hash"] == doc["config_hash"] and runs[0]["suite"] == "tiny-recall"
    rows = wh.eval_queries(doc["run_id"])
    assert len(rows) == 3 and rows[0]["case_id"].startswith("tiny-recall/")


def test_cli_bad_input_exits_2_without_running(cli, tmp_path: Path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.yaml"
    bad.write_text(RECALL.read_text(encoding="utf-8").replace("relevant: [m_passport]", "relevant: [m_pasport]"))
    res = cli("eval", bad, "--quiet", "--no-store")
    assert res.exit_code == 2
    assert "label 'm_pasport' is not defined by any event of the case" in res.output
    assert "case ident-passport: cases[0].queries[0].expect.relevant" in res.output
    res = cli("eval", RECALL, "--set", "retrieval.flor=0.4", "--quiet", "--no-store")
    assert res.exit_code == 2 and "unknown config key 'retrieval.flor'" in res.output
    res = cli("ci", RECALL, "--baseline", tmp_path / "missing.json", "--quiet", "--no-store")
    assert res.exit_code == 2 and "baseline file not found" in res.output


def test_cli_ci_exit_codes(cli, tmp_path: Path) -> None:  # noqa: ANN001
    base = tmp_path / "base" / "baseline.json"
    junit = tmp_path / "junit.xml"
    md = tmp_path / "report.md"
    res = cli("ci", RECALL, "--baseline", base, "--update-baseline", "--quiet", "--no-store")
    assert res.exit_code == 0, res.output
    assert base.exists()
    res = cli("ci", RECALL, "--baseline", base, "--junit", junit, "--markdown", md, "--html", tmp_path / "r.html",
              "--json", tmp_path / "r.json", "--quiet", "--no-store")
    assert res.exit_code == 0, res.output
    root = ET.parse(junit).getroot()
    assert len(root.findall(".//testcase")) == 3 and root.get("failures") == "1"
    assert "No metric changed against the baseline" in md.read_text(encoding="utf-8")  # only changed rows are listed
    # --out writes the four reports eval --out writes, with the gate's verdict in them
    res = cli("ci", RECALL, "--baseline", base, "--out", tmp_path / "ci-out", "--quiet", "--no-store")
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in (tmp_path / "ci-out").iterdir())
    assert names == ["junit.xml", "report.html", "report.json", "report.md"]
    assert json.loads((tmp_path / "ci-out" / "report.json").read_text(encoding="utf-8"))["ci"]["exit_code"] == 0
    # doctored baseline: the cross_session category used to be perfect
    doc = json.loads(base.read_text(encoding="utf-8"))
    doc["groups"]["category:cross_session"]["recall@k"] = 1.0
    doc["queries"]["tiny-recall/allergy-zh/q_allergy"]["recall@k"] = 1.0
    base.write_text(json.dumps(doc), encoding="utf-8")
    res = cli("ci", RECALL, "--baseline", base, "--max-drop", "0.02", "--markdown", md, "--quiet", "--no-store")
    assert res.exit_code == 1
    assert "category:cross_session recall@k dropped 1.000 -> 0.500 (more than 0.02)" in res.output
    assert "**regressed**" in md.read_text(encoding="utf-8")
    # a must-pass failure fails the gate even with a fresh baseline
    res = cli("ci", MUST_PASS, "--baseline", tmp_path / "mp.json", "--update-baseline", "--quiet", "--no-store")
    assert res.exit_code == 1 and "must-pass case failed: tiny-must-pass/mp-chitchat" in res.output


def test_cli_import_longmemeval_and_eval(cli, tmp_path: Path) -> None:  # noqa: ANN001
    if not LME.exists():
        pytest.skip("../shared/data not present")
    res = cli("import", "longmemeval", LME, "--out", tmp_path / "lme")
    assert res.exit_code == 0, res.output
    assert "longmemeval: 1 suite file(s), 1 cases, 24 events, 1 queries" in res.output
    res = cli("import", "nope", LME, "--out", tmp_path / "x")
    assert res.exit_code == 2 and "unknown benchmark 'nope'" in res.output


def test_second_run_reuses_the_shared_embedding_cache(run) -> None:  # noqa: ANN001
    from memory_engine.embedding import make_embedder

    emb = make_embedder(EngineConfig().embedding)
    before = emb.misses
    again = run_suites(load_suites([RECALL, MUST_PASS, SUPERSEDE]), EngineConfig())
    assert emb.misses == before  # every event and query text was embedded by the first run
    assert [q.relevant_ranks for q in again.queries] == [q.relevant_ranks for q in run.queries]


def test_context_tokens_are_equal_between_identical_runs(run) -> None:  # noqa: ANN001
    """Memory ids are random hex and WordPiece splits each differently (13..21 tokens per [mem-<id>] tag):
    the count uses one fixed id, so the same hits give the same context tokens in every run."""
    from memory_engine.evaluation.runner import COUNTED_ID, _block_tokens
    from memory_engine.text import count_tokens

    again = run_suites(load_suites([RECALL, MUST_PASS, SUPERSEDE]), EngineConfig())
    first = {(q.case_id, q.query_id): q.scores()["context_tokens"] for q in run.queries}
    second = {(q.case_id, q.query_id): q.scores()["context_tokens"] for q in again.queries}
    assert first == second and any(v for v in first.values())
    # ids whose own tags tokenise differently still give one count
    a, b = "[mem-0000000000000000] I prefer tea", "[mem-3f9a0c7e12b45d86] I prefer tea"
    assert count_tokens(a) != count_tokens(b)
    assert _block_tokens(a) == _block_tokens(b) == count_tokens(f"[mem-{COUNTED_ID}] I prefer tea")
    assert _block_tokens("") == 0
