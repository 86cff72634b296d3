"""The floor's gate on outside phrasing: 40 questions answerable by meaning only (the memory shares no content word
with the question: 'what camera do I use?' / '上个月入手了一台索尼A7C2', one-word and cross-language questions) and 40
never-stored near misses (a memory of the same kind exists: asked about Xinjiang, a Tibet trip is stored), half
Chinese, half English, written in session 19 by a helper blind to the golden suites.

Each scene is its own user: 6-8 everyday fillers written 20-90 days back, then the scene's memory, then one retrieval.
Answerable passes when the memory is in the top 3; a near miss passes when nothing is returned. The two counts pull
against each other (the gate, ``retrieval.floor`` / ``retrieval.gate_calibration``, decides both), which is what this
set is for: a change to the gate shows what it buys and what it costs.

    PYTHONPATH=. python benchmarks/gate_scenes.py [--set retrieval.gate_calibration=true ...] [--limit N] [--out F]

Session 19 (e5-small, defaults): answerable 18/40, near misses 26/40. gate_calibration z_floor 3.25: 26 / 20;
3.5: 22 / 23; 3.75: 20 / 24; 4.0: 18 / 24; 4.5: 18 / 25 (see benchmarks/README.md).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from memory_engine import MemoryEngine
from memory_engine.config import EngineConfig, parse_overrides

NOW = datetime.fromisoformat("2026-06-10T21:00:00+08:00")
TZ = "Asia/Shanghai"

FILLERS = {
    "en": [
        "Repotted the monstera on the balcony, it's finally putting out new leaves.",
        "It rained all afternoon so I stayed in and caught up on laundry.",
        "Watched the new season of The Bear, episode three was intense.",
        "Finished reading Project Hail Mary last night, loved the ending.",
        "Trying to get to bed before midnight every night this week.",
        "Cleaned out the fridge and tossed a bunch of expired sauces.",
        "Started a 1000-piece jigsaw puzzle of a lighthouse, the sky part is killing me.",
        "The renovation next door starts drilling at 8am sharp every single day.",
        "Bought a new set of bath towels, the grey ones from Target.",
        "Listened to a podcast about the history of salt, weirdly fascinating.",
        "Thinking about repainting the hallway a lighter shade, it feels so dark.",
        "Tried baking sourdough for the first time and it came out totally flat.",
        "The elevator in our building was out all morning, had to take the stairs.",
        "I keep forgetting to water the basil on the windowsill.",
        "Spent Sunday reorganizing my bookshelf by color, looks great.",
        "Been jotting down a few lines in a journal before bed lately.",
        "The power went out for about an hour during last night's storm.",
        "Made a giant pot of chili on Sunday so lunches are sorted for the week.",
        "My umbrella flipped inside out in the wind today and snapped.",
        "Reorganized the kitchen drawers and found three can openers, no idea why.",
        "Got a cheap desk lamp but the light is way too blue.",
        "Played Catan with friends on Saturday and lost badly.",
        "Went back to using a paper planner instead of apps.",
        "The dishwasher is making a weird rattling noise again.",
        "Ordered blackout curtains for the bedroom, can't wait to sleep in.",
        "Binge-watched all of Severance over the weekend.",
        "I can never remember where I put my keys in the morning.",
        "Switched to a lavender laundry detergent, the sheets smell amazing.",
        "Did a huge grocery run today, the bill was ridiculous.",
        "Mopped the floors twice today because of all the muddy footprints.",
        "Made myself a pot of chamomile tea and just sat on the couch.",
        "Our internet keeps dropping out every evening around nine.",
    ],
    "zh": [
        "阳台上的绿萝又冒出好多新叶子了",
        "今天下午下了一场大雨，干脆在家把衣服全洗了",
        "最近在追《漫长的季节》，越看越上头",
        "把冰箱彻底清了一遍，扔了好几瓶过期的酱料",
        "这周给自己定了个目标，每天十二点前睡觉",
        "《三体》第二部看完了，后劲好大",
        "楼上在装修，每天早上八点准时开钻，烦死了",
        "买了一套新浴巾，灰色的，摸着挺软",
        "昨晚听了一期讲盐的历史的播客，居然挺有意思",
        "想把走廊那面墙刷成浅一点的颜色，现在太暗了",
        "第一次自己做酸面包，结果塌成一张饼",
        "小区电梯检修了一上午，硬是爬了十二楼",
        "窗台上那盆罗勒又忘了浇水，叶子都蔫了",
        "周日把书架按颜色重新摆了一遍，看着舒服多了",
        "最近睡前会写几行日记，心里能静下来",
        "昨晚刮大风，停了差不多一个小时电",
        "周末把厨房抽屉收拾了一下，翻出三个开瓶器",
        "伞被风吹翻了，骨架都折了两根",
        "网上买的台灯便宜是便宜，光太白了刺眼",
        "周六和朋友玩狼人杀，输得一塌糊涂",
        "又开始用纸质手账了，还是手写踏实",
        "洗碗机这两天老是发出咔咔的响声",
        "卧室换了遮光窗帘，早上终于不会被晒醒了",
        "周末一口气把《繁花》刷完了",
        "每天早上出门都要找半天钥匙",
        "换了个薰衣草味的洗衣液，被子香香的",
        "今天去超市大采购，一结账六百多",
        "快递在驿站放了三天了还没去拿",
        "最近在拼一个一千片的灯塔拼图，天空那块最难",
        "家里的网一到晚上九点就掉线",
        "今天把家里地板拖了两遍，累得腰疼",
        "下班回来给自己泡了一壶菊花茶，窝在沙发上发呆",
    ],
}

# (kind, lang, question, memory)
# kind "ans": the memory answers the question (no shared content word); "miss": the question asks about something
# never stored while the memory is of the same kind.
SCENARIOS = [
    # ---------------- ANSWERABLE, English questions ----------------
    ("ans", "en", "what camera do I shoot with these days?",
     "Picked up a Sony A7C II last month, still figuring out the autofocus menus."),
    ("ans", "en", "remind me what instrument I'm learning?",
     "Started cello lessons in March, my teacher says my bowing is getting better."),
    ("ans", "en", "where does my kid go to school again",
     "Lily started at Maple Leaf kindergarten this fall, she only cried the first day."),
    ("ans", "en", "car",
     "Finally traded in the old Civic for a Tesla Model 3."),
    ("ans", "en", "dentist",
     "Dr. Huang at Bright Smile clinic did my root canal, she was super gentle."),
    ("ans", "en", "allergies?",
     "I break out in hives whenever I eat shrimp or crab."),
    ("ans", "en", "hey what's my wife's name, blanking",
     "Been married to Sarah for six years now, anniversary's in October."),
    ("ans", "en", "which gym am I a member of?",
     "Signed up at Anytime Fitness near the office, it's $45 a month."),
    ("ans", "en", "what do I do for a living",
     "I work as a backend engineer at a fintech startup."),
    ("ans", "en", "what kind of pet do I have",
     "My corgi Mochi chewed up another charger cable today."),
    ("ans", "en", "do I have any dietary restrictions I should mention to the caterer",
     "I went vegan about two years ago, so no dairy or eggs either."),
    ("ans", "en", "which phone am I on right now",
     "Switched to a Pixel 8 Pro, battery life is way better than my old Galaxy."),
    ("ans", "en", "what medication am I taking?",
     "医生让我每天早上吃一片二甲双胍，控制血糖。"),
    ("ans", "en", "which city did I move to?",
     "去年夏天搬到成都了，到现在还是吃不惯太辣的。"),
    ("ans", "en", "what sport do I play?",
     "周末一般跟同事去打羽毛球，就在公司附近的体育馆。"),
    ("ans", "en", "blood type",
     "我是O型的，上次献血的时候护士告诉我的。"),
    ("ans", "en", "when's my birthday",
     "I was born on November 3rd, 1991."),
    ("ans", "en", "who's my landlord",
     "The guy who owns our apartment, Mr. Patel, finally fixed the heater."),
    ("ans", "en", "what language am I studying",
     "Been doing Duolingo Japanese every night, 120-day streak!"),
    ("ans", "en", "favorite band?",
     "Saw Coldplay live three times and I'd go again tomorrow."),
    # ---------------- ANSWERABLE, Chinese questions ----------------
    ("ans", "zh", "我现在用的什么相机来着？",
     "上个月入手了一台索尼A7C2，还在研究对焦设置"),
    ("ans", "zh", "我在学什么乐器",
     "三月份开始上大提琴课了，老师说我运弓进步挺大"),
    ("ans", "zh", "孩子在哪上学",
     "朵朵今年秋天进了枫叶幼儿园，第一天哭了一鼻子"),
    ("ans", "zh", "过敏",
     "我一吃芒果嘴巴周围就起疹子，肿得老高"),
    ("ans", "zh", "牙医",
     "上次根管治疗是在瑞尔齿科做的，陈大夫手很轻"),
    ("ans", "zh", "车",
     "终于把老款思域卖了，换了辆比亚迪汉"),
    ("ans", "zh", "我老婆叫啥来着",
     "我和小雅结婚六年了，十月份是纪念日"),
    ("ans", "zh", "我办的是哪家健身房的卡",
     "在公司楼下的乐刻报了名，月付199"),
    ("ans", "zh", "我是做什么工作的",
     "我在一家券商当量化研究员"),
    ("ans", "zh", "我养了啥宠物",
     "家里那只柯基又把充电线咬坏了"),
    ("ans", "zh", "帮我订餐的时候有什么忌口吗",
     "我吃素两年了，蛋奶也不碰"),
    ("ans", "zh", "我手机什么型号",
     "换了个小米14，续航比之前的华为强多了"),
    ("ans", "zh", "我在吃什么药",
     "My doctor put me on 20mg of Lexapro every morning."),
    ("ans", "zh", "我搬到哪个城市了",
     "We relocated to Denver last summer, still getting used to the altitude."),
    ("ans", "zh", "我平时打什么球",
     "I play pickleball with my neighbors most Saturday mornings."),
    ("ans", "zh", "我是什么血型",
     "Found out at the donation drive that I'm A negative."),
    ("ans", "zh", "生日",
     "身份证上写的是1992年1月11日"),
    ("ans", "zh", "房东是谁",
     "我们租的这套是王阿姨名下的，热水器坏了她第二天就叫人来修了"),
    ("ans", "zh", "我在学哪门外语",
     "每晚刷多邻国背韩文单词，连续打卡120天了"),
    ("ans", "zh", "我最喜欢哪个乐队",
     "五月天的演唱会我去了三次，下次开唱还去"),
    # ---------------- NEAR MISS, English questions ----------------
    ("miss", "en", "when did I go to Xinjiang?",
     "Got back from Tibet last week, the altitude sickness hit me hard on day two."),
    ("miss", "en", "what does my sister do for work?",
     "My brother just started as a nurse at St. Mary's."),
    ("miss", "en", "what's my passport number?",
     "I take subway Line 4 to the office every day."),
    ("miss", "en", "what's my cat called",
     "Took my dog Biscuit to the vet today, all good."),
    ("miss", "en", "what piano do I have",
     "I'm learning violin, practicing scales every evening."),
    ("miss", "en", "who's my daughter's math teacher",
     "My son's soccer coach is a guy named Mike."),
    ("miss", "en", "when's my mom's birthday",
     "My dad turns 60 on August 12th, we're planning a surprise party."),
    ("miss", "en", "what did the cardiologist tell me",
     "The dermatologist said the mole on my back is nothing to worry about."),
    ("miss", "en", "what motorcycle do I ride",
     "I drive a 2019 Mazda CX-5, it's due for an oil change."),
    ("miss", "en", "did I book a hotel in Tokyo?",
     "Booked an Airbnb in Lisbon for the second week of July."),
    ("miss", "en", "am I allergic to penicillin?",
     "I'm allergic to cats, my eyes get all puffy."),
    ("miss", "en", "what's my husband's go-to restaurant",
     "My own favorite place to eat is that tiny ramen shop on 5th street."),
    ("miss", "en", "what guitar do I play",
     "I've been taking drum lessons on Tuesdays."),
    ("miss", "en", "what was my grandma's maiden name",
     "My grandpa was a coal miner in West Virginia."),
    ("miss", "en", "when's my flight to Paris?",
     "周五早上九点坐高铁去杭州。"),
    ("miss", "en", "what's my employee ID?",
     "我的图书馆借书证明年三月到期。"),
    ("miss", "en", "what did I name my goldfish?",
     "家里的鹦鹉奇异果这周学会说你好了。"),
    ("miss", "en", "what's my brother-in-law's name?",
     "My cousin Jake is getting married in May, I'm one of the groomsmen."),
    ("miss", "en", "how much did my laptop cost",
     "Got my new monitor for $329 on sale."),
    ("miss", "en", "where did my wife go to college?",
     "I graduated from Ohio State in 2014."),
    # ---------------- NEAR MISS, Chinese questions ----------------
    ("miss", "zh", "我去新疆是哪一年？",
     "上周刚从西藏回来，第二天高反特别难受"),
    ("miss", "zh", "我姐在哪上班来着",
     "我哥上个月跳槽去了字节做产品"),
    ("miss", "zh", "我的护照号是多少",
     "我每天坐地铁4号线上班"),
    ("miss", "zh", "我那只猫几岁了",
     "我家金毛今年四岁了，特别能吃"),
    ("miss", "zh", "我家那架钢琴是什么牌子的",
     "最近在学小提琴，手指按弦按得生疼"),
    ("miss", "zh", "我老公的车牌号多少",
     "我自己骑的电动车是小牛的，白色那台"),
    ("miss", "zh", "我婆婆对什么过敏",
     "我对花粉过敏，每年春天都遭罪"),
    ("miss", "zh", "我下周三几点开会",
     "上周五下午跟客户开了两个小时的会，累死了"),
    ("miss", "zh", "我儿子的英语老师姓什么",
     "闺女的钢琴老师姓周，人特别耐心"),
    ("miss", "zh", "我在日本住的哪家酒店",
     "去年在清迈住的那家民宿特别好，老板还送我们去机场"),
    ("miss", "zh", "我的医保卡号是多少",
     "我的借书证明年三月到期"),
    ("miss", "zh", "我去年体检血压多少",
     "今年体检查出来有点脂肪肝，得少喝酒了"),
    ("miss", "zh", "我爷爷是哪年去世的",
     "外婆是1938年出生的，今年都快九十了"),
    ("miss", "zh", "我平时骑什么牌子的自行车",
     "我跑步一直穿亚瑟士的跑鞋"),
    ("miss", "zh", "我学过几年围棋",
     "小时候学过四年书法，现在字还算拿得出手"),
    ("miss", "zh", "我的工号是多少",
     "My locker at the gym is number 112."),
    ("miss", "zh", "我家仓鼠叫啥",
     "Our parrot Kiwi learned to say hello this week."),
    ("miss", "zh", "我小舅子叫什么",
     "我表弟阿杰五月份结婚，我得去当伴郎"),
    ("miss", "zh", "我那台笔记本电脑多少钱买的",
     "新买的显示器打完折2299"),
    ("miss", "zh", "我老婆是哪个大学毕业的",
     "I graduated from Ohio State back in 2014."),
]




def run(overrides: list[str], limit: int | None = None) -> dict:
    """Run the scenes (the first ``limit`` of each kind, None = all) on an in-memory engine with ``overrides``
    (dotted ``key=value``); returns {"summary": {...}, "rows": [...]}: counts are [passed, total]."""
    cfg = EngineConfig().with_overrides(parse_overrides(overrides)) if overrides else EngineConfig()
    scenes = SCENARIOS
    if limit is not None:
        scenes = [s for s in SCENARIOS if s[0] == "ans"][:limit] + [s for s in SCENARIOS if s[0] == "miss"][:limit]
    eng = MemoryEngine.in_memory(cfg)
    t0 = time.time()
    rows = []
    try:
        for i, (kind, lang, question, memory) in enumerate(scenes):
            uid = f"gate-{i:02d}-{kind}-{lang}"
            rng = random.Random(1000 + SCENARIOS.index((kind, lang, question, memory)))
            fillers = rng.sample(FILLERS[lang], rng.randint(6, 8))
            # fillers 20-90 days back, spread; the scene's memory 3-40 days back
            for j, f in enumerate(fillers):
                eng.add(f, user_id=uid, now=NOW - timedelta(days=rng.randint(20, 90), hours=rng.randint(0, 12),
                                                             minutes=j), timezone=TZ)
            wr = eng.add(memory, user_id=uid, now=NOW - timedelta(days=rng.randint(3, 40), hours=rng.randint(0, 12)),
                         timezone=TZ)
            res = eng.retrieve(question, user_id=uid, now=NOW, timezone=TZ)
            hits = [{"content": h.content, "relevance": round(float(h.relevance), 4)} for h in res.hits]
            rank = next((k + 1 for k, h in enumerate(hits) if h["content"] == memory), None)
            passed = (rank is not None and rank <= 3) if kind == "ans" else not hits
            rows.append({"kind": kind, "lang": lang, "question": question, "memory": memory,
                         "write_outcome": wr.outcome, "pass": passed, "memory_rank": rank, "hits": hits})
    finally:
        eng.close()

    def count(kind: str, lang: str | None = None) -> list[int]:
        sel = [r for r in rows if r["kind"] == kind and (lang is None or r["lang"] == lang)]
        return [sum(r["pass"] for r in sel), len(sel)]

    summary = {"config": overrides, "elapsed_s": round(time.time() - t0, 1), "answerable": count("ans"),
               "near_miss": count("miss"), "answerable_en": count("ans", "en"), "answerable_zh": count("ans", "zh"),
               "near_miss_en": count("miss", "en"), "near_miss_zh": count("miss", "zh"),
               "not_stored": [r["question"] for r in rows if r["write_outcome"] != "stored"]}
    return {"summary": summary, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (repeatable)")
    ap.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N scenes of each kind")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/gate_scenes.json"), help="JSON written here")
    ap.add_argument("--verbose", action="store_true", help="one line per scene")
    args = ap.parse_args(argv)
    got = run(args.set, args.limit)
    s = got["summary"]
    print(f"config: {args.set or 'defaults'} ({s['elapsed_s']:.0f} s)")
    for kind, label in (("answerable", "answerable by meaning (in top 3)"), ("near_miss", "never-stored near miss (empty)")):
        en, zh = s[f"{kind}_en"], s[f"{kind}_zh"]
        print(f"{label:36s} {s[kind][0]:3d}/{s[kind][1]}  en {en[0]}/{en[1]}  zh {zh[0]}/{zh[1]}")
    if s["not_stored"]:
        print(f"WARNING: {len(s['not_stored'])} scene memories were not stored: {s['not_stored']}")
    if args.verbose:
        for r in got["rows"]:
            print(f"{'PASS' if r['pass'] else 'FAIL'} {r['kind']:4s} {r['lang']} {r['question']!r} -> rank "
                  f"{r['memory_rank']}, {len(r['hits'])} hits")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(got, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
