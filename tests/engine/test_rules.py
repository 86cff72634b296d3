"""PII detectors, write rules, tokeniser and citation parsing against hand-checked values."""

import pytest

from memory_engine.config import WriteSection
from memory_engine.engine import parse_citations
from memory_engine.models import MemoryType
from memory_engine.text import (
    content_terms,
    identifiers,
    keyword_coverage,
    sparse_document,
    sparse_query,
    term_id,
)
from memory_engine.write import rules
from memory_engine.write.pii import cn_id_valid, luhn_valid, redact

pytestmark = pytest.mark.unit


def test_cn_id_checksum():
    # weights 7 9 10 5 8 4 2 1 6 3 7 9 10 5 8 4 2 over 11010119900307123 -> sum % 11 = 8 -> check char '3'
    assert cn_id_valid("110101199003071233")
    assert not cn_id_valid("110101199003071234")
    assert cn_id_valid("11010519491231002X")


def test_luhn():
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert luhn_valid("79927398713")


def test_redact_each_kind_and_keeps_ordinary_numbers():
    r = redact("身份证110101199003071233，卡号4111 1111 1111 1111，手机13812345678，邮箱 a.b@example.com，密码是hunter2")
    assert "110101199003071233" not in r.text and "[ID_NUMBER]" in r.text
    assert "4111" not in r.text and "[BANK_CARD]" in r.text
    assert "13812345678" not in r.text and "[PHONE]" in r.text
    assert "a.b@example.com" not in r.text and "[EMAIL]" in r.text
    assert "hunter2" not in r.text and "[PASSWORD]" in r.text
    assert set(r.kinds) == {"ID_NUMBER", "BANK_CARD", "PHONE", "EMAIL", "PASSWORD"}
    keep = redact("order 4111111111111112 costs 2999 yuan, invalid id 110101199003071234")
    assert keep.text == "order 4111111111111112 costs 2999 yuan, invalid id 110101199003071234"
    assert keep.kinds == ()


@pytest.mark.parametrize("text,reason", [
    ("ok", "chit_chat"), ("Thanks!", "chit_chat"), ("好的", "chit_chat"), ("哈哈哈", "chit_chat"),
    ("check today's weather", "one_off_command"), ("帮我查一下今天天气", "one_off_command"),
    ("set a timer for 5 minutes", "one_off_command"), ("   ", "empty"),
    ("I prefer aisle seats", None), ("默认快递用顺丰", None),
])
def test_reject_reason(text, reason):
    assert rules.reject_reason(text) == reason


def test_importance_seed_000_rules():
    cfg = WriteSection()
    assert rules.importance("我喜欢绿茶", rules.signals("我喜欢绿茶"), cfg) == pytest.approx(0.8)  # base + preference
    assert rules.importance("We decided to use Postgres", rules.signals("We decided to use Postgres"), cfg) == pytest.approx(0.7)
    assert rules.importance("hm", rules.signals("hm"), cfg) == pytest.approx(0.2)  # short
    text = "maybe I like sushi?"
    assert rules.importance(text, rules.signals(text), cfg) == pytest.approx(0.6)  # +0.3 pref -0.2 uncertain
    assert rules.importance("x", rules.signals("x"), cfg, has_fact=True) == pytest.approx(0.5)  # +0.3 -0.3
    assert rules.importance("我不喜欢也不讨厌, 我决定确认了 订单A12345", rules.signals("我不喜欢也不讨厌, 我决定确认了 订单A12345"), cfg) == 1.0


def test_classify():
    s = rules.signals("别给我推游戏相关的内容")
    assert rules.classify(s, False, None) == MemoryType.SEMANTIC
    assert rules.is_constraint("别给我推游戏相关的内容", s)
    assert rules.classify(rules.signals("也许我喜欢日料"), False, None) == MemoryType.EPISODIC
    assert rules.classify(rules.signals("x"), True, None) == MemoryType.FACT
    assert rules.classify(rules.signals("x"), False, MemoryType.PROCEDURAL) == MemoryType.PROCEDURAL


