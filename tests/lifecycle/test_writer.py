"""Async writer: one worker per user, batching, back-pressure, retry, dead letters, a 10,000-add storm."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from memory_engine.errors import StoreError, ValidationError
from memory_engine.lifecycle.writer import (
    AsyncWriter,
    WriterBackpressure,
    WriteRequest,
    ingest_events,
    replay_dead_letters,
)
from memory_engine.models import WriteResult
from memory_engine.store.base import StoreFilter

TEMPLATES = [
    "Opened support ticket about the {} invoice", "Checked the delivery status of the {} parcel",
    "Asked about the refund for the {} order", "Reviewed the {} subscription plan",
    "Compared prices of the {} headphones", "Changed the shipping address for the {} package",
    "Rated the {} restaurant four stars", "Booked a table at the {} cafe",
]
COLOURS = ["red", "blue", "green", "black", "white"]


@pytest.mark.integration
@pytest.mark.slow  # measured 5-15 s on 2 shared cores; still runs in make test
def test_write_storm_of_10000_adds_for_one_user_loses_and_duplicates_nothing(eng, tmp_path, day):
    """10,000 adds for one user through the async writer in ``events`` mode (the
    batched event-log path: one embedding call and one upsert per batch). Texts
    repeat across 40 distinct sentences so the test embeds 40 texts, not 10,000;
    every add is still its own record, told apart by ``metadata.seq``."""
    texts = [t.format(c) for t in TEMPLATES for c in COLOURS]
    done: list[tuple[str, WriteResult]] = []
    lock = threading.Lock()

    def on_result(req, res):
        with lock:
            done.append((req.request_id, res))

    n = 10_000
    w = AsyncWriter(eng, mode="events", batch_size=500, max_queue=2000, put_timeout_s=None,
                    dead_letter_path=tmp_path / "dl.jsonl", on_result=on_result)
    rids = []
    for i in range(n):
        rids.append(w.submit(texts[i % len(texts)], user_id="storm", metadata={"seq": i}, now=day(0)))
        if i == 3000:
            # retrieval is served while the queue is still full of writes
            res = eng.retrieve("refund for the red order", user_id="storm", now=day(0))
            assert not res.degraded and w.stats().queued > 0
    assert w.close(timeout=300)
    st = w.stats()
    assert (st.submitted, st.applied, st.dead_lettered, st.queued) == (n, n, 0, 0)
    assert not (tmp_path / "dl.jsonl").exists()
    assert len(rids) == len(set(rids)) == n and Counter(r for r, _ in done) == Counter(rids)
    rows = eng.store.scroll(StoreFilter(tenant_id="default", user_id="storm", statuses=None, include_archived=True))
    assert len(rows) == n
    seqs = Counter(p.payload["metadata"]["seq"] for p in rows)
    assert set(seqs) == set(range(n)) and max(seqs.values()) == 1
    assert {p.payload["metadata"]["_request_id"] for p in rows} == set(rids)
    assert {res.memory_id for _, res in done} == {p.id for p in rows}


@pytest.mark.integration
def test_pipeline_mode_runs_the_full_write_pipeline_per_user_in_order(eng, tmp_path, day):
    got: dict[str, WriteResult] = {}
    w = AsyncWriter(eng, batch_size=4, dead_letter_path=tmp_path / "dl.jsonl",
                    on_result=lambda req, res: got.__setitem__(req.request_id, res))
    a1 = w.submit("I like jasmine tea", user_id="a", now=day(0))
    a2 = w.submit("thanks!", user_id="a", now=day(0))
    a3 = w.submit("I like jasmine tea", user_id="a", now=day(1))  # same user, later: dedup merges
    a4 = w.submit("I don't like jasmine tea anymore, switch to oolong", user_id="a", now=day(2))  # supersedes
    b1 = w.submit("I like jasmine tea", user_id="b", now=day(0))
    with pytest.raises(ValidationError):
        w.submit("no owner", user_id="")
    with pytest.raises(ValidationError):
        w.submit("x", user_id="a", memory_type="bogus")
    assert w.close(timeout=60)
    assert got[a1].outcome == "stored" and got[a2].outcome == "rejected" and got[a2].reason == "chit_chat"
    assert got[a3].outcome == "merged" and got[a3].memory_id == got[a1].memory_id
    assert got[a4].outcome == "stored" and got[a1].memory_id in got[a4].superseded_ids
    assert got[b1].outcome == "stored" and got[b1].memory_id != got[a1].memory_id
    assert w.stats().workers <= 2
    with pytest.raises(Exception, match="closed"):
        w.submit("late", user_id="a")


@pytest.mark.unit
def test_backpressure_when_a_user_queue_is_full(tmp_path):
    gate = threading.Event()

    class Eng:  # the writer only needs config.workspace here: the apply function is supplied
        class config:  # noqa: N801
            workspace = str(tmp_path)

    def slow_apply(eng, reqs):
        gate.wait(10)
        return [WriteResult("stored", r.request_id) for r in reqs]

    w = AsyncWriter(Eng(), batch_size=1, max_queue=2, put_timeout_s=0.05, apply=slow_apply)
    w.submit("one", user_id="u")  # taken by the worker, blocked in apply
    import time

    for _ in range(100):
        if w.stats().queued == 1 and w._workers[("default", "u")].queue.empty():
            break
        time.sleep(0.01)
    w.submit("two", user_id="u")
    w.submit("three", user_id="u")
    with pytest.raises(WriterBackpressure):
        w.submit("four", user_id="u")
    w.submit("other user is not blocked", user_id="v")
    gate.set()
    assert w.close(timeout=10)
    st = w.stats()
    assert (st.submitted, st.applied, st.dead_lettered) == (4, 4, 0)


@pytest.mark.unit
def test_retry_with_backoff_then_success(tmp_path):
    calls = []

    class Eng:
        class config:  # noqa: N801
            workspace = str(tmp_path)

    def flaky(eng, reqs):
        calls.append(len(reqs))
        if len(calls) < 3:
            raise StoreError("transient")
        return [WriteResult("stored", r.request_id) for r in reqs]

    w = AsyncWriter(Eng(), max_attempts=4, backoff_s=0.001, backoff_max_s=0.01, apply=flaky)
    w.submit("x", user_id="u")
    assert w.close(timeout=10)
    st = w.stats()
    assert (st.applied, st.retried, st.dead_lettered) == (1, 2, 0) and calls == [1, 1, 1]
    assert not w.dead_letter_path.exists()


@pytest.mark.integration
def test_failed_writes_go_to_the_dead_letter_file_and_replay(make_engine, tmp_path, day):
    broken = make_engine()
    broken.store.close()  # a real store failure: every call now raises StoreError
    dl = tmp_path / "dead.jsonl"
    w = AsyncWriter(broken, mode="events", max_attempts=3, backoff_s=0.001, backoff_max_s=0.01, dead_letter_path=dl)
    rid1 = w.submit("Paid invoice INV-2024-001 by card", user_id="u", now=day(0))
    rid2 = w.submit("Asked for the delivery date of order A55555", user_id="u", now=day(0))
    assert w.close(timeout=30)
    st = w.stats()
    # 3 attempts = 2 retries per batch; the two submits form one batch or two, depending on
    # whether the worker took the first before the second arrived
    assert (st.applied, st.dead_lettered) == (0, 2) and st.retried in (2, 4)
    entries = [json.loads(x) for x in dl.read_text().splitlines()]
    assert [e["request"]["request_id"] for e in entries] == [rid1, rid2]
    assert entries[0]["attempts"] == 3 and "StoreError" in entries[0]["error"]
    with dl.open("a") as f:
        f.write("{not json\n")

    healthy = make_engine()
    rep = replay_dead_letters(healthy, dl, mode="events")
    assert (rep.replayed, rep.failed, rep.malformed_lines) == (2, 0, (3,))
    assert dl.read_text() == "{not json\n"  # only the malformed line is kept
    ids = {r.memory_id for r in rep.results}
    assert ids == {p.id for p in healthy.store.scroll(StoreFilter(tenant_id="default", user_id="u"))}
    # replaying the same request again rewrites the same record: no duplicate
    req = WriteRequest.from_json(entries[0]["request"])
    ingest_events(healthy, [req])
    assert healthy.store.count(StoreFilter(tenant_id="default", user_id="u")) == 2
    assert replay_dead_letters(healthy, tmp_path / "missing.jsonl").replayed == 0
