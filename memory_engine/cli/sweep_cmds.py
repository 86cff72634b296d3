"""``memwb sweep``: parameter sweeps over golden suites (thin: parse, call the library, report, exit code)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from memory_engine.cli import app
from memory_engine.cli.options import CONFIG_HELP, WorkspaceOpt, command_config, set_help
from memory_engine.cli.progress import LineProgress

_PARAM_HELP = (
    "Swept config field by dotted name: KEY=LOW:HIGH:STEP (inclusive grid), KEY=LOW:HIGH (continuous, "
    "random/tpe only) or KEY=V1,V2,... (values or enum choices). Repeatable. Any field of `EngineConfig` "
    "(write.threshold, write.dedup_similarity, retrieval.floor, retrieval.tau_days, retrieval.half_life_days.*, "
    "retrieval.fusion, retrieval.weights.*, retrieval.five_term_weights.*, retrieval.rrf_k, retrieval.top_k, "
    "retrieval.token_budget...). Weight groups that must sum to 1 are normalised per trial."
)


def _fail(msg: str, code: int = 2) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


@app.command("sweep")
def sweep(
    paths: Annotated[list[Path], typer.Argument(help="Golden suite YAML files or folders (eval_sets/).")],
    param: Annotated[list[str], typer.Option("--param", "-p", metavar="KEY=VALUES", help=_PARAM_HELP)],
    search: Annotated[str | None, typer.Option(
        help="grid (every combination; default when every parameter has a grid), random, or tpe "
             "(optuna's Tree-structured Parzen Estimator; default when a range is continuous).")] = None,
    trials: Annotated[int | None, typer.Option(
        help="Total trials the study should hold (grid: default the grid size; random/tpe: default 20). "
             "Re-running with a larger number extends the sweep.", min=1)] = None,
    objective: Annotated[list[str] | None, typer.Option(
        metavar="METRIC", help="Metric to optimise, overall or ':<category>' (ndcg@5, recall@k, mrr, pass, hit@1, "
             "ndcg@5:negation_constraint). Give a second one (latency_p95_ms, stored_memories...) for a "
             "Pareto front. Default ndcg@k. Rank metrics are maximised; violations, leaks, latency_*_ms "
             "and stored_memories minimised.")] = None,
    constraint: Annotated[list[str] | None, typer.Option(
        metavar="METRIC<OP>N", help="Discard trials that break METRIC(==|!=|<=|>=|<|>)NUMBER, e.g. violations==0, pass>=0.9, "
             "recall@5:temporal>=0.8. Repeatable.")] = None,
    jobs: Annotated[int, typer.Option(help="Worker processes sharing the study's storage (at most one per free CPU core).",
                                      min=1)] = 1,
    seed: Annotated[int, typer.Option(help="Sampler seed (worker i uses seed+i).")] = 0,
    study: Annotated[str | None, typer.Option(
        help="Study name (= sweep id in the warehouse). Default: derived from the suites, parameter keys, "
             "search, objectives, constraints and base config, so the same command resumes.")] = None,
    storage: Annotated[str | None, typer.Option(
        help="Optuna RDB URL shared by processes/machines (sqlite:///path.db, postgresql://...). "
             "Default sqlite:///<workspace>/sweeps.sqlite3.")] = None,
    export_best: Annotated[Path | None, typer.Option(
        "--export-best", help="Write the best trial's config as TOML loadable by --config.")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", help=CONFIG_HELP + " The base config: the sweep varies fields of it; deltas are against it.")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=VALUE", help=set_help("retrieval.top_k=5", "Changes the base config, not a swept field."))] = None,
    workspace: WorkspaceOpt = None,
    top: Annotated[int, typer.Option(help="Rows of the top-trials table.", min=1)] = 10,
    figures: Annotated[Path | None, typer.Option(
        help="Folder to write the Plotly figures (parallel coordinates, heatmap, Pareto front, "
             "importances, history) as HTML.")] = None,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Write the report (top trials, deltas, importances, counts) as JSON.")] = None,
    no_store: Annotated[bool, typer.Option(
        "--no-store", help="Do not write trials into the workspace warehouse.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    test: Annotated[list[Path] | None, typer.Option(
        "--test", help="Test suites (file or folder, repeatable): the sweep optimises on the other suites (dev) "
                       "only, then reports the chosen config on test beside dev. Implies --split-by file.")] = None,
    split_by: Annotated[str | None, typer.Option(
        "--split-by", help="Split the suites into dev and test: file (the --test paths), tag (cases tagged "
                           "--test-tag) or stratified (seeded, per category x language, --test-share).")] = None,
    test_tag: Annotated[str, typer.Option("--test-tag", help="Tag marking test cases (--split-by tag).")] = "test",
    test_share: Annotated[float, typer.Option(
        "--test-share", help="Share of cases in the test split (--split-by stratified).")] = 0.3,
    split_seed: Annotated[int | None, typer.Option(
        "--split-seed", help="Seed of the stratified split (default: --seed).")] = None,
    repeats: Annotated[int, typer.Option(
        "--repeats", min=1, help="Run a random/TPE sweep this many times with sampler seeds seed, seed+1000, ... "
                                 "(each its own study) and report the run-to-run spread of the best dev value, "
                                 "its test value and test gain.")] = 1,
) -> None:
    """Sweep config parameters over golden suites with optuna; report the best configs.

    Every trial replays the suites through the real engine (retrieval-only
    trials reuse the written memory spaces; embeddings are cached). With a
    split (--test or --split-by) the sweep sees only the dev cases and the
    chosen config is then evaluated on the test cases beside the base config:
    dev and test deltas with their paired-bootstrap intervals and the
    generalization gap, with a warning when the test gain is negative or not
    significant. Exit code 0 when a feasible trial exists, 1 when none does,
    2 on bad input.
    """
    from memory_engine.errors import MemoryEngineError
    from memory_engine.evaluation.splits import load_split
    from memory_engine.evaluation.sweep import (
        SearchMode,
        SweepError,
        parse_constraint,
        parse_metric,
        parse_params,
        weight_notes,
    )
    from memory_engine.evaluation.sweep_report import build_report, render_report, report_figures, top_frame
    from memory_engine.evaluation.sweep_study import SweepSpec, default_storage_url, run_sweep
    from memory_engine.evaluation.sweep_study import export_best as export_best_toml

    try:
        base = command_config(config, set_, workspace)
        specs = parse_params(param, base)
        mode = SearchMode(search) if search else (
            SearchMode.GRID if all(p.gridable for p in specs) else SearchMode.TPE)
        objs = tuple(parse_metric(o) for o in (objective or ["ndcg@k"]))
        cons = tuple(parse_constraint(c) for c in (constraint or []))
        all_suites, split = load_split(paths, test_paths=test or (), method=split_by, test_tag=test_tag,
                                       test_share=test_share, seed=seed if split_seed is None else split_seed)
        suites = list(split.dev) if split else all_suites
        spec = SweepSpec(tuple(str(p) for p in paths), specs, mode, objs, cons, seed,
                         split.spec.to_dict() if split else None)
    except ValueError as e:
        _fail(f"--search must be grid, random or tpe, --split-by file, tag or stratified ({e})")
        return
    except MemoryEngineError as e:
        _fail(str(e))
        return
    from memory_engine.evaluation.sweep import objective_support

    for o in objs:
        if not objective_support(suites, o):
            _fail(f"no query of the sweep's suites can score {o.label} (rank metrics need queries with relevant "
                  "labels): every trial would be undefined; add such suites or optimise 'pass'")
    if split is not None:
        c = split.counts()
        typer.echo(f"split: {split.spec.label}; dev {c['dev']['cases']} cases / {c['dev']['queries']} queries "
                   f"(the sweep sees only these), test {c['test']['cases']} cases / {c['test']['queries']} queries",
                   err=True)
    for n in weight_notes(specs):
        typer.echo(f"note: {n}", err=True)
    url = storage or default_storage_url(base.workspace)
    wh = None
    if not no_store:
        from memory_engine.observability.spool import open_writer

        wh = open_writer(base.workspace)  # beside a running app: trials go through it (the spool)

    bar: Any = None

    def progress(done: int, target: int) -> None:
        nonlocal bar
        if quiet:
            return
        if bar is None:
            if sys.stderr.isatty():
                from tqdm import tqdm

                bar = tqdm(total=target, initial=done, unit="trial", desc="sweep", dynamic_ncols=True)
            else:  # tqdm's carriage returns make one unreadable line in a log: plain sparse lines instead
                bar = LineProgress()
                bar.add_task("sweep trials", total=target)
        if isinstance(bar, LineProgress):
            bar.update(0, completed=done, total=target)
            return
        bar.total = target
        bar.update(max(0, done - bar.n))

    if repeats > 1 and spec.search == SearchMode.GRID:
        _fail("--repeats needs --search random or tpe: a grid sweep evaluates the same points whatever the seed")
    spread = None
    try:
        kw: dict[str, Any] = {"suites": suites, "trials": trials, "storage": url, "jobs": jobs, "warehouse": wh,
                              "progress": progress, "test_suites": split.test if split else None,
                              "split_record": split.record() if split else None}
        if repeats > 1:
            from memory_engine.evaluation.spread import run_repeats

            spread, runs = run_repeats(spec, base, repeats=repeats, study_name=study, run=run_sweep, **kw)
            run = runs[0]
        else:
            run = run_sweep(spec, base, study_name=study, **kw)
    except (SweepError, MemoryEngineError) as e:
        _fail(str(e))
        return
    finally:
        if bar is not None:
            bar.close()
    typer.echo(f"sweep {run.study_name} ({url}): {run.ran} trial(s) run now in {run.seconds:.1f} s, "
               f"{run.replays} write replay(s); target {run.target}")
    if run.failed:
        typer.echo(f"warning: {run.failed} trial(s) failed (engine errors); re-running the sweep retries them",
                   err=True)
    report = build_report(run.study, spec, top_n=top)
    typer.echo(render_report(report))
    if run.generalization is not None:
        from memory_engine.evaluation.generalization import render_generalization

        typer.echo("")
        typer.echo(render_generalization(run.generalization))
    if spread is not None:
        from memory_engine.evaluation.spread import render_spread

        typer.echo("")
        typer.echo(f"(report above: the first repeat, seed {spec.seed})")
        typer.echo(render_spread(spread))
    if json_out:
        payload = {"sweep_id": report.sweep_id, "storage": url, "objectives": list(report.objectives),
                   "baseline": list(report.baseline_values), "counts": report.counts,
                   "importances": report.importances, "pareto": list(report.pareto),
                   "top": json.loads(top_frame(report).to_json(orient="records")), "notes": list(report.notes),
                   "generalization": run.generalization.to_dict() if run.generalization else None,
                   "spread": spread.to_dict() if spread else None}
        json_out.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    if figures:
        figures.mkdir(parents=True, exist_ok=True)
        figs = report_figures(run.study, report)
        if run.generalization is not None:
            from memory_engine.evaluation.generalization import generalization_figure

            figs["generalization"] = generalization_figure(run.generalization)
        for name, fig in figs.items():
            # plotly.js embedded (~4.6 MB per file): the figures must open offline, a CDN link is blank there
            fig.write_html(str(figures / f"{report.sweep_id}-{name}.html"), include_plotlyjs=True)
    if not report.top:
        typer.echo("no feasible trial: nothing to export", err=True)
        raise typer.Exit(1)
    if export_best:
        cfg, ft = export_best_toml(run.study, base, export_best)
        typer.echo(f"best trial #{ft.number} written to {export_best} (config hash {cfg.config_hash()})")
