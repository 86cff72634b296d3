"""Forget requests the recogniser missed (issue 16, failure class 6; session 20 red-team round 4): each was stored
as one more memory that repeated the matter ('我不想让你记得我怀孕的事' then came back for a weekend-plans question).
Each now archives exactly the memory it names and keeps the others; reports about someone else stay statements."""

import pytest

from memory_engine.write.intents import forget_target


@pytest.mark.parametrize("text,target", [
    ("scrap what I said about my ex", "my ex"),
    ("nvm about the ex stuff, pretend I never said it", "ex"),
    ("你就当我没提过我离婚的事", "我离婚"),
    ("关于我前男友的那些，都删掉吧", "我前男友"),
    ("以后别提我体重了，把那条删掉", "我体重"),
    ("那条关于我前任的，别留着了", "我前任"),
    ("我不想让你记得我怀孕的事", "我怀孕"),
    ("我不希望你记住我的住址", "我的住址"),
])
def test_forget_phrasings(text, target):
    assert forget_target(text) == target


@pytest.mark.parametrize("text", ["他当我没说过这话一样", "我不想让你担心", "I scrapped the old plan", "I never said that"])
def test_reports_and_wishes_are_no_forget(text):
    assert forget_target(text) is None


@pytest.mark.integration
@pytest.mark.parametrize("memories,ask,target", [
    (["我怀孕三个月了，还没告诉领导", "我每天骑车上班"], "我不想让你记得我怀孕的事", 0),
    (["我每天骑车上班", "我住在杭州西湖区文三路"], "我不希望你记住我的住址", 1),
    (["I play tennis on Sundays", "My ex Jake still texts me sometimes"], "scrap what I said about my ex", 1),
])
def test_each_forget_archives_what_it_names(forget_scene, memories, ask, target):
    forget_scene(memories, ask, target)
