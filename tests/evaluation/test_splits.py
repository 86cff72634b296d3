"""Dev/test splits of the project's suites: by file, by tag, seeded stratified; recorded with runs;
``memwb ci --split test`` gates on the held-out part against the same queries of the baseline."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_engine.errors import ConfigError
from memory_engine.evaluation.splits import DEV, TEST, SplitMethod, SplitSpec, load_split, make_split
from memory_engine.evaluation.suite import load_suites

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "eval_sets"
FIX = ROOT / "tests" / "sweep" / "fixtures"


@pytest.fixture(scope="module")
def suites():
    return load_suites([SUITES])


def test_stratified_split_is_seeded_stratified_and_covers_every_case(suites):
    spec = SplitSpec(SplitMethod.STRATIFIED, test_share=0.3, seed=7)
    a, b = make_split(suites, spec), make_split(suites, spec)
    assert a.membership == b.membership  # same seed, same split
    other = make_split(suites, SplitSpec(SplitMethod.STRATIFIED, test_share=0.3, seed=8))
    assert other.membership != a.membership
    n = sum(len(s.cases) for s in suites)
    assert len(a.membership) == n
    assert a.counts()["test"]["cases"] == round(0.3 * n)
    # per stratum the test count is floor or ceil of its share
    strata: dict[str, Counter] = {}
    for s in suites:
        for c in s.cases:
            strata.setdefault(f"{c.category}/{c.lang}", Counter())[a.membership[f"{s.name}/{c.id}"]] += 1
    for cnt in strata.values():
        total = cnt[DEV] + cnt[TEST]
        assert int(0.3 * total) <= cnt[TEST] <= int(0.3 * total) + 1
    dev_keys = {f"{s.name}/{c.id}" for s in a.dev for c in s.cases}
    test_keys = {f"{s.name}/{c.id}" for s in a.test for c in s.cases}
    assert not dev_keys & test_keys and len(dev_keys | test_keys) == n


def test_file_and_tag_splits(suites):
    _, sp = load_split([FIX / "overfit_dev.yaml"], test_paths=[FIX / "overfit_test_abstain.yaml"])
    assert sp is not None and sp.spec.method == SplitMethod.FILE
    assert {s.name for s in sp.dev} == {"overfit-dev"} and {s.name for s in sp.test} == {"overfit-test-abstain"}
    # a test file named among the suite paths is not loaded twice
    _, sp2 = load_split([FIX / "overfit_dev.yaml", FIX / "overfit_test_abstain.yaml"],
                        test_paths=[FIX / "overfit_test_abstain.yaml"])
    assert sp2.membership == sp.membership
    tag = make_split(suites, SplitSpec(SplitMethod.TAG, test_tag="must-pass"))
    tagged = {f"{s.name}/{c.id}" for s in suites for c in s.cases if "must-pass" in c.tags}
    assert {k for k, v in tag.membership.items() if v == TEST} == tagged
    with pytest.raises(ConfigError, match="test split is empty"):
        make_split(suites, SplitSpec(SplitMethod.TAG, test_tag="no-such-tag"))
    with pytest.raises(ConfigError, match="--test"):
        SplitSpec(SplitMethod.FILE)
    with pytest.raises(ConfigError, match="test-share"):
        SplitSpec(SplitMethod.STRATIFIED, test_share=1.0)


def test_eval_records_split_and_ci_gates_on_test(tmp_path, monkeypatch):
    from memory_engine.cli import load_commands

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    app, runner = load_commands(), CliRunner()
    dev, test = str(FIX / "overfit_dev.yaml"), str(FIX / "overfit_test_paraphrase.yaml")
    res = runner.invoke(app, ["eval", dev, "--test", test, "--no-ragas", "--format", "json", "-q",
                              "--set", "retrieval.floor=0.0"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout[res.stdout.index("{"):])
    split = doc["extras"]["split"]
    assert split["spec"]["method"] == "file" and split["counts"]["test"] == {"cases": 3, "queries": 3}
    assert set(doc["summary"]["by_split"]) == {"dev", "test"}
    assert set(doc["quality_by_split"]) == {"dev", "test"}  # stale / context / abstention per part
    # stored with the run: the Golden eval page reads split membership per query
    from memory_engine.observability.warehouse import Warehouse

    with Warehouse.open(str(tmp_path / "ws")) as wh:
        run_id = wh.list_eval_runs(limit=1)[0]["run_id"]
        parts = Counter(r["details"]["split"] for r in wh.eval_queries(run_id))
    assert parts == {"dev": 3, "test": 3}
    # baseline of both parts at floor 0.0 (every paraphrase found) ...
    bl = tmp_path / "baseline.json"
    res = runner.invoke(app, ["ci", dev, "--test", test, "--baseline", str(bl), "--update-baseline", "--no-store",
                              "-q", "--set", "retrieval.floor=0.0"])
    assert res.exit_code == 0, res.output
    # ... a high floor loses the test paraphrases: the test-only gate fails against the same test queries
    res = runner.invoke(app, ["ci", dev, "--test", test, "--split", "test", "--baseline", str(bl), "--no-store", "-q",
                              "--set", "retrieval.floor=0.45"])
    assert res.exit_code == 1, res.output
    assert "all recall@k dropped 1.000 -> " in res.output
    assert "split:test" in res.output and "split:dev" not in res.output
    res = runner.invoke(app, ["eval", dev, "--split", "test", "--no-store", "-q"])
    assert res.exit_code == 2 and "needs a split" in res.output
