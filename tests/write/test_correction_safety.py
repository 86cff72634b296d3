"""Issue 16 failure class 9: a correction never archives what it does not name.

Replays the adversarial dev suite ``eval_sets/correction_safety_outside.yaml`` (53 cases, half
Chinese or mixed) through the real write pipeline (qdrant-edge, bundled e5), one fresh engine per
case, and checks each correction event's write result, not only what a query finds afterwards:

* ``ordinary`` cases: a correction or update word in its ordinary sense (emphasis, someone else's
  change, a story, a question, reported speech, a hypothetical or future change): the older memory
  of the same speaker is neither archived nor linked (a link ranks it below);
* ``retire`` controls: a correction that names the old memory and says it changed archives
  exactly that memory, with evidence (rule and shared terms), undoable;
* ``link`` controls: a contrast that restates only the value ('4pm, not 3pm') links the older
  memory (``metadata._corrects``) and archives nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_engine.evaluation.suite import load_suite

pytestmark = pytest.mark.integration

SUITE = load_suite(Path(__file__).resolve().parents[2] / "eval_sets" / "correction_safety_outside.yaml")
CASES = {c.id: c for c in SUITE.cases}


def _kind(case) -> str:
    (kind,) = [t for t in case.tags if t in ("ordinary", "retire", "link")]
    return kind


def _replay(engine, case):
    ids: dict[str, str] = {}
    results = {}
    for ev in case.events:
        r = engine.add(ev.text, user_id=ev.user, tenant_id=ev.tenant, session_id=ev.session, role=ev.role,
                       metadata=ev.metadata, now=ev.at)
        assert r.outcome != "rejected", (case.id, ev.label, r)
        ids[ev.label] = r.memory_id
        results[ev.label] = r
    return ids, results


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_correction_archives_only_what_it_names(engine, case_id):
    case = CASES[case_id]
    kind = _kind(case)
    ids, results = _replay(engine, case)
    label_of = {v: k for k, v in ids.items()}
    new = results["m_new"]
    archived = sorted(label_of.get(i, i) for i in new.superseded_ids)
    links = [e for e in new.evidence if e.get("rule") == "corrects"]
    user, tenant = case.events[0].user, case.events[0].tenant
    status = engine.memory(ids["m_old"], user_id=user, tenant_id=tenant).status.value
    if kind == "ordinary":
        assert archived == [] and links == [] and status == "current", (new.superseded_ids, new.evidence)
    elif kind == "link":
        assert archived == [] and status == "current", new.evidence
        assert [e["id"] for e in links] == [ids["m_old"]] and links[0]["archived"] is False
    else:
        assert archived == ["m_old"], new.evidence
        (ev,) = [e for e in new.evidence if e.get("id") == ids["m_old"]]
        assert ev["rule"] and ev.get("shared_terms"), ev  # the explanation a reviewer sees
        assert ev["basis"] in ("negation", "restatement", "replaced") and ev["span"] and 0 < ev["restated"] <= 1, ev
        # and it is undoable, like a forget instruction
        later = case.queries[0].at
        assert engine.undo_forget([ids["m_old"]], user_id=user, tenant_id=tenant, now=later) == [ids["m_old"]]
    # the distractors of the same speaker are never touched
    for lab, mid in ids.items():
        if lab.startswith("m_other"):
            assert engine.memory(mid, user_id=user, tenant_id=tenant).status.value == "current", lab


def test_the_restated_share_is_configuration(make_engine, t0):
    """'更正一下，孩子已经升四年级了' restates 0.2 of '孩子喜欢看科普类的书' (eval_sets/conflict_update
    cu-child-grade-zh archived it at 2cc49ae): nothing is archived at the default share, the older
    behaviour returns at write.supersede_restated_share = 0."""
    from datetime import timedelta

    for share, archived in ((None, False), (0.0, True)):
        eng = make_engine({"write.supersede_restated_share": share} if share is not None else None)
        grade = eng.add("孩子在读三年级", user_id="u", now=t0).memory_id
        # (a memory naming nothing: one with a name, '科普' / '恐龙', also keeps it, see test_reported_change_link)
        books = eng.add("孩子喜欢看绘本，尤其是动物的", user_id="u", now=t0 + timedelta(minutes=1)).memory_id
        r = eng.add("更正一下，孩子已经升四年级了", user_id="u", now=t0 + timedelta(days=30))
        assert (books in r.superseded_ids) is archived, (share, r.evidence)
        assert grade in r.superseded_ids, r.evidence  # the grade it restates is retired either way


#: phrasings written after the change above, as a check that it holds beyond the suite (6 of the 12
#: ordinary ones archived at 2cc49ae): (older memory, new text, whether it retires the older memory)
HELD_OUT = [
 (["I work at the café downtown on weekends"], "My roommate no longer works at the café downtown", False),
 (["I love hiking on Saturdays with my running club"], "If it rains tomorrow we'll cancel the hike and go to the museum instead", False),
 (["我中午一般在公司食堂吃饭"], "公司食堂改成了自助餐", False),
 (["我很喜欢吃辣"], "我妈不再让我吃辣了", False),
 (["I buy my bread at the corner bakery"], "Even though the store changed to new owners, I still buy my bread there", False),
 (["我周末一般去图书馆看书"], "图书馆已经不开放周末了吗？", False),
 (["I really enjoy the jazz bar on Elm street"], "My friend told me the jazz bar on Elm street no longer has live music", False),
 (["我每天骑共享单车上班"], "要是地铁修到我家门口，我就不再骑车上班了", False),
 (["I love my Kindle, I read on it every night"], "My wife switched to reading paper books again, she says screens hurt her eyes", False),
 (["我儿子在学校踢足球"], "我儿子的同学不再踢足球了，改打篮球", False),
 (["I drink oat milk in my coffee"], "When I visit my parents I don't drink oat milk, they only have cow's milk", False),
 (["我喜欢在家附近的咖啡馆工作"], "其实是因为那家咖啡馆离家近，我才喜欢去", False),
 (["At work we use Jira for project management"], "We switched to Linear for project management at work last month", True),
 (["我经常熬夜到两点"], "我现在不再熬夜了，每天十点就睡", True),
 (["My favourite restaurant is Nopa"], "Nopa is no longer my favourite restaurant since they changed the chef", True),
 (["我每周二去上瑜伽课"], "瑜伽课改成每周三了", True),
 (["I take the 8:15 bus to work"], "I don't take the bus to work anymore, I cycle now", True),
]


@pytest.mark.parametrize("olds,new,retires", HELD_OUT, ids=[f"held-out-{i}" for i in range(len(HELD_OUT))])
def test_held_out_phrasings(engine, t0, olds, new, retires):
    from datetime import timedelta

    old = [engine.add(t, user_id="u", now=t0 + timedelta(minutes=k)).memory_id for k, t in enumerate(olds)][0]
    r = engine.add(new, user_id="u", now=t0 + timedelta(days=2))
    assert (old in r.superseded_ids) is retires, r.evidence
    assert (engine.memory(old, user_id="u").status.value == "current") is not retires
