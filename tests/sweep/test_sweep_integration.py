"""Sweeps end to end on the tiny suite: real engines (qdrant-edge shards), the bundled
multilingual-e5-small model, optuna storages on real sqlite files, a real DuckDB warehouse,
worker processes and the real ``memwb`` CLI.

Hand-checked table for ``retrieval.floor x retrieval.top_k`` on ``fixtures/tiny_sweep.yaml``
(2 queries; the unrelated memories score below 0.45 relevance, the relevant ones above):

    floor  top_k  returned                               recall@k  violations
    0.0    1      passport | laptop                      0.75      0
    0.0    3      passport+garden | laptop+phone+recipe  1.0       2   (infeasible under violations==0)
    0.45   1      passport | laptop                      0.75      0
    0.45   3      passport | laptop+phone                1.0       0   <- the unique best
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_engine.config import EngineConfig
from memory_engine.errors import ConfigError
from memory_engine.evaluation.runner import run_suites
from memory_engine.evaluation.suite import load_suites
from memory_engine.evaluation.sweep import (
    SearchMode,
    SweepError,
    SweepEvaluator,
    compute_metrics,
    parse_constraint,
    parse_metric,
    parse_params,
)
from memory_engine.evaluation.sweep_report import build_report, report_figures, trials_frame
from memory_engine.evaluation.sweep_study import (
    BASELINE_TRIAL_NUMBER,
    SweepSpec,
    best_config,
    run_sweep,
)

pytestmark = pytest.mark.integration

SUITE = str(Path(__file__).parent / "fixtures" / "tiny_sweep.yaml")
GRID = ["retrieval.floor=0.0,0.45", "retrieval.top_k=1:3:2"]
EXPECTED = {  # (floor, top_k) -> (recall@k, violations)
    (0.0, 1): (0.75, 0.0),
    (0.0, 3): (1.0, 2.0),
    (0.45, 1): (0.75, 0.0),
    (0.45, 3): (1.0, 0.0),
}


@pytest.fixture(scope="module")
def suites():
    return load_suites([SUITE])


@pytest.fixture
def base(tmp_path):
    return EngineConfig().with_overrides({"workspace": str(tmp_path / "ws")})


def _spec(params=GRID, search=SearchMode.GRID, objective="recall@k", constraints=("violations==0",), seed=0):
    return SweepSpec((SUITE,), parse_params(params), search, (parse_metric(objective),),
                     tuple(parse_constraint(c) for c in constraints), seed)


def _key(params):
    return (params["retrieval.floor"], params["retrieval.top_k"])


def test_grid_yields_expected_trials_best_and_constraint_filtering(suites, base, tmp_path):
    from memory_engine.observability.warehouse import Warehouse

    with Warehouse(tmp_path / "wh.duckdb") as wh:
        run = run_sweep(_spec(), base, suites=suites, warehouse=wh)
        rows = wh.list_sweep_trials(run.study_name)
    study = run.study
    assert run.ran == 4 and run.target == 4 and run.replays == 1  # retrieval-only: one write replay
    trials = study.get_trials(deepcopy=False)
    assert sorted(_key(t.params) for t in trials) == sorted(EXPECTED)
    for t in trials:
        m = t.user_attrs["metrics"]["overall"]
        assert (m["recall@k"], m["violations"]) == EXPECTED[_key(t.params)]
    status = {_key(t.params): t.user_attrs["status"] for t in trials}
    assert status == {(0.0, 1): "complete", (0.0, 3): "infeasible", (0.45, 1): "complete", (0.45, 3): "complete"}
    cfg, ft = best_config(study, base)
    assert _key(ft.params) == (0.45, 3) and ft.values == [1.0]
    assert cfg.retrieval.floor == 0.45 and cfg.retrieval.top_k == 3
    # warehouse: baseline + 4 trials, with params, per-category metrics and duration
    assert sorted(r["trial_number"] for r in rows) == [BASELINE_TRIAL_NUMBER, 0, 1, 2, 3]
    by_state = {r["state"] for r in rows}
    assert by_state == {"baseline", "complete", "infeasible"}
    t0 = next(r for r in rows if r["trial_number"] == 0)
    assert set(t0["metrics"]["by_category"]) == {"exact_identifier", "cross_session"} and t0["duration_s"] > 0
    # report: deltas against the base config (floor 0.45, top_k 5: recall 1.0, no violation)
    rep = build_report(study, run_spec := _spec())
    assert rep.baseline_values == (1.0,)
    assert [t.number for t in rep.top][0] == ft.number and rep.top[0].delta.delta == 0.0
    worse = next(t for t in rep.top if _key(t.params) == (0.45, 1))
    assert worse.delta.delta == pytest.approx(-0.25) and worse.delta.low <= -0.25 <= worse.delta.high
    assert set(rep.importances) == {"retrieval.floor", "retrieval.top_k"}
    assert rep.counts == {"complete": 3, "infeasible": 1}
    figs = report_figures(study, rep)
    assert {"parallel", "heatmap", "importance", "history"} <= set(figs) and "pareto" not in figs
    assert figs["heatmap"].data[0].type == "heatmap"
    assert run_spec.grid_size == 4


def test_reused_memory_spaces_equal_a_fresh_replay(suites, base):
    """Retrieval-only trials on reused spaces give exactly what ``memwb eval``'s fresh replay gives,
    query after query (the access fields touched by hits are restored between trials)."""
    cfg_a = base.with_overrides({"retrieval.floor": 0.0, "retrieval.top_k": 3})
    cfg_b = base.with_overrides({"retrieval.fusion": "rrf", "retrieval.top_k": 2, "retrieval.floor": 0.0})
    with SweepEvaluator(suites) as ev:
        first = ev.evaluate(cfg_a)
        again = ev.evaluate(cfg_a)
        other = ev.evaluate(cfg_b)
        assert (first.replayed, again.replayed, other.replayed) == (True, False, False) and ev.replays == 1

    def shape(cases):
        return [(q.key, q.passed, [r.labels for r in q.retrieved], [round(r.score, 6) for r in q.retrieved])
                for c in cases for q in c.queries]

    assert shape(again.cases) == shape(first.cases)
    fresh = run_suites(suites, cfg_b.with_overrides({"tracing.enabled": False}))
    assert shape(other.cases) == shape(fresh.cases)


def test_write_parameter_triggers_a_replay_with_cached_embeddings(suites, base):
    # the seed's rejecting threshold (issue 16 keeps statements below it as episodic by default)
    spec = _spec(["write.threshold=0.6,0.95", "retrieval.top_k=3"], constraints=())
    run = run_sweep(spec, base.with_overrides({"write.keep_below_threshold": False}), suites=suites)
    assert run.ran == 2 and run.replays == 2  # the base config's writes (threshold 0.6) are reused once
    vals = {t.params["write.threshold"]: t.user_attrs["metrics"]["overall"] for t in run.study.trials}
    # threshold 0.95 rejects the hint-less passport statement (importance 0.6): stored count drops
    assert vals[0.95]["stored_memories"] == vals[0.6]["stored_memories"] - 1
    assert vals[0.95]["recall@k"] < vals[0.6]["recall@k"]
    assert [t.user_attrs["replayed"] for t in run.study.trials] == [False, True]


@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_resume_adds_only_missing_trials_and_extension(suites, base, tmp_path):
    url = f"sqlite:///{tmp_path / 'sweeps.sqlite3'}"
    first = run_sweep(_spec(), base, suites=suites, storage=url, trials=2)
    assert first.created and first.ran == 2
    again = run_sweep(_spec(), base, suites=suites, storage=url)
    assert again.study_name == first.study_name and not again.created and again.ran == 2
    done = run_sweep(_spec(), base, suites=suites, storage=url)
    assert done.ran == 0
    keys = [_key(t.params) for t in done.study.get_trials(deepcopy=False)]
    assert sorted(keys) == sorted(EXPECTED)
    # a wider grid on the same keys extends the same study with the new points only
    wider = run_sweep(_spec(["retrieval.floor=0.0,0.45,0.6", "retrieval.top_k=1:3:2"]), base, suites=suites,
                      storage=url)
    assert wider.study_name == first.study_name and wider.ran == 2
    assert len({_key(t.params) for t in wider.study.trials}) == len(wider.study.trials) == 6
    # categorical choices cannot change inside one study (optuna keeps one value space per parameter)
    cat = ["retrieval.fusion=weighted,rrf", "retrieval.top_k=3"]
    run_sweep(_spec(cat), base, suites=suites, storage=url, study_name="cat")
    with pytest.raises(SweepError, match="choices of retrieval.fusion"):
        run_sweep(_spec(["retrieval.fusion=weighted,rrf,five_term", "retrieval.top_k=3"]), base, suites=suites,
                  storage=url, study_name="cat")
    # another objective is another sweep: refused under the same study name
    with pytest.raises(SweepError, match="belongs to another sweep"):
        run_sweep(_spec(objective="ndcg@k"), base, suites=suites, storage=url, study_name=first.study_name)


@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_two_processes_sharing_one_storage_do_not_duplicate_trials(suites, base, tmp_path):
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    spec = _spec(["retrieval.floor=0.0,0.3,0.45", "retrieval.top_k=1:3:2"])
    run = run_sweep(spec, base, suites=suites, storage=url, jobs=2)
    trials = run.study.get_trials(deepcopy=False)
    assert run.ran == 6 and len(trials) == 6
    assert len({_key(t.params) for t in trials}) == 6
    assert all(t.state.name in ("COMPLETE", "PRUNED") for t in trials)


def test_random_and_tpe_search_with_two_objectives(suites, base):
    spec = SweepSpec((SUITE,), parse_params(["retrieval.floor=0.0:0.6", "retrieval.tau_days=1,7,30"]),
                     SearchMode.TPE, (parse_metric("recall@k"), parse_metric("latency_p95_ms")), (), 3)
    run = run_sweep(spec, base, suites=suites, trials=6)
    assert run.ran == 6 and len(run.study.directions) == 2
    df = trials_frame(run.study)
    assert len(df) == 6 and df["pareto"].any()
    rep = build_report(run.study, spec)
    assert "pareto" in report_figures(run.study, rep)
    rnd = run_sweep(SweepSpec((SUITE,), parse_params(["retrieval.top_k=1,3"]), SearchMode.RANDOM,
                              (parse_metric("recall@k"),), (), 1), base, suites=suites, trials=4)
    # two values only: repeated samples reuse the stored metrics instead of running again
    dups = [t for t in rnd.study.trials if "duplicate_of" in t.user_attrs]
    assert rnd.ran == 4 and len(dups) >= 2


def test_jobs_without_storage_and_bad_weights_are_refused(suites, base):
    with pytest.raises(SweepError, match="shared --storage"):
        run_sweep(_spec(), base, suites=suites, jobs=2)
    run = run_sweep(_spec(["retrieval.weights.similarity=0", "retrieval.weights.recency=0",
                           "retrieval.weights.importance=0,0.5"], constraints=()), base, suites=suites)
    status = {t.params["retrieval.weights.importance"]: t.user_attrs["status"] for t in run.study.trials}
    assert status == {0: "invalid", 0.5: "complete"}
    applied = next(t for t in run.study.trials if t.user_attrs["status"] == "complete").user_attrs["applied"]
    assert applied["retrieval.weights.importance"] == 1.0  # normalised: the group sums to 1
    with pytest.raises(ConfigError):
        _spec(["retrieval.floor=0.1:0.2"])  # continuous range cannot be a grid


def test_cli_sweep_exports_toml_that_eval_reproduces(tmp_path, monkeypatch):
    from memory_engine.cli import load_commands

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    app = load_commands()
    runner = CliRunner()
    best = tmp_path / "best.toml"
    report = tmp_path / "report.json"
    res = runner.invoke(app, ["sweep", SUITE, "--param", GRID[0], "--param", GRID[1], "--objective", "recall@k",
                              "--constraint", "violations==0", "--export-best", str(best), "--json", str(report),
                              "--figures", str(tmp_path / "figs"), "-q"])
    assert res.exit_code == 0, res.output
    assert "best trial #" in res.output and "delta" in res.output
    rep = json.loads(report.read_text())
    assert rep["top"][0]["retrieval.floor"] == 0.45 and rep["top"][0]["retrieval.top_k"] == 3
    assert len(list((tmp_path / "figs").glob("*.html"))) >= 4
    for fig in (tmp_path / "figs").glob("*.html"):  # issue 13: plotly.js embedded, not loaded from a CDN
        assert 'src="https://cdn.plot.ly' not in fig.read_text(encoding="utf-8")
    cfg = EngineConfig.from_toml(best)
    assert cfg.retrieval.floor == 0.45 and cfg.retrieval.top_k == 3
    # a file to share: no machine path of this workspace in it (fresh-user trial, session 10)
    assert "workspace" not in best.read_text(encoding="utf-8") and str(tmp_path) not in best.read_text(encoding="utf-8")
    ev = runner.invoke(app, ["eval", SUITE, "--config", str(best), "--no-store", "--no-ragas", "--format", "json", "-q"])
    assert ev.exit_code == 0, ev.output
    overall = json.loads(ev.stdout[ev.stdout.index("{"):])["summary"]["overall"]
    assert overall["means"]["recall@k"] == 1.0 and overall["irrelevant_violations"] == 0
    # the trial's own metrics equal what eval reports for the exported config
    suites = load_suites([SUITE])
    with SweepEvaluator(suites) as sev:
        m = compute_metrics(sev.evaluate(cfg).cases)
    assert m.overall["recall@k"] == overall["means"]["recall@k"]
    assert m.overall["ndcg@k"] == pytest.approx(overall["means"]["ndcg@k"])
    assert m.overall["pass"] == overall["means"]["pass"]


def test_cli_rejects_bad_input_naming_the_key(tmp_path, monkeypatch):
    from memory_engine.cli import load_commands

    monkeypatch.setenv("MEMWB_HOME", str(tmp_path / "ws"))
    res = CliRunner().invoke(load_commands(), ["sweep", SUITE, "--param", "retrieval.flor=0.1,0.2"])
    assert res.exit_code == 2 and "retrieval.flor" in res.output
    res = CliRunner().invoke(load_commands(), ["sweep", "--help"])
    assert res.exit_code == 0 and "--export-best" in res.output and "--constraint" in res.output
