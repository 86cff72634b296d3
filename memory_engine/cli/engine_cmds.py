"""`memwb config`, `memwb add`, `memwb retrieve`, `memwb forget`: the engine from the shell."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..config import EngineConfig
from ..errors import ConfigError, MemoryEngineError, ValidationError
from ..validation import ROLE_SOURCE, parse_time, require_role, require_timezone
from . import app
from .options import ConfigOpt, WorkspaceOpt, command_config, require_workspace, set_help

console = Console()

SetOpt = Annotated[list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help=set_help("retrieval.top_k=5"))]
UserOpt = Annotated[str, typer.Option("--user", "-u", help="Owner user id (required: memories always have an owner).")]
TenantOpt = Annotated[str, typer.Option("--tenant", "-t", help="Tenant id.")]


def cli_config(config: Path | None, sets: list[str] | None, workspace: Path | None = None) -> EngineConfig:
    """Config from TOML (or defaults) + ``--set k=v`` overrides; exits 2 with the key named on error."""
    try:
        return command_config(config, sets, workspace)
    except ConfigError as e:
        console.print(f"[red]config error:[/red] {e}")
        raise typer.Exit(2) from e


@app.command("config")
def config_cmd(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
    toml: Annotated[bool, typer.Option("--toml", help="Print the effective config as TOML (loadable by --config).")] = False,
    grep: Annotated[str | None, typer.Option("--grep", help="Only keys containing this text.")] = None,
) -> None:
    """List every config field by dotted name: effective value (bold when it differs from the
    built-in default because of --config, --set or MEMWB_* environment variables), default, meaning.
    Every field is sweepable by this name."""
    cfg = cli_config(config, set_, workspace)
    if toml:
        typer.echo(cfg.to_toml())
        return
    default = EngineConfig.defaults()
    table = Table("key", "value", "default", "description", show_lines=False)
    for key in cfg.keys():
        if grep and grep not in key:
            continue
        node: Any = EngineConfig
        desc = ""
        for part in key.split("."):
            f = node.model_fields[part]
            desc = f.description or ""
            node = f.annotation
        v, d = cfg.get(key), default.get(key)
        table.add_row(key, str(v) if v == d else f"[bold]{v}[/bold]", str(d), desc)
    console.print(table)
    console.print(f"config hash: {cfg.config_hash()}")


@contextlib.contextmanager
def _workspace(config: Path | None, sets: list[str] | None, workspace: Path | None) -> Iterator[Any]:
    """The opened workspace with its engine built (active embedding applied, spans into its warehouse),
    closed on exit; exit code 1 when the engine cannot be opened."""
    from ..workspace import open_workspace

    cfg = cli_config(config, sets, workspace)
    try:
        ws = open_workspace(cfg)
        ws.engine  # noqa: B018 - open now, so a failure is reported here
    except MemoryEngineError as e:
        console.print(f"[red]cannot open the engine:[/red] {e}")
        raise typer.Exit(1) from e
    with ws:
        yield ws


@contextlib.contextmanager
def _engine(config: Path | None, sets: list[str] | None, workspace: Path | None) -> Iterator[Any]:
    """The workspace's engine, closed on exit (see :func:`_workspace`)."""
    with _workspace(config, sets, workspace) as ws:
        yield ws.engine


@contextlib.contextmanager
def _refused() -> Iterator[None]:
    """A MemoryEngineError raised inside is a refused value: printed in red, exit code 2."""
    try:
        yield
    except MemoryEngineError as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from e


def _time_option(flag: str, what: str, example: str, effect: str) -> Any:
    """The ``--time`` / ``--now`` option: an ISO 8601 time with a UTC offset (read by ``parse_time``)."""
    return typer.Option(flag, metavar="ISO-TIME",
                        help=f"{what}: ISO 8601 with a UTC offset, e.g. {example} (default: now). {effect}")


def _zone_option(whose: str, time_flag: str) -> Any:
    """The ``--timezone`` option; ``whose`` dates it reads, ``time_flag`` the option whose offset is its fallback."""
    return typer.Option("--timezone", metavar="ZONE",
                        help=f"Time zone {whose} dates are read in: IANA name or offset, e.g. Asia/Shanghai, +08:00 "
                        f"(default memory.timezone, else the {time_flag} offset, else UTC).")


ROLE_HELP = ("Who said it: user (the owner's own word, the default), assistant (kept as an episodic record of what "
             "was said, never as the user's fact), tool (a tool's output; planted instructions are flagged) or system.")


