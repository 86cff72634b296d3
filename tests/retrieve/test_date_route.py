"""The date route (retrieve/routes.py DateRoute): a question naming a day finds that day's memories even when the
dense and keyword routes' best rows of all time hold none of them. Real embedder, real engine."""

from datetime import datetime, timedelta, timezone

import pytest

TZ = timezone(timedelta(hours=8))


@pytest.mark.integration
@pytest.mark.parametrize("limit", [10, 0])
def test_the_day_named_brings_its_memories(make_engine, limit):
    # route_limit 1: the dense and keyword routes each bring only their best row, which is of another day
    engine = make_engine({"retrieval.date_route_limit": limit, "retrieval.route_limit": 1, "retrieval.recent_limit": 0})
    day = datetime(2026, 7, 31, 14, 0, tzinfo=TZ)
    baked = engine.add("Dropped off the cookies I baked at the homeless shelter", user_id="u", now=day).memory_id
    for i, text in enumerate(["Logged my community service hours for the school club",
                              "Signed up for community service at the library",
                              "Community service day at the park was rained out"]):
        engine.add(text, user_id="u", now=day - timedelta(days=10 + 5 * i))
    got = engine.retrieve("What community service did I do on 31 July?", user_id="u",
                          now=day + timedelta(days=20), top_k=4).ids
    assert (baked in got) == (limit > 0)
    # no date in the query: the route adds nothing
    assert baked not in engine.retrieve("What community service did I do?", user_id="u",
                                        now=day + timedelta(days=20), top_k=4).ids


@pytest.mark.integration
def test_a_month_is_left_to_the_other_routes(make_engine):
    engine = make_engine({"retrieval.route_limit": 1, "retrieval.recent_limit": 0, "retrieval.date_route_max_days": 7})
    day = datetime(2026, 7, 31, 14, 0, tzinfo=TZ)
    baked = engine.add("Dropped off the cookies I baked at the homeless shelter", user_id="u", now=day).memory_id
    engine.add("Logged my community service hours for the school club", user_id="u", now=day - timedelta(days=40))
    res = engine.retrieve("What community service did I do in July?", user_id="u", now=day + timedelta(days=20),
                          top_k=4, explain=True)
    assert all("date" not in e.route_ranks for e in res.explanations) and baked not in res.ids
