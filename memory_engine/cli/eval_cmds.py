"""`memwb eval`, `memwb ci`, `memwb import`: golden-case evaluation from the command line.

Thin: parse, call :mod:`memory_engine.evaluation`, write reports, exit code.
Exit codes: 0 ok; 1 (``ci`` only) the gate failed; 2 bad input (suite,
config, baseline or benchmark file), with the error on stderr and nothing run.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memory_engine.cli import app
from memory_engine.cli.options import ConfigOpt, WorkspaceOpt, command_config, set_help
from memory_engine.config import EngineConfig
from memory_engine.errors import ConfigError, MemoryEngineError, SuiteError

if TYPE_CHECKING:
    from memory_engine.evaluation.ci import CiOutcome
    from memory_engine.evaluation.runner import EvalRun

FORMATS = ("table", "json", "markdown")


def _fail(msg: str, code: int = 2) -> typer.Exit:
    typer.echo(msg, err=True)
    return typer.Exit(code)


def _load_config(config: Path | None, sets: list[str] | None, workspace: Path | None = None) -> EngineConfig:
    return command_config(config, sets, workspace)


@dataclasses.dataclass(frozen=True)
class SplitOpts:
    """The CLI's split options (see :func:`memory_engine.evaluation.splits.load_split`)."""

    test: list[Path] | None = None
    split_by: str | None = None
    test_tag: str = "test"
    test_share: float = 0.3
    seed: int = 0
    part: str = "all"


def _prepare(paths: list[Path], config: Path | None, sets: list[str] | None,  # noqa: ANN202
             split: SplitOpts | None = None, workspace: Path | None = None):
    """Config, the suites to run (one split part when asked) and the split record (or None)."""
    from memory_engine.evaluation.splits import load_split

    split = split or SplitOpts()
    try:
        cfg = _load_config(config, sets, workspace)
        suites, sp = load_split(paths, test_paths=split.test or (), method=split.split_by, test_tag=split.test_tag,
                                test_share=split.test_share, seed=split.seed)
        if sp is None and split.part != "all":
            raise ConfigError(f"--split {split.part} needs a split: --test PATH or --split-by file|tag|stratified")
        if sp is not None:
            suites = list(sp.suites(split.part))
    except SuiteError as e:
        raise _fail(f"invalid suite input (nothing was run):\n{e}") from None
    except ConfigError as e:
        raise _fail(f"invalid configuration: {e}") from None
    except ValueError as e:
        raise _fail(f"--split-by must be file, tag or stratified ({e})") from None
    record = None
    if sp is not None:
        record = sp.record() | {"part": split.part}
    return cfg, suites, record


def _run(suites, cfg: EngineConfig, *, ragas: bool, quiet: bool, split: dict | None = None):  # noqa: ANN001, ANN202
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from memory_engine.evaluation.runner import run_suites

    from .progress import progress

    total = sum(s.n_queries for s in suites)
    with progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), disable=quiet, transient=True,
    ) as prog:
        task = prog.add_task("replaying cases", total=total)
        run = run_suites(suites, cfg, progress=lambda n: prog.advance(task, n))
    if split is not None:  # recorded with the run: which case was dev, which test
        run = dataclasses.replace(run, extras=run.extras | {"split": split})
    if ragas:
        from memory_engine.evaluation.ragas_bridge import evaluate_queries

        r = evaluate_queries(run.queries)
        run = dataclasses.replace(run, extras=run.extras | {"ragas": r.to_dict()})
    return run


def _store(run, cfg: EngineConfig, store: bool) -> None:  # noqa: ANN001
    if not store:
        return
    from memory_engine.evaluation.store import save_run

    try:
        save_run(run, workspace=cfg.workspace)  # beside a running app the run goes through its spool
    except MemoryEngineError as e:  # the run itself is valid: report, don't lose the results
        typer.echo(f"warning: run not stored in the warehouse: {e}", err=True)


