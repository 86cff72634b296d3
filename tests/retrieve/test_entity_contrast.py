"""Issue 16, class 3 (never-stored near misses): a question about an entity the memory does not name, where the
memory names another of the same kind in the same frame, is not answered by it (retrieve/contrast.py,
``retrieval.entity_mismatch``). The pure pair finder first (what is and is not a contrast), then a real
in-memory engine (bundled e5, qdrant-edge): the near miss returns nothing, the stored entity asked by its own name
is still found, and ``retrieval.entity_mismatch=1`` (off) brings the old behaviour back."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from memory_engine.config import RetrievalSection
from memory_engine.retrieve.contrast import contrasts


@pytest.mark.parametrize(("query", "memory", "pair"), [
    # one frame, two fillers: before a shared head, after a shared word
    ("when is my dentist appointment?", "vet appointment for the dog is next Thursday at 4", ("dentist", "vet")),
    ("what time are my violin lessons?", "piano lessons are Saturday mornings at 10", ("violin", "piano")),
    ("what does my friend Tom do for work?", "my friend Priya works as a nurse", ("Tom", "Priya")),
    ("我家狗狗一天喂几次来着？", "我家猫咪一天喂两次，早上湿粮晚上干粮", ("狗狗", "猫咪")),
    # one Chinese head, two modifiers (a noun + a one-character noun is one compound)
    ("儿子的游泳课是星期几？", "儿子的钢琴课在每周三下午四点半", ("游泳课", "钢琴课")),
    ("我的眼科医生叫什么名字", "我的牙医是协和口腔科的王医生", ("眼科", "口腔科")),
    # another person
    ("老王什么时候出差？", "同事小刘下周二去成都出差", ("老王", "小刘")),
    # a name after a preposition after the same noun (session 20 red-team: the Tokyo flight answered for Seoul)
    ("when's my flight to Seoul?", "My flight to Tokyo is on July 8, ANA, leaves at 10am", ("Seoul", "Tokyo")),
    ("when is dinner with Tom?", "Dinner with Priya is on Friday at 7", ("Tom", "Priya")),
    # a Chinese place after the same coverb (red-team round 5 N02: the Chengdu hotpot answered for Chongqing)
    ("我在重庆吃的那家火锅叫啥", "上次在成都出差吃了家特别好吃的火锅，叫小龙坎", ("重庆", "成都")),
])
def test_another_entity_of_the_same_kind(query, memory, pair):
    assert contrasts(query, memory) == pair


@pytest.mark.parametrize(("query", "memory"), [
    ("when's the vet appointment?", "vet appointment for the dog is next Thursday at 4"),  # the same entity
    ("钢琴课几点", "儿子的钢琴课在每周三下午四点半"),
    ("小刘去哪出差", "同事小刘下周二去成都出差"),
    ("when did I buy the concert tickets?", "booked the concert tickets for May 3rd"),  # a verb swapped: paraphrase
    ("do I like jazz?", "I love jazz, especially Coltrane"),
    ("我的车是什么颜色", "我的轿车是白色的"),  # the noun after a question word is asked: 白色 is the answer
    ("my sister's job?", "my sister Lena works as a lawyer in Denver"),  # a name is no job
    ("我孩子几岁", "我儿子今年七岁"),  # kinship is the relative mismatch's (孩子 covers 儿子)
    ("what's my dog called?", "my corgi Max is three now"),  # a kind and its member share no frame
    ("陶艺课是星期几", "每周四晚上去上陶艺课"),
    ("体检报告出来了吗", "上周做了体检，报告说血脂有点高"),
    ("how many times have I been to Japan?", "no, third time actually"),  # quantifiers and ordinals count
    ("Any good laptop deals this week?", "My budget for a new laptop is under 8000 yuan"),  # gradable adjectives
    ("what's my new role?", "new job starts Monday!! product designer at a fintech"),  # an adjective anchors nothing
    ("any hotel preferences I mentioned?", "I always want a hotel room on a high floor"),  # compound heads
    ("我哪天去医院复查", "我下周二要去协和复查甲状腺"),  # a verb anchors nothing: the hospital by its name
    ("我打算学什么语言？", "我打算报一个周末的日语班"),  # one-character nouns are cuts, not entities
    ("嗓子发炎了好痛，有啥药可以吃", "我对头孢类的药过敏，上次吃了浑身起疹子"),  # 子 is a suffix, no head
    ("头疼得厉害，吃片布洛芬可以吗？", "我现在每天吃华法林，医生交代过不能乱吃别的药"),  # drug names are no people
    ("尾号8809那张卡是干什么用的？", "尾号8809的建设银行卡只用来还房贷"),  # 张卡 is jieba's guess, no word
    ("有几个活动的规模超过了六百人呢？", "风俗徒步交友之旅的规模是二百人。"),  # numbers are no entities
    ("when's my flight to Tokyo?", "My flight to Tokyo is on July 8, ANA, leaves at 10am"),  # the same name
    ("when is my trip to Paris?", "I booked a flight to Paris and a hotel in Montmartre"),  # named elsewhere
    ("what time is my flight to work?", "My flight to Tokyo is on July 8"),  # a common noun fills no name's slot
    ("我在成都吃的那家火锅叫啥", "上次在成都出差吃了家特别好吃的火锅，叫小龙坎"),  # the same place
    ("我在四川的时候认识的朋友", "我在成都认识了小王"),  # a province and its capital (CC-CEDICT: 'capital of Sichuan')
])
def test_no_contrast(query, memory):
    assert contrasts(query, memory) is None


@pytest.mark.parametrize(("query", "memory"), [
    # an adjective-or-noun word in an adjective's suffix modifies: no entity ('dental' is the dentist's)
    ("where is my dentist's office now?", "the dental office moved to Pine Street"),
    ("when is my performance review?", "my annual review is in March"),
    # a hyphenated compound is of its last part's kind: an adjective, or a verb's participle
    ("how was the team meeting?", "the well-attended meeting ran late"),
    ("how was the team dinner?", "the not-so-formal dinner was fun"),
    # a verb's inflected form frames nothing: 'named' is no 'names'
    ("what were the puppies' names?", "we adopted a beagle named Rex"),
    # a closed compound whose part the memory says: 'hometown' and 'back home'
    ("where is my hometown museum?", "the science museum back home reopened"),
])
def test_morphology_is_no_contrast(query, memory):
    assert contrasts(query, memory) is None


def test_synonyms_of_one_dictionary_entry_are_one_entity():
    # 汽车 glosses both 'car' and 'automobile': the same thing in the same frame
    assert contrasts("when is the car service?", "automobile service booked at the garage") is None
    assert contrasts("when is the boat service?", "car service booked at the garage") == ("boat", "car")


def test_a_kind_and_its_member_are_one_thing():
    from memory_engine.retrieve.contrast import _zh_synonyms

    assert _zh_synonyms("轿车", "汽车") and _zh_synonyms("产品", "商品")  # a shared gloss, or one inside the other
    assert not _zh_synonyms("牙医", "兽医")


def test_the_speaker_is_a_person_the_memory_names():
    assert contrasts("老王什么时候出差？", "我下周二和小刘去成都出差", speaker="老王") is None


def test_entity_mismatch_must_be_a_weight():
    with pytest.raises(ValidationError):
        RetrievalSection(entity_mismatch=1.5)
    assert RetrievalSection().entity_mismatch < 1 - (1 - RetrievalSection().floor) ** 0.5  # alone it never clears the floor


NEAR = ["vet appointment for Biscuit is next Thursday at 4, need to bring his vaccination card",
        "piano lessons with Mrs. Alvarez are Saturday mornings at 10, she wants me doing scales daily",
        "my friend Priya works as a nurse at St Mary's, night shifts mostly",
        "我家猫咪一天喂两次，早上湿粮晚上干粮，别的时候不给吃",
        "儿子的钢琴课在每周三下午四点半，老师姓林",
        "同事小刘下周二去成都出差，要待三天"]
ASKED = ["when is my dentist appointment?", "what time are my violin lessons?", "what does my friend Tom do for work?",
         "我家狗狗一天喂几次来着？", "儿子的游泳课是星期几？", "老王什么时候出差？"]
OWN = ["when's the vet appointment?", "piano?", "where does Priya work?", "猫一天喂几顿", "钢琴课几点", "小刘去哪出差"]


def test_a_never_stored_entity_gets_nothing_and_the_stored_one_is_found(make_engine, t0):
    eng = make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False})
    ids = [eng.add(t, user_id="u", session_id=f"s{i}", now=t0 + timedelta(days=i)).memory_id for i, t in enumerate(NEAR)]
    later = t0 + timedelta(days=10)
    for q, mid in zip(ASKED, ids, strict=True):
        assert mid not in [h.memory_id for h in eng.retrieve(q, user_id="u", now=later).hits], q
    for q, mid in zip(OWN, ids, strict=True):
        assert [h.memory_id for h in eng.retrieve(q, user_id="u", top_k=1, now=later).hits] == [mid], q


def test_a_long_query_names_too_many_entities(make_engine, t0):
    """Past ``retrieval.entity_max_terms`` content terms a question names entities in passing: no discount."""
    long_q = "我家狗狗一天喂几次来着？最近搬家了，新房子在五楼，电梯老坏，每天爬楼梯累得不行，周末还要加班写报告"
    eng = make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False})
    cat = eng.add(NEAR[3], user_id="u", now=t0).memory_id
    later = t0 + timedelta(days=10)
    assert cat not in [h.memory_id for h in eng.retrieve(ASKED[3], user_id="u", now=later).hits]
    c = {e.memory_id: e for e in eng.retrieve(long_q, user_id="u", now=later, explain=True).explanations}[cat]
    off = make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False, "retrieval.entity_mismatch": 1.0})
    cat_off = off.add(NEAR[3], user_id="u", now=t0).memory_id
    c_off = {e.memory_id: e for e in off.retrieve(long_q, user_id="u", now=later, explain=True).explanations}[cat_off]
    assert c.relevance == pytest.approx(c_off.relevance)


def test_off_returns_the_near_miss(make_engine, t0):
    """The old behaviour, with the mismatch off: the vet and the cat answer for the dentist and the dog."""
    eng = make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False, "retrieval.entity_mismatch": 1.0})
    vet = eng.add(NEAR[0], user_id="u", now=t0).memory_id
    cat = eng.add(NEAR[3], user_id="u", now=t0 + timedelta(days=1)).memory_id
    later = t0 + timedelta(days=10)
    assert vet in [h.memory_id for h in eng.retrieve(ASKED[0], user_id="u", now=later).hits]
    assert cat in [h.memory_id for h in eng.retrieve(ASKED[3], user_id="u", now=later).hits]


def test_a_question_about_another_city_gets_nothing_whatever_its_category(make_engine, t0):
    """Red-team round 5 N02: '我在重庆吃的那家火锅叫啥' returned the Chengdu hotpot. The coverb frame finds the pair, and a
    question's category evidence (a food memory) is discounted with its similarity; '叫啥' asks (text.asks)."""
    from memory_engine.text import asks

    assert asks("我在重庆吃的那家火锅叫啥") and asks("那家店是啥")
    eng = make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False})
    mid = eng.add("上次在成都出差吃了家特别好吃的火锅，叫小龙坎", user_id="u", now=t0).memory_id
    eng.add("我在学做手冲咖啡", user_id="u", now=t0 + timedelta(days=1))
    later = t0 + timedelta(days=20)
    assert mid not in [h.memory_id for h in eng.retrieve("我在重庆吃的那家火锅叫啥", user_id="u", now=later).hits]
    assert [h.memory_id for h in eng.retrieve("我在成都吃的那家火锅叫啥", user_id="u", top_k=1, now=later).hits] == [mid]
