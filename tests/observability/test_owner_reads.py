"""Read commands work while another process owns the workspace (issue 13: `memwb metrics`, `timeline` and
`compare` exited 2 on the DuckDB lock, with a hint about sending spans).

A real owner (`memwb collect` in a child process holding the DuckDB file) serves read-only queries on
loopback; the commands run through the Typer app in this process and must print what they print without
the owner. A process holding the file without serving reads gets a hint fit for a read command."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands
from memory_engine.errors import WarehouseError
from memory_engine.observability.ingest import ingest_file
from memory_engine.observability.remote_reads import (
    READ_LOCK_HINT,
    TOKEN_HEADER,
    RemoteWarehouse,
)
from memory_engine.observability.spool import find_owner, owner_reader
from memory_engine.observability.warehouse import Warehouse

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _populate(ws: Path, traces: Path) -> str:
    """Sample spans and two stored eval runs; returns a memory id that has a timeline."""
    cli = load_commands()
    r = CliRunner().invoke(cli, ["sample-traces", str(traces), "--days", "3", "--users", "2"])
    assert r.exit_code == 0, r.output
    wh = Warehouse(ws / "warehouse.duckdb")
    ingest_file(wh, traces / "memwb_sample.jsonl", progress=False)
    t0 = datetime(2025, 6, 1, tzinfo=UTC)
    for i, floor in enumerate((0.45, 0.0)):
        rows = [{"case_id": f"s/c{j}", "query_id": "q", "details": {"category": "cat" + str(j % 2), "text": f"q{j}"},
                 "metrics": {"pass": float((j + i) % 3 != 0), "recall@k": ((j * 7 + i) % 5) / 4, "mrr": 1 / (1 + (j + i) % 3)}}
                for j in range(12)]  # fmt: skip
        wh.save_eval_run(f"run{i}", suite="s", config={"retrieval": {"floor": floor}}, started_at=t0.replace(day=1 + i),
                         metrics={"pass": 0.5}, queries=rows)  # fmt: skip
    row = wh.fetchone("SELECT memory_id FROM writes WHERE memory_id IS NOT NULL ORDER BY memory_id LIMIT 1")
    wh.close()
    assert row is not None
    return str(row[0])


def _read_commands(ws: Path, memory_id: str) -> list[list[str]]:
    w = ["-w", str(ws)]
    return [["metrics", *w, "--json", "--now", "2025-06-10T00:00:00"], ["metrics", *w, "--user", "user-1",
            "--now", "2025-06-10T00:00:00"], ["timeline", memory_id, *w], ["compare", "run0", "run1", "--set",
            f"workspace={ws}"], ["compare", "--format", "json", "--set", f"workspace={ws}"]]  # fmt: skip


def _run(args: list[str]) -> tuple[int, str]:
    r = CliRunner().invoke(load_commands(), args)
    return r.exit_code, r.output


@pytest.mark.slow  # ~10 s: a real owner process
def test_read_commands_beside_the_owner_print_the_same(tmp_path):
    ws = tmp_path / "ws"
    memory_id = _populate(ws, tmp_path / "traces")
    commands = _read_commands(ws, memory_id)
    alone = [_run(c) for c in commands]
    assert all(code == 0 for code, _ in alone), alone
    assert '"denominator"' in alone[0][1] and "retrieval" in alone[0][1]
    assert "write" in alone[2][1] and "run B run1 against run A run0" in alone[3][1]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from memory_engine.cli import main; main()", "collect", "-w", str(ws), "--port", "0"],
        env=CHILD_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (o := find_owner(ws)) is None or o.pid != proc.pid:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.1)
        with pytest.raises(WarehouseError, match="lock"):  # the file really is held: no local open
            Warehouse(ws / "warehouse.duckdb", read_only=True, lock_timeout_s=0.2)
        beside = [_run(c) for c in commands]
        assert beside == alone  # same exit codes, same figures, same text (before: exit 2, the lock)
        # the served side reads only: no write, no second statement, no other token
        remote = owner_reader(ws)
        assert isinstance(remote, RemoteWarehouse)
        n = remote.count_spans()
        assert n > 0
        for bad in ("DELETE FROM spans", "SELECT 1; DROP TABLE spans", "COPY spans TO 'x.csv'", "PRAGMA version"):
            with pytest.raises(WarehouseError, match="only one SELECT"):
                remote.fetchall(bad)
        with pytest.raises(WarehouseError, match="read-only"):
            remote.execute("DELETE FROM spans")
        assert remote.count_spans() == n
        info = find_owner(ws)
        assert info is not None and info.read_url
        r = httpx.post(f"{info.read_url}/warehouse/query", content=pickle.dumps(("SELECT 1", None)),
                       headers={TOKEN_HEADER: "wrong"})  # fmt: skip
        assert r.status_code == 403
        remote.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert [_run(c) for c in commands] == alone  # the owner is gone: the file again


def test_held_by_a_process_that_serves_no_reads_gives_a_read_hint(tmp_path, monkeypatch, capsys):
    from memory_engine.cli import main

    ws = tmp_path / "ws"
    Warehouse(ws / "warehouse.duckdb").close()
    # wait 0.3 s instead of 10 s for the lock the holder never releases
    monkeypatch.setattr(Warehouse.__init__, "__kwdefaults__", {**Warehouse.__init__.__kwdefaults__, "lock_timeout_s": 0.3})
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from memory_engine.observability.warehouse import Warehouse; "
         f"wh = Warehouse({str(ws / 'warehouse.duckdb')!r}); print('held', flush=True); time.sleep(60)"],
        env=CHILD_ENV, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out = _run(["compare", "--set", f"workspace={ws}"])
        assert code == 2 and READ_LOCK_HINT in out and "send spans" not in out, out
        for args in (["metrics", "-w", str(ws)], ["timeline", "m1", "-w", str(ws)]):
            monkeypatch.setattr(sys, "argv", ["memwb", *args])
            with pytest.raises(SystemExit) as exc:
                main()
            err = capsys.readouterr().err
            assert exc.value.code == 2 and "lock" in err, err
            assert f"hint: {READ_LOCK_HINT}" in err and "send spans" not in err, err
    finally:
        holder.kill()
        holder.wait(10)