PathsArg = Annotated[list[Path], typer.Argument(help="Suite YAML files or folders (every *.yaml below is loaded).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help=set_help("retrieval.floor=0.4"))]
RagasOpt = Annotated[
    bool, typer.Option("--ragas/--no-ragas", help="Also compute ragas ID-based and non-LLM context precision/recall "
                                                  "(slow; needs the memwb\\[eval] extra).")
]
StoreOpt = Annotated[
    bool, typer.Option("--store/--no-store", help="Save the run (config, hash, commit, per-query rows) in the workspace warehouse.")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
TestOpt = Annotated[list[Path] | None, typer.Option(
    "--test", help="Test suites (file or folder, repeatable) beside the dev suites given as arguments; "
                   "implies --split-by file.")]
SplitByOpt = Annotated[str | None, typer.Option(
    "--split-by", help="Split into dev and test: file (--test paths), tag (cases tagged --test-tag) or "
                       "stratified (seeded per category x language, --test-share, --seed).")]
TestTagOpt = Annotated[str, typer.Option("--test-tag", help="Tag marking test cases (--split-by tag).")]
TestShareOpt = Annotated[float, typer.Option("--test-share", help="Test share for --split-by stratified (0..1).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the stratified split.")]


@app.command("eval")
def eval_cmd(
    paths: PathsArg,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="Report printed on stdout: table | json | markdown.")] = "table",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for report.json, report.md, report.html and junit.xml of this run."),
    ] = None,
    ragas: RagasOpt = False,
    store: StoreOpt = True,
    quiet: QuietOpt = False,
    test: TestOpt = None,
    split_by: SplitByOpt = None,
    test_tag: TestTagOpt = "test",
    test_share: TestShareOpt = 0.3,
    seed: SeedOpt = 0,
    split: Annotated[str, typer.Option(
        "--split", help="With a split: run dev, test or all (default all; the report shows both parts).")] = "all",
) -> None:
    """Replay golden suites through the engine and report per-query and aggregate metrics.

    With a split (--test or --split-by) the run records which case is dev and
    which test, and the report shows the figures of each part."""
    if fmt not in FORMATS:
        raise _fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    from memory_engine.evaluation import reports

    cfg, suites, rec = _prepare(paths, config, set_, SplitOpts(test, split_by, test_tag, test_share, seed, split),
                                workspace)
    run = _run(suites, cfg, ragas=ragas, quiet=quiet, split=rec)
    _store(run, cfg, store)
    if out is not None:
        _write_reports(run, None, out=out)
    if fmt == "json":
        typer.echo(json.dumps(reports.run_to_dict(run), indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        typer.echo(reports.render_markdown(run))
    else:
        typer.echo(reports.render_table(run))


@app.command("ci")
def ci_cmd(
    paths: PathsArg,
    baseline: Annotated[Path, typer.Option("--baseline", help="Baseline JSON written by --update-baseline.")],
    max_drop: Annotated[
        float, typer.Option("--max-drop", min=0.0, help="Tolerated absolute drop of a metric (0..1) per category before failing.")
    ] = 0.02,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML (one testcase per query) here.")] = None,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="Write the pull-request Markdown report here.")] = None,
    html_out: Annotated[Path | None, typer.Option("--html", help="Write the self-contained HTML report (Plotly) here.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the full JSON report here.")] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for report.json, report.md, report.html and junit.xml, as memwb eval "
                                   "--out writes them (with the baseline comparison); the single-file options "
                                   "above still apply."),
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option(
            "--update-baseline",
            help="Write (or create) the baseline from this run; drops against the old baseline are then reported, not fatal.",
        ),
    ] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
    ragas: RagasOpt = False,
    store: StoreOpt = True,
    quiet: QuietOpt = False,
    test: TestOpt = None,
    split_by: SplitByOpt = None,
    test_tag: TestTagOpt = "test",
    test_share: TestShareOpt = 0.3,
    seed: SeedOpt = 0,
    split: Annotated[str, typer.Option(
        "--split", help="With a split: gate on dev, test or all (default all). The baseline's means are then "
                        "recomputed over the queries of that part.")] = "all",
) -> None:
    """Gate a change: exit 1 when a must-pass case fails, an irrelevant label or a
    not_contains string is returned, or a metric drops more than --max-drop below
    the baseline (overall or in a category); 2 on bad input; 0 otherwise.

    --split test gates on the held-out cases only, e.g. memwb ci eval_sets
    --test eval_sets_test --split test --baseline eval_sets/baseline.json."""
    from memory_engine.evaluation import reports
    from memory_engine.evaluation.ci import BaselineError, compare, load_baseline, save_baseline

    cfg, suites, rec = _prepare(paths, config, set_, SplitOpts(test, split_by, test_tag, test_share, seed, split),
                                workspace)
    base = None
    if baseline.exists() or not update_baseline:
        try:
            base = load_baseline(baseline)
        except BaselineError as e:
            raise _fail(f"invalid baseline: {e}") from None
    run = _run(suites, cfg, ragas=ragas, quiet=quiet, split=rec)
    _store(run, cfg, store)
    outcome = compare(run, base, max_drop=max_drop, fail_on_regression=not update_baseline,
                      restrict_baseline=rec is not None and split != "all")
    if update_baseline:
        save_baseline(run, baseline)
        typer.echo(f"baseline written: {baseline}", err=True)
    _write_reports(run, outcome, out=out, junit=junit, markdown=markdown, html_out=html_out, json_out=json_out)
    typer.echo(reports.render_table(run, outcome))
    raise typer.Exit(outcome.exit_code)


