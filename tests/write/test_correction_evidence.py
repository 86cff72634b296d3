"""Unit tests of the evidence a correction must show before it archives (write/correction.py):
the sentence and clause around the marker, the subject before it, conditions, reported speech and
the share of an older memory a correction restates."""

import pytest

from memory_engine.text import content_terms
from memory_engine.write.correction import (
    CONDITION,
    META_MARKER,
    REPORTED,
    marker_context,
    restated_share,
    subject_terms,
)
from memory_engine.write.rules import MARKER_TERMS

pytestmark = pytest.mark.unit


def test_marker_context_is_the_markers_sentence_and_clause():
    text = "Great news. So, my brother switched to Android"
    sentence, said, clause = marker_context(text, text.index("switched"))
    assert sentence.strip() == "So, my brother switched to Android" and said.strip() == "So, my brother"
    assert clause.strip() == "my brother"
    zh = "天气不错。隔壁组改用飞书管理项目了"
    assert marker_context(zh, zh.index("改用"))[2] == "隔壁组"


@pytest.mark.parametrize("before,subject", [
    ("My brother ", {"brother"}), ("隔壁组", {"隔壁", "组"}), ("I ", set()), ("以后", set()),
    ("From now on I ", set()), ("我现在", set()), ("我同事", {"同事"}), ("我儿子的同学", {"同学"}),
    ("My neighbour's son ", {"son"}), ("我女儿的钢琴课", {"钢琴", "钢琴课"}),
])
def test_subject_terms_leave_out_the_speaker_and_time_words(before, subject):
    assert subject_terms(before, content_terms) == subject


@pytest.mark.parametrize("sentence,conditional", [
    ("If I moved to London I would no longer have to commute", True),
    ("Once the new bridge opens I will no longer need the ferry", True),
    ("I don't love cooking when I'm exhausted", True),
    ("如果我搬到滨江，就不再需要通勤了", True), ("累的时候不想做饭", True),
    ("I no longer live in Munich", False), ("吉他课改成每周四晚上了", False),
])
def test_conditions_and_hypotheticals(sentence, conditional):
    assert (CONDITION.search(sentence) is not None) is conditional


@pytest.mark.parametrize("before,reported", [
    ("My doctor told me I shouldn't drink coffee ", True), ("My mom said I should ", True),
    ("我同事说 Notion ", True), ("医生让我以后", True), ("我说过我", False), ("I ", False), ("我现在", False),
])
def test_someone_elses_words(before, reported):
    assert (REPORTED.search(before) is not None) is reported


def test_meta_markers_negate_no_statement():
    assert META_MARKER.sub(" ", "不是我不想去同学聚会，而是这周实在太忙了").strip() == "这周实在太忙了"
    assert META_MARKER.sub(" ", "不对，我们走错路了").strip() == "，我们走错路了"
    assert "no longer" in META_MARKER.sub(" ", "I no longer live in Munich")


def test_restated_share_counts_each_older_term_once():
    new = set(content_terms("钢琴课决定取消了，以后不再上了"))
    # 每周 / 周六 / 每周六 count once; the single characters 上 / 去 not at all
    assert restated_share(new, set(content_terms("我喜欢每周六去上钢琴课")) - MARKER_TERMS) == pytest.approx(0.5)
    assert restated_share({"team", "week", "sync", "thursday"},
                          {"team", "week", "sync", "tuesday", "3pm"}) == pytest.approx(0.6)
    assert restated_share(set(content_terms("孩子已经升四年级了")), set(content_terms("孩子喜欢看科普类的书"))) < 0.5
    assert restated_share({"x"}, set()) == 1.0
