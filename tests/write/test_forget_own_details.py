"""Forget requests naming one of the speaker's own details (issue 16, failure class 6):
"please stop remembering where I work", "scratch the part about my ex", "don't want that
saved", "把我住址删掉" are requests (on 2cc49ae all four were stored as ordinary memories),
and a forget archives only the speaker's own detail, never a relative's on the same
subject (on 2cc49ae "forget my address" also archived "My parents' address is ..." and
"where I work" archived "my sister works at Google")."""

from datetime import timedelta

import pytest

from memory_engine.write.intents import forget_target


@pytest.mark.unit
@pytest.mark.parametrize("text,target", [
    ("please stop remembering where I work", "where I work"),
    ("could you stop keeping track of when I go to bed", "when I go to bed"),
    ("quit storing how much I earn", "how much I earn"),
    ("can you scratch the part about my ex? don't want that saved", "my ex"),
    ("scratch what I said about my salary", "my salary"),
    ("I don't want my address stored", "my address"),
    ("I don't want that remembered", ""),
    ("don't want you saving my address", "my address"),
    ("把我住址删掉吧", "我住址"),
    ("把我手机号删了", "我手机号"),
])
def test_requests_naming_own_details(text, target):
    assert forget_target(text) == target


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    "don't remember where I parked, ugh",  # a report: not addressed, not asked to stop
    "I don't want the cake saved",  # a wish about a thing, not about what was said
    "Scratch my name off the list",
    "把我电脑里的游戏删了",  # a place on a device, not a detail of the speaker
    "我把文件删了",
])
def test_statements_stay_statements(text):
    assert forget_target(text) is None


@pytest.mark.integration
@pytest.mark.parametrize("own,relative,ask", [
    ("I work at Stripe on the payments risk team", "my sister works at Google as a product designer",
     "please stop remembering where I work"),
    ("My address is 12 Elm Street, Apt 4", "My parents' address is 88 Oak Road", "forget my address"),
    ("我住在朝阳区望京西园三区", "我妈住在杭州西湖区", "把我住址删掉吧"),
])
def test_forget_keeps_a_relatives_detail(forget_scene, own, relative, ask):
    forget_scene([own, relative], ask, target=0, ask_at=timedelta(days=1))


@pytest.mark.integration
def test_forget_naming_a_relative_archives_only_that_relatives_detail(forget_scene):
    forget_scene(["My address is 12 Elm Street, Apt 4", "My parents' address is 88 Oak Road"],
                 "forget my parents' address", target=1, ask_at=timedelta(days=1))