def _write_reports(
    run: EvalRun,
    outcome: CiOutcome | None,
    *,
    out: Path | None = None,
    junit: Path | None = None,
    markdown: Path | None = None,
    html_out: Path | None = None,
    json_out: Path | None = None,
) -> None:
    """Write a run's reports: ``out`` = a folder with all four under their usual names (eval and ci alike),
    the others = one file each. ``outcome`` (a ci comparison or None) is rendered where the report has room."""
    from memory_engine.evaluation import reports

    targets = [(junit, "junit"), (markdown, "md"), (html_out, "html"), (json_out, "json")]
    if out is not None:
        targets += [(out / "junit.xml", "junit"), (out / "report.md", "md"), (out / "report.html", "html"),
                    (out / "report.json", "json")]
    render = {
        "junit": lambda: reports.render_junit(run),
        "md": lambda: reports.render_markdown(run, outcome),
        "html": lambda: reports.render_html(run, outcome),
        "json": lambda: json.dumps(reports.run_to_dict(run, outcome), indent=2, ensure_ascii=False),
    }
    for target, kind in targets:
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(render[kind](), encoding="utf-8")


@app.command("import")
def import_cmd(
    benchmark: Annotated[str, typer.Argument(help="Benchmark format: locomo | memdaily | longmemeval.")],
    paths: Annotated[list[Path], typer.Argument(help="The benchmark's own JSON file(s).")],
    out: Annotated[Path, typer.Option("--out", help="Folder the suite YAML files are written to.")],
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Keep the first N conversations / trajectories / questions per file.")
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="top_k written into the suites' defaults.")] = 10,
) -> None:
    """Turn a public memory benchmark (LoCoMo, MemDaily, LongMemEval) into golden suites."""
    from memory_engine.evaluation.importers import Benchmark, import_benchmark

    try:
        b = Benchmark(benchmark)
    except ValueError:
        raise _fail(f"unknown benchmark {benchmark!r}; valid: {', '.join(x.value for x in Benchmark)}") from None
    try:
        report = import_benchmark(b, paths, out, limit=limit, top_k=top_k)
    except SuiteError as e:
        raise _fail(f"import failed: {e}") from None
    for line in report.lines():
        typer.echo(line)


@app.command("compare")
def compare_cmd(
    run_a: Annotated[str | None, typer.Argument(help="Run A (the reference); default: the second newest run.")] = None,
    run_b: Annotated[str | None, typer.Argument(help="Run B (the change); default: the newest run.")] = None,
    by: Annotated[str, typer.Option("--by", help="Group deltas by this query detail: category, lang, suite, split.")] = "category",
    fmt: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Two stored eval runs side by side: the config parameters that differ, per-category deltas
    with 95% paired-bootstrap intervals, and the queries that flipped (pass -> fail, fail -> pass)."""
    from memory_engine.errors import WarehouseError
    from memory_engine.evaluation.compare import compare_runs, render_comparison
    from memory_engine.observability.spool import open_reader

    if fmt not in ("table", "json"):
        raise _fail(f"--format must be table or json, got {fmt!r}")
    try:
        cfg = _load_config(config, set_, workspace)
        wh = open_reader(cfg.workspace)  # the owner's while `memwb app`/`collect` owns the workspace
    except ConfigError as e:
        raise _fail(f"invalid configuration: {e}") from None
    except WarehouseError as e:
        if e.hint:
            raise _fail(f"cannot open the warehouse: {e}\nhint: {e.hint}") from None
        raise _fail(f"cannot open the warehouse: {e}") from None
    except MemoryEngineError as e:
        raise _fail(f"cannot open the warehouse: {e}") from None
    try:
        runs = wh.list_eval_runs(limit=1000)
        by_id = {r["run_id"]: r for r in runs}
        if run_b is None:
            if len(runs) < 2 or run_a is not None:
                raise _fail("give two run ids (`memwb eval` stores runs; list them on the Golden eval page)")
            run_b, run_a = runs[0]["run_id"], runs[1]["run_id"]
        missing = [r for r in (run_a, run_b) if r not in by_id]
        if missing:
            raise _fail(f"no stored eval run {', '.join(map(repr, missing))}")
        assert run_a is not None
        c = compare_runs(by_id[run_a], wh.eval_queries(run_a), by_id[run_b], wh.eval_queries(run_b), by=by)
    finally:
        wh.close()
    typer.echo(json.dumps(c.to_dict(), indent=2, ensure_ascii=False) if fmt == "json" else render_comparison(c))
