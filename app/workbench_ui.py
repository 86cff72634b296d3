"""Layout helpers shared by the workbench pages (Streamlit only, no SQL, no scoring).

One opened workspace per process (``st.cache_resource``; the composition root
:func:`memory_engine.workspace.open_workspace` gives the engine and warehouse);
pages read data through the one query layer :mod:`memory_engine.observability.explore`
(``ui.q``), cached with ``st.cache_data`` keyed on the warehouse's change marker
(:func:`~memory_engine.observability.explore.workspace_summary`), so a new span,
verdict, eval run or sweep trial invalidates them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # pages run with app/ as cwd-independent scripts
    sys.path.insert(0, str(ROOT))

from memory_engine import demo  # noqa: E402
from memory_engine.models import now_utc  # noqa: E402, F401 - the pages' wall clock
from memory_engine.observability import explore as q  # noqa: E402 - the query layer the pages read
from memory_engine.viz import Tile  # noqa: E402

PAGE_TITLE = "memwb workbench"


def workspace() -> str:
    """The workspace folder (``MEMWB_HOME``, default ``.memwb``), as an absolute path."""
    from memory_engine.workspace import workspace_root

    return str(workspace_root().resolve())


@st.cache_resource(show_spinner=False)
def _open(ws: str) -> Any:
    """The process-wide opened workspace (composition root: active embedding, exporters). Under
    `memwb app` the owner process opened the engine already (it serves its store to other processes):
    the workspace adopts it."""
    from memory_engine.config import EngineConfig
    from memory_engine.observability.spool import process_engine
    from memory_engine.workspace import open_workspace

    return open_workspace(EngineConfig(workspace=ws), engine=process_engine(ws))


@st.cache_resource(show_spinner="Opening the memory engine (Qdrant shard + bundled model)…")
def _engine(ws: str) -> Any:
    return _open(ws).engine


def opened() -> Any:
    """The process-wide :class:`memory_engine.workspace.Workspace` (erase, health, config)."""
    return _open(workspace())


def engine() -> Any:
    """The process-wide engine on the workspace (embedded default; its spans go to the warehouse)."""
    return _engine(workspace())


def warehouse() -> Any:
    """The process-wide read-write warehouse of the workspace (the one the engine's spans go to)."""
    return _open(workspace()).warehouse


def setup(title: str) -> None:
    st.set_page_config(page_title=f"{title} · {PAGE_TITLE}", layout="wide")
    ensure_workspace()


def ensure_workspace() -> None:
    """On an empty workspace, build the demo workspace first with a progress bar, then rerun."""
    ws = workspace()
    if not demo.workspace_is_empty(ws):
        return
    st.info(f"Empty workspace {ws}: building the demo workspace (golden suites + LoCoMo slice replayed "
            "through the engine, answered by the extractive reader)…")  # fmt: skip
    bar = st.progress(0.0, text="starting")

    def tick(p: demo.DemoProgress) -> None:
        frac = p.done / p.total if p.total else 1.0
        bar.progress(min(1.0, frac), text=f"{p.stage}: {p.done}/{p.total} {p.message}")

    rep = demo.build_demo(ws, now=now_utc(), progress=tick)
    st.success(f"Demo built in {rep.duration_s:.0f} s: {rep.writes} writes, {rep.retrievals} retrievals, "
               f"{rep.answers} answers, {rep.spans_stored} spans.")  # fmt: skip
    for n in rep.notes:
        st.warning(n)
    st.rerun()


def summary() -> q.WorkspaceSummary:
    return q.workspace_summary(warehouse())


def provenance(s: q.WorkspaceSummary | None = None) -> q.WorkspaceSummary:
    """Caption naming where the page's data comes from; returns the summary."""
    s = s or summary()
    st.caption(f"Data: {s.provenance} · workspace `{workspace()}`")
    return s


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(version: tuple[Any, ...], name: str, key: str, _fn: Callable[[], Any]) -> Any:
    return _fn()


def cached(s: q.WorkspaceSummary, name: str, key: Any, fn: Callable[[], Any]) -> Any:
    """``fn()`` cached until the warehouse changes (``s.version``); ``name``/``key`` identify the call."""
    return _cached(tuple(str(x) for x in s.version), name, repr(key), fn)


def tile(col: Any, t: Tile) -> None:
    col.metric(t.label, t.value, t.delta, delta_color=t.delta_color if t.delta else "off", help=t.help or None,
               border=True)  # fmt: skip
    col.caption(t.detail)


def sidebar_filters(s: q.WorkspaceSummary, *, default_days: int = 7) -> tuple[Any, Any, dict[str, Any]]:
    """Filter widgets (tenant, user, service, config hash, date range) in the sidebar.

    Returns the ``Filters`` of the chosen window, those of the previous window
    of the same length (for the tiles' deltas) and the raw choices.
    """
    from memory_engine.observability.metrics import Filters

    wh = warehouse()
    opts = cached(s, "filter_options", (), lambda: q.filter_options(wh))
    sb = st.sidebar
    sb.header("Filters")
    choice: dict[str, Any] = {}
    for col, label in (("tenant_id", "Tenant"), ("user_id", "User"), ("service", "Service"),
                       ("config_hash", "Config hash")):  # fmt: skip
        v = sb.selectbox(label, ["(all)", *opts.get(col, [])], key=f"f_{col}")
        choice[col] = None if v == "(all)" else v
    from memory_engine.observability.metrics import data_window

    # the default window ends at the newest data of the metrics shown (for the chosen tenant/user/service),
    # not at the newest span of any source
    probe = Filters(**choice)
    _first, newest = cached(s, "data_window", probe, lambda: data_window(wh, probe))
    last = (newest or s.last or datetime.now(UTC)).date()
    start_default = last - timedelta(days=default_days - 1)
    rng = sb.date_input("Date range (UTC)", (start_default, last), key="f_dates")
    if isinstance(rng, tuple | list) and len(rng) == 2:
        d0, d1 = rng
    else:
        d0 = d1 = rng[0] if isinstance(rng, tuple | list) else rng
    since = datetime.combine(d0, time.min, tzinfo=UTC)
    until = datetime.combine(d1, time.min, tzinfo=UTC) + timedelta(days=1)
    span = until - since
    cur = Filters(since=since, until=until, **choice)
    prev = Filters(since=since - span, until=since, **choice)
    choice.update(since=since, until=until)
    return cur, prev, choice


def trace_link(trace: str, label: str) -> None:
    """A link to the Trace view page opened on ``trace`` (an id or search text)."""
    from streamlit.errors import StreamlitPageNotFoundError

    try:
        st.page_link("pages/9_Trace_view.py", label=label, query_params={"trace": trace})
    except StreamlitPageNotFoundError:  # a page run on its own (no multipage entrypoint): a plain URL
        st.markdown(f"[{label}](Trace_view?trace={trace})")


_SHORTCUTS_JS = """<script>
const doc = window.parent.document, win = window.parent.window;
win.__memwbShortcuts = Object.assign(win.__memwbShortcuts || {}, %s);
if (!win.__memwbShortcutsListener) {
  win.__memwbShortcutsListener = function (e) {
    const t = e.target, tag = (t && t.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || (t && t.isContentEditable)) return;  // typing, not a shortcut
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    for (const [key, keys] of Object.entries(win.__memwbShortcuts)) {
      if (keys.includes(e.key.toLowerCase())) {
        const el = doc.querySelector(`.st-key-${key} button`);
        if (el) { e.preventDefault(); el.click(); }
        return;
      }
    }
  };
  doc.addEventListener("keydown", win.__memwbShortcutsListener);
}
</script>"""


def keyboard_shortcuts(**keys: str | list[str]) -> None:
    """Keyboard shortcuts that click keyed buttons: ``button_key="1"`` or ``button_key=["n", "arrowright"]``
    (plain keys, ignored while typing in a text box). One listener on the page, installed from a
    zero-height ``st.iframe`` (the ``components.v1.html`` API the former helper package used is deprecated)."""
    import json

    mapping = {k: [v.lower()] if isinstance(v, str) else [x.lower() for x in v] for k, v in keys.items()}
    st.iframe(_SHORTCUTS_JS % json.dumps(mapping), height=1)


def not_available(what: str, module: str) -> None:
    st.info(f"{what} is not available yet: `{module}` has not landed in this build. The page will use it as soon "
            "as it exists.")  # fmt: skip


def optional(module: str) -> Any | None:
    """Import ``module`` when it exists (a library piece built in parallel), else None."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and module.startswith(e.name):
            return None
        raise


def health_config() -> Any:
    """The ``health`` config section of the workspace (weights, freshness window, alert thresholds)."""
    return opened().config.health


def health(
    s: q.WorkspaceSummary, now: datetime, *, tenant: str | None = None, user: str | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    """Health report of the store snapshot (owners seen in the warehouse, restricted to ``tenant`` /
    ``user`` when given, like the page's other numbers), scored with ``config.health`` like
    ``memwb health``, and the fact rows behind it."""
    from memory_engine.observability.health import health_report_for

    def run() -> tuple[Any, list[dict[str, Any]]]:
        owners = [(t, u) for t, u in q.known_owners(warehouse())
                  if (tenant is None or t == tenant) and (user is None or u == user)]  # fmt: skip
        memories, facts = q.health_inputs(engine(), owners)
        return health_report_for(memories, facts, health_config(), now=now.timestamp()), facts

    return cached(s, "health.report", (now, tenant, user), run)
