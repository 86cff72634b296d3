"""An exception for one occasion is no forget request (issue 16, failure class 6; data loss found by the session 20
red-team): 'forget about my diet tonight, I want the best pizza in town' archived 'I'm on a keto diet', and 'ignore
my budget this time, show me the best laptops' archived the budget; 'let's forget about work for a bit and plan
something fun' was dropped as a forget that matched nothing. A time bounding the request to one occasion ('tonight',
'this time', 'for a bit') makes it an override of a standing preference, stored as what the user said; a forget
of what was said on a day ('forget what I said today about my ex') is still a forget."""

from datetime import timedelta

import pytest

from memory_engine.write.intents import forget_target


@pytest.mark.parametrize("text", [
    "forget about my diet tonight, I want the best pizza in town",
    "ignore my budget this time, show me the best laptops",
    "let's forget about work for a bit and plan something fun",
    "just this once forget my allergy list, I'll check the menu myself",
])
def test_one_occasion_is_no_forget(text):
    assert forget_target(text) is None


@pytest.mark.parametrize("text,target", [
    ("forget about my diet", "my diet"), ("please forget my address", "my address"),
    ("ignore what I said about my budget", "my budget"),
])
def test_forgets_without_an_occasion_still_name_their_target(text, target):
    assert forget_target(text) == target


@pytest.mark.integration
@pytest.mark.parametrize("standing,override", [
    ("I'm on a keto diet", "forget about my diet tonight, I want the best pizza in town"),
    ("I have a budget of $1000 for a laptop", "ignore my budget this time, show me the best laptops"),
])
def test_the_standing_preference_survives_the_override(engine, t0, standing, override):
    kept = engine.add(standing, user_id="u", session_id="s1", now=t0).memory_id
    r = engine.add(override, user_id="u", session_id="s2", now=t0 + timedelta(days=2))
    assert r.outcome != "forgotten" and r.superseded_ids == ()
    assert engine.memory(kept, user_id="u").status.value == "current"