def _metadata(meta: list[str] | None, speaker: str | None) -> dict[str, str]:
    """The ``metadata`` of ``memwb add``: each ``--meta KEY=VALUE`` (a string value; a later one wins) and
    ``--speaker`` as the ``speaker`` key. Exit 2 naming the option for a pair without '=' or with an empty key,
    and for ``--speaker`` beside ``--meta speaker=...`` with another value."""
    out: dict[str, str] = {}
    for pair in meta or ():
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            console.print(f"[red]--meta expects KEY=VALUE, got {pair!r}[/red]")
            raise typer.Exit(2)
        out[key.strip()] = value
    if speaker is not None:
        if not speaker.strip():
            console.print("[red]--speaker must be a non-empty name[/red]")
            raise typer.Exit(2)
        if out.get("speaker", speaker) != speaker:
            console.print(f"[red]--speaker {speaker!r} and --meta speaker={out['speaker']!r} disagree[/red]")
            raise typer.Exit(2)
        out["speaker"] = speaker.strip()
    return out


@app.command("add")
def add_cmd(
    text: Annotated[str, typer.Argument(help="What was said.")],
    user: UserOpt,
    tenant: TenantOpt = "default",
    session: Annotated[str | None, typer.Option(help="Session id.")] = None,
    role: Annotated[str, typer.Option("--role", metavar="|".join(ROLE_SOURCE), help=ROLE_HELP)] = "user",
    speaker: Annotated[str | None, typer.Option(
        "--speaker", metavar="NAME", help="Name of who said it (metadata 'speaker'): a correction retires only the same speaker's "
        "memories, and a question naming a speaker finds their turns.")] = None,
    meta: Annotated[list[str] | None, typer.Option(
        "--meta", metavar="KEY=VALUE", help="Metadata KEY=VALUE stored with the memory (a string; repeatable), e.g. --meta channel=email.")] = None,
    when: Annotated[str | None, _time_option("--time", "When it was said", "2026-03-02T09:00:00+08:00",
                                             "Dates in the text ('yesterday', '6月3号') resolve against it.")] = None,
    timezone: Annotated[str | None, _zone_option("the text's", "--time")] = None,
    permanent: Annotated[bool, typer.Option("--permanent", help="Never decays or expires in the lifecycle.")] = False,
    memory_type: Annotated[str | None, typer.Option("--type", help="working|episodic|semantic|fact|procedural (default: the pipeline decides).")] = None,
    fact: Annotated[str | None, typer.Option(help="Structured fact as key=value.")] = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Write one memory through the write pipeline and print the outcome (stored/merged/rejected/candidate/forgotten).
    The options map onto MemoryEngine.add: --role, --session, --time (now), --timezone, --permanent, and --speaker
    and --meta into its metadata."""
    f = None
    if fact:
        if "=" not in fact:
            console.print("[red]--fact expects key=value[/red]")
            raise typer.Exit(2)
        k, v = fact.split("=", 1)
        f = {"key": k, "value": v}
    metadata = _metadata(meta, speaker)
    with _refused():  # before the engine opens (the bundled model loads in seconds)
        if not text.strip():  # nothing to keep: say so instead of opening (and creating) a workspace
            raise ValidationError("the text to add is empty", field="text")
        now = parse_time(when, "--time")
        require_timezone(timezone)
        require_role(role)
    with _engine(config, set_, workspace) as eng:
        with _refused():
            r = eng.add(text, user_id=user, tenant_id=tenant, session_id=session, role=role, memory_type=memory_type,
                        metadata=metadata or None, fact=f, now=now, permanent=permanent, timezone=timezone)
        typer.echo(json.dumps({"outcome": r.outcome, "memory_id": r.memory_id, "reason": r.reason,
                               "superseded_ids": list(r.superseded_ids), "importance": r.importance,
                               "memory_type": r.memory_type, "redactions": list(r.redactions)}, ensure_ascii=False))


def hits_table() -> Table:
    """The table ``memwb retrieve`` prints, laid out for an 80-column terminal: the memory column holds the
    id (never cut: ``memwb forget`` needs it whole), then the type and the routes that found it; the content
    folds onto more lines instead of ending in "…", by display width, so Chinese text (two cells a
    character) is readable in full."""
    t = Table()
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("memory", overflow="fold", min_width=16, max_width=16)
    t.add_column("score", no_wrap=True)
    t.add_column("rel.", no_wrap=True)
    t.add_column("content", overflow="fold", ratio=1)
    return t


@app.command("retrieve")
def retrieve_cmd(
    query: Annotated[str, typer.Argument(help="The question.")],
    user: UserOpt,
    tenant: TenantOpt = "default",
    session: Annotated[str | None, typer.Option(help="Session id (enables vague-query rewriting).")] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", help="Hits to return (default retrieval.top_k).")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Also show every candidate: route ranks, relevance, fused score, and for a dropped one the stage and why (for the floor: which check, the value, the threshold, the margin).")] = False,
    when: Annotated[str | None, _time_option("--now", "When the question is asked", "2026-03-09T20:00:00+08:00",
                                             "'yesterday', 'last Friday', '上周五' in the question resolve against it; "
                                             "recency decays to it.")] = None,
    timezone: Annotated[str | None, _zone_option("the question's", "--now")] = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Hybrid retrieval for one owner; prints the ranked hits (and with --explain, why the others were dropped)."""
    from ..retrieve.routes import channels_of

    require_workspace(workspace)
    with _refused():  # before the engine opens (the bundled model loads in seconds)
        now = parse_time(when, "--now")
        require_timezone(timezone)
    with _engine(config, set_, workspace) as eng:
        eng.warm_up()  # the stored span times this retrieve, not the process's one-time start-up
        res = eng.retrieve(query, user_id=user, tenant_id=tenant, session_id=session, top_k=top_k, explain=explain,
                           now=now, timezone=timezone)
        if res.degraded:
            console.print(f"[yellow]degraded:[/yellow] {res.error}")
        if res.hits:  # no empty table for 0 hits: the line below says it
            t = hits_table()
            for i, h in enumerate(res.hits, 1):
                t.add_row(str(i), f"{h.memory_id}\n{h.memory_type}\n{' + '.join(h.sources)}", f"{h.score:.3f}",
                          f"{h.relevance:.3f}", h.content)
            console.print(t)
        console.print(f"{len(res.hits)} hits in {res.latency_ms:.1f} ms" + (f"; rewritten: {res.rewritten_query}" if res.rewritten_query else ""))
        if explain and res.explanations:
            e = Table()
            e.add_column("memory", no_wrap=True, min_width=16)
            for name in ("routes", "relevance", "fused", "rank", "dropped: why"):
                e.add_column(name, overflow="fold")
            for x in res.explanations:
                routes = ", ".join(f"{r} #{x.route_ranks[r]}" for r in channels_of(x.route_ranks))
                e.add_row(x.memory_id, routes, f"{x.relevance:.3f}", f"{x.fused_score:.3f}", str(x.final_rank or ""),
                          x.why())
            console.print(e)


@app.command("forget")
def forget_cmd(
    memory_id: Annotated[str, typer.Argument(help="The memory id (16 hex digits).")],
    user: UserOpt,
    tenant: TenantOpt = "default",
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Delete one of the owner's memories (exit 1 when it does not exist or belongs to someone else)."""
    with _engine(config, set_, workspace) as eng:
        ok = eng.forget(memory_id, user_id=user, tenant_id=tenant)
        typer.echo("forgotten" if ok else "not found")
        if not ok:
            raise typer.Exit(1)


@app.command("serve")
def serve_cmd(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    workspace: WorkspaceOpt = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (127.0.0.1: this machine only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8765,
    keys_file: Annotated[
        Path | None,
        typer.Option("--keys-file", help="API keys: JSON {tenant: \\[key, ...]} or tenant:key lines. "
                     "Also read from $MEMWB_API_KEYS (tenant:key,tenant:key)."),
    ] = None,  # fmt: skip
) -> None:
    """Serve the engine over HTTP for agents in any language: add, retrieve, context, facts, forget,
    erase (JSON; OpenAPI schema at /openapi.json). Each API key maps to one tenant; a key never reaches
    another tenant's memories. Keys are never logged."""
    from ..service import Service, load_keys

    try:
        keys = load_keys(keys_file)
    except ConfigError as e:
        console.print(f"[red]config error:[/red] {e}")
        raise typer.Exit(2) from e
    with _workspace(config, set_, workspace) as ws:
        svc = Service(ws.engine, keys, host=host, port=port, workspace=ws)
        console.print(f"memwb serve: http://{host}:{port} ({len(keys.tenants)} tenants, {len(keys)} keys); "
                      f"schema at /openapi.json. Ctrl-C stops.")  # fmt: skip
        svc.serve()
