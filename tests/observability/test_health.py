"""Health score: pure functions, hand-computed components, penalties and alerts (SEED_DIGEST 6)."""

from __future__ import annotations

import pytest

from memory_engine.errors import ValidationError
from memory_engine.observability.health import HealthWeights, health_report

pytestmark = pytest.mark.unit
DAY = 86_400.0
NOW = 1_750_000_000.0


def _facts():
    return [
        {"user": "u1", "key": "city", "value": "Lyon", "updated_at": NOW - 1 * DAY},
        {"user": "u1", "key": "name", "value": "Ana", "updated_at": NOW - 10 * DAY},  # stale
        {"user": "u2", "key": "city", "value": "Paris", "updated_at": NOW - 3 * DAY},
        {"user": "u2", "key": "name", "value": "", "updated_at": NOW - 2 * DAY},  # empty: not filled
    ]


def _mem(user="u1", tenant="t", **kw):
    base = {"user_id": user, "tenant_id": tenant, "memory_type": "semantic", "status": "current",
            "content": "", "embedding_version": "e5:1", "fact_key": None}  # fmt: skip
    return base | kw


def test_components_hand_computed():
    mems = [
        _mem(content="Ana lives in Lyon", fact_key="city"),                # agrees with u1 city
        _mem(user="u2", content="moved to Berlin last year", fact_key="city"),  # contradicts u2 city=Paris
        _mem(user="u2", content="Paris", fact_key="city", status="deprecated"),  # not current: ignored
    ]
    r = health_report(mems, _facts(), now=NOW, key_attributes=("city", "name", "language"))
    f, c, k = (r.component(n) for n in ("freshness", "coverage", "consistency"))
    assert (f.numerator, f.denominator, f.share, f.alert) == (1, 4, 0.25, True)       # 25% > 15%
    assert (c.numerator, c.denominator) == (3, 6) and c.alert                          # u1 city,name + u2 city
    assert (k.numerator, k.denominator, k.share) == (1, 4, 0.25)
    expected = 100 * (0.75 + 0.5 + 0.75) / 3
    assert r.composite == pytest.approx(expected)
    assert r.alerts[0].startswith("composite") and any(a.startswith("freshness") for a in r.alerts)


def test_penalties_weights_and_healthy_store():
    facts = [{"user": "u1", "key": "city", "value": "Lyon", "updated_at": NOW}]
    good = health_report([_mem(content="in Lyon", fact_key="city")], facts, now=NOW, key_attributes=("city",))
    assert good.composite == 100.0 and good.alerts == () and good.penalties == ()
    mems = [_mem(content="in Lyon", fact_key="city"), _mem(user="", tenant="t"), _mem(embedding_version="minilm:1")]
    r = health_report(mems, facts, now=NOW, key_attributes=("city",), ownerless_points=5, mixed_embedding_points=10)
    assert {p.name: p.points for p in r.penalties} == {"ownerless": 5, "mixed_embedding_versions": 10}
    assert r.composite == pytest.approx(85.0)
    assert not r.alerts[0].startswith("composite")  # 85 >= 80
    weighted = health_report([], _facts(), now=NOW, key_attributes=(), weights=HealthWeights(1, 0, 0))
    assert weighted.composite == pytest.approx(75.0)  # freshness only; coverage has no data
    assert weighted.component("coverage").score is None


def test_no_data_and_bad_weights():
    r = health_report([], [], now=NOW)
    assert r.composite is None and all(c.score is None for c in r.components)
    with pytest.raises(ValidationError):
        health_report([], [], now=NOW, weights=HealthWeights(-1, 1, 1))