def test_identifiers_kept_whole():
    assert identifiers("order ABC123456 on v2.3.1, error E1042, 尾号8890") == ["abc123456", "v2.3.1", "e1042", "尾号8890"]
    terms = content_terms("我的订单ABC123456还没发货")
    assert "abc123456" in terms and "订单" in terms and "的" not in terms


def test_tokens_en_stemmed_and_stopwords():
    assert content_terms("The flights and my seat preference") == frozenset({"flight", "seat", "prefer"})


def test_keyword_coverage():
    q = frozenset({"blue", "headphon", "price"})
    assert keyword_coverage(q, ["blue", "headphon", "jabra"]) == pytest.approx(2 / 3)
    assert keyword_coverage(frozenset(), ["x"]) == 0.0


def test_sparse_vectors_bm25_tf():
    doc = sparse_document(["a", "a", "b"], k1=1.2, b=0.75, avg_len=3)
    norm = 1.2  # k1*(1-b+b*3/3)
    weights = dict(zip(doc.indices, doc.values, strict=True))
    assert weights[term_id("a")] == pytest.approx(2 * 2.2 / (2 + norm))
    assert weights[term_id("b")] == pytest.approx(1 * 2.2 / (1 + norm))
    q = sparse_query(["a", "a", "b"])
    assert len(q.indices) == 2 and set(q.values) == {1.0}


def test_parse_citations():
    text = "Use SF [mem-00000000000000ab] and [mem-00000000000000cd]; again [mem-00000000000000ab]. [mem-xyz]"
    assert parse_citations(text) == ["00000000000000ab", "00000000000000cd"]
    assert parse_citations("") == []


# one sample text per shared change marker (rules.CHANGE_MARKERS_ZH / _EN), in list order
_CHANGE_SAMPLES_ZH = ("更正一下", "纠正一下", "改为周三", "改成周三", "换成咖啡", "改用飞书", "其实是周三", "应该是周三", "我搞错了",
                      "我说错了", "我记错了", "弄错了", "写错了", "我不再吃肉")
_CHANGE_SAMPLES_EN = ("correction: it's Tuesday", "my mistake, it's Tuesday", "i meant Tuesday", "I switched to tea",
                      "I no longer eat meat", "vegan? not anymore", "scratch that, Tuesday", "that's wrong, Tuesday",
                      "I was wrong about Tuesday", "sorry I got that wrong, it's Tuesday", "I misspoke, Tuesday",
                      "I was mistaken, it's Tuesday", "I mixed them up, Tuesday")


def test_correction_markers_have_one_source():
    """Both correction patterns are built from the one list of change markers (write/rules.py): a marker
    added there counts for the write rules' CORRECTION and for intents.EXPLICIT_CORRECTION alike."""
    from memory_engine.write.intents import EXPLICIT_CORRECTION, correction_strength

    assert len(_CHANGE_SAMPLES_ZH) == len(rules.CHANGE_MARKERS_ZH)
    assert len(_CHANGE_SAMPLES_EN) == len(rules.CHANGE_MARKERS_EN)
    for rx in (rules.CORRECTION, EXPLICIT_CORRECTION):
        assert "|".join(rules.CHANGE_MARKERS_ZH) in rx.pattern and "|".join(rules.CHANGE_MARKERS_EN) in rx.pattern
    for text in (*_CHANGE_SAMPLES_ZH, *_CHANGE_SAMPLES_EN):
        assert rules.CORRECTION.search(text) and EXPLICIT_CORRECTION.search(text), text
        assert correction_strength(text, True) == "explicit", text
    # the ordinary-language markers stay weak: only the write rules count them
    for text in ("不要放香菜", "actually it was fun", "cancel my order", "don't forget"):
        assert rules.CORRECTION.search(text) and not EXPLICIT_CORRECTION.search(text), text
        assert correction_strength(text, True) == "weak", text
