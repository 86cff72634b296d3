"""PII detectors: the gaps of issue 15, any region's phones, checksummed ids, and precision on order numbers.

The property tests generate valid PII of every kind, format it as people write it (spaces, hyphens,
full-width digits, right after a CJK character) inside zh and en sentences, and check that ``redact()``
leaves no raw value; the precision test generates order numbers (13-19 digits, 11 digits starting 13-19)
in order contexts and checks none is taken for a card or a phone.
"""

from __future__ import annotations

import random

import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from stdnum import iban as stdnum_iban

from memory_engine.config import EngineConfig
from memory_engine.write.pii import (
    PiiSettings,
    asked_secret,
    card_bin_plausible,
    leads_with_value,
    luhn_valid,
    nino_valid,
    normalise,
    redact,
    redact_value,
)

pytestmark = pytest.mark.unit


# --- the reproduced gaps --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,raw,kind",
    [
        ("身份证 110101 19900307 1233 请记住", "110101 19900307 1233", "ID_NUMBER"),
        ("身份证１１０１０１１９９００３０７１２３３", "１１０１０１１９９００３０７１２３３", "ID_NUMBER"),
        ("卡号４１１１　１１１１　１１１１　１１１１", "４１１１　１１１１　１１１１　１１１１", "BANK_CARD"),
        ("我的电话是0086 138 1234 5678谢谢", "0086 138 1234 5678", "PHONE"),
        ("联系我+44 20 7946 0958吧", "+44 20 7946 0958", "PHONE"),
        ("手机１３８１２３４５６７８", "１３８１２３４５６７８", "PHONE"),
        ("call me on +33 1 42 68 53 00 tomorrow", "+33 1 42 68 53 00", "PHONE"),
        ("my NINO is AB 12 34 56 C", "AB 12 34 56 C", "NINO"),
        ("SSN 536-90-4399 on file", "536-90-4399", "SSN"),
        ("IBAN DE89 3704 0044 0532 0130 00 thanks", "DE89 3704 0044 0532 0130 00", "IBAN"),
    ],
)
def test_gaps_are_closed(text, raw, kind):
    r = redact(text)
    assert raw not in r.text and f"[{kind}]" in r.text, r


@pytest.mark.parametrize(
    "text,secret,keep",
    [
        ("My password is: hunter2.", "hunter2", "My password is: [PASSWORD]."),
        ("the wifi password for the office is Tr0ub4dor&3, ok", "Tr0ub4dor&3", "the wifi password for the office is [PASSWORD], ok"),
        ("办公室的wifi密码是abc12345，别外传", "abc12345", "办公室的wifi密码是[PASSWORD]，别外传"),
        ("密码：Xy9!pq", "Xy9!pq", "密码：[PASSWORD]"),
        # a verb of setting links the word to its new value; at 2cc49ae these were stored verbatim
        ("刚把wifi密码改成 moonlight88 了", "moonlight88", "刚把wifi密码改成 [PASSWORD] 了"),
        ("路由器密码已经换成Qz7788了", "Qz7788", "路由器密码已经换成[PASSWORD]了"),
        ("我的邮箱密码设置为 tiger_2025", "tiger_2025", "我的邮箱密码设置为 [PASSWORD]"),
        ("I changed my wifi password to moonlight88 yesterday", "moonlight88",
         "I changed my wifi password to [PASSWORD] yesterday"),
        ("my password is now Blue42!", "Blue42!", "my password is now [PASSWORD]"),  # the "!" is typed with it
        ("the gym locker PIN was reset to 4821", "4821", "the gym locker PIN was reset to [PASSWORD]"),
        ("Set the alarm pin to 9090 please", "9090", "Set the alarm pin to [PASSWORD] please"),
    ],
)  # fmt: skip
def test_a_password_is_redacted_not_its_linker(text, secret, keep):
    """A stated or a changed password: the secret is masked, the words that link it stay."""
    r = redact(text)
    assert r.text == keep and secret not in r.text, r


@pytest.mark.parametrize("text", [
    # password talk without a value
    "I changed my password yesterday", "密码改了好几次还是记不住", "password reset link sent",
    "remind me to update my password next week",
    # ordinary numbers: orders, an invalid id, versions and prices, a parcel
    "订单号13812345678已发货", "order 13812345678 shipped", "order #4111111111111111", "invalid id 110101199003071234",
    "version 2.13.0 costs 2999 yuan", "tracking number 9400111899223197428490",
])  # fmt: skip
def test_text_without_pii_is_left_alone(text):
    assert redact(text).kinds == (), text


def test_detectors_are_configurable():
    cfg = EngineConfig().with_overrides({"pii.detectors": ["EMAIL"], "pii.phone_regions": ["GB"]})
    s = PiiSettings.from_config(cfg.pii)
    r = redact("a@b.io 13812345678 020 7946 0958", s)
    assert r.kinds == ("EMAIL",)
    only_phone = PiiSettings(detectors=("PHONE",), phone_regions=("GB",), phone_context_any_region=False)
    r = redact("call 020 7946 0958 or 13812345678", only_phone)
    assert "[PHONE]" in r.text and "13812345678" in r.text  # a CN national number is not a GB one
    # ...unless a phone word introduces it (phone_context_any_region, on by default)
    r = redact("call 020 7946 0958 or 13812345678", PiiSettings(detectors=("PHONE",), phone_regions=("GB",)))
    assert r.kinds == ("PHONE", "PHONE")
    with pytest.raises(Exception, match="unknown PII detector"):
        EngineConfig().with_overrides({"pii.detectors": ["DNA"]})


def test_redact_value_walks_metadata_and_facts():
    meta = {"contact": {"phones": ["+44 20 7946 0958", 13812345678]}, "note": "邮箱 a@b.io", "n": 3}
    out, kinds = redact_value(meta)
    assert out == {"contact": {"phones": ["[PHONE]", "[PHONE]"]}, "note": "邮箱 [EMAIL]", "n": 3}
    assert sorted(kinds) == ["EMAIL", "PHONE", "PHONE"]


def test_validators():
    assert nino_valid("AB123456C") and not nino_valid("QQ123456C") and not nino_valid("GB123456A")
    assert luhn_valid("4111111111111111") and card_bin_plausible("4111111111111111")
    assert not card_bin_plausible("9111111111111111")


# --- generated PII in sentences ----------------------------------------------------------------------
_ID_W = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id(region: int, y: int, m: int, d: int, seq: int) -> str:
    body = f"{region:06d}{y:04d}{m:02d}{d:02d}{seq:03d}"
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, _ID_W, strict=True)) % 11]


def _luhn_complete(body: str) -> str:
    for c in "0123456789":
        if luhn_valid(body + c):
            return body + c
    raise AssertionError


def _group(s: str, size: int, sep: str) -> str:
    return sep.join(s[i : i + size] for i in range(0, len(s), size))


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) - 48 + 0xFF10) if c.isdigit() else c for c in s)


_CN_MOBILE = ["134", "135", "136", "137", "138", "139", "150", "151", "152", "157", "158", "159", "182", "187",
              "188", "130", "131", "132", "155", "156", "185", "186", "133", "153", "180", "189", "177", "199"]  # fmt: skip


@st.composite
def _pii(draw):
    kind = draw(st.sampled_from(["ID_NUMBER", "BANK_CARD", "PHONE_CN", "PHONE_INTL", "EMAIL", "NINO", "SSN",
                                 "IBAN", "PASSWORD"]))  # fmt: skip
    digits = st.text("0123456789", min_size=1, max_size=1)
    if kind == "ID_NUMBER":
        v = _cn_id(draw(st.integers(110000, 659999)), draw(st.integers(1930, 2015)), draw(st.integers(1, 12)),
                   draw(st.integers(1, 28)), draw(st.integers(0, 999)))  # fmt: skip
        v = draw(st.sampled_from([v, _group(v, 6, " "), v[:6] + " " + v[6:14] + " " + v[14:]]))
    elif kind == "BANK_CARD":
        prefix = draw(st.sampled_from(["4", "51", "55", "62"]))
        n = 16
        body = prefix + "".join(draw(digits) for _ in range(n - 1 - len(prefix)))
        v = _luhn_complete(body)
        v = draw(st.sampled_from([v, _group(v, 4, " "), _group(v, 4, "-")]))
    elif kind == "PHONE_CN":
        v = draw(st.sampled_from(_CN_MOBILE)) + "".join(draw(digits) for _ in range(8))
        assume(phonenumbers.is_valid_number(phonenumbers.parse(v, "CN")))
        v = draw(st.sampled_from([v, f"{v[:3]} {v[3:7]} {v[7:]}", f"+86 {v}", f"0086 {v[:3]} {v[3:7]} {v[7:]}",
                                  f"{v[:3]}-{v[3:7]}-{v[7:]}"]))  # fmt: skip
    elif kind == "PHONE_INTL":
        v = draw(st.sampled_from(["+44 20 7946 0{}{}{}", "+1 212 736 0{}{}{}", "+49 30 901820{}{}", "+33 1 42 68 5{}{}{}",
                                  "+81 3 3224 5{}{}{}", "+61 2 9374 4{}{}{}"]))  # fmt: skip
        v = v.format(*[draw(digits) for _ in range(v.count("{}"))])
        assume(phonenumbers.is_valid_number(phonenumbers.parse(v, None)))
    elif kind == "EMAIL":
        v = draw(st.from_regex(r"[a-z][a-z0-9._]{1,10}@[a-z]{2,8}\.(com|cn|io|org)", fullmatch=True))
    elif kind == "NINO":
        v = draw(st.sampled_from(["AB", "CE", "JG", "PR", "WX", "SK"])) + "".join(draw(digits) for _ in range(6))
        v += draw(st.sampled_from("ABCD"))
        v = draw(st.sampled_from([v, f"{v[:2]} {v[2:4]} {v[4:6]} {v[6:8]} {v[8]}"]))
    elif kind == "SSN":
        area = draw(st.integers(1, 665))
        v = f"{area:03d}-{draw(st.integers(1, 99)):02d}-{draw(st.integers(1, 9999)):04d}"
    elif kind == "IBAN":
        bban = "".join(draw(digits) for _ in range(18))
        v = "DE" + stdnum_iban.calc_check_digits("DE00" + bban) + bban
        v = draw(st.sampled_from([v, _group(v, 4, " ")]))
    else:
        v = draw(st.from_regex(r"[A-Za-z]{3,8}[0-9]{1,4}[!#%]?", fullmatch=True))
    if kind in ("ID_NUMBER", "BANK_CARD", "PHONE_CN") and draw(st.booleans()):
        v = _fullwidth(v)
    return kind, v


_ZH = ["我的{w}是{v}，记一下", "{w}{v}", "请把{w}改成{v}吧", "好的，{w}：{v}。", "他说{w}是 {v} 没错"]
_EN = ["my {w} is {v}, please remember", "{w}: {v}", "update my {w} to {v} thanks", "you can use {v} as my {w}."]
_WORDS = {"ID_NUMBER": ("身份证号", "ID number"), "BANK_CARD": ("银行卡号", "card number"),
          "PHONE_CN": ("手机号", "phone number"), "PHONE_INTL": ("电话", "phone"), "EMAIL": ("邮箱", "email"),
          "NINO": ("英国社保号", "NI number"), "SSN": ("社会安全号", "SSN"), "IBAN": ("账户", "IBAN"),
          "PASSWORD": ("密码", "password")}  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(_pii(), st.booleans(), st.integers(0, 4))
def test_generated_pii_in_zh_and_en_sentences_is_redacted(pii, zh, t):
    kind, value = pii
    if kind == "PASSWORD":  # a password is only a password after its word
        tpl = ["我的{w}是{v}，记一下", "{w}：{v}", "我的wifi{w}是{v}"][t % 3] if zh else [
            "my {w} is {v}, please remember", "{w}: {v}", "the wifi {w} for the office is {v}"][t % 3]
    else:
        tpl = (_ZH if zh else _EN)[t % len(_ZH if zh else _EN)]
    text = tpl.format(w=_WORDS[kind][0 if zh else 1], v=value)
    out = redact(text)
    assert value not in out.text, (text, out)
    core = normalise(value).replace(" ", "").replace("-", "").lstrip("+")
    assert core not in normalise(out.text).replace(" ", "").replace("-", ""), (text, out)


# --- precision on order numbers ------------------------------------------------------------------------
_ORDER_CTX = ["订单号{n}", "订单 {n} 已发货", "order #{n} shipped", "order number {n}", "tracking number {n}",
              "运单号：{n}", "invoice ref {n}"]  # fmt: skip


def test_order_numbers_are_not_cards_or_phones():
    """Precision figure: 3,000 generated order ids (13-19 digits, and 11 digits starting 13-19) in order
    contexts: none redacted. (On main at 303e610 every 11-digit one became a phone, ~10% of the others cards.)"""
    rng = random.Random(15)
    false = 0
    for i in range(3000):
        n = rng.choice([11, 13, 14, 15, 16, 17, 18, 19])
        num = (str(rng.randint(13, 19)) + "".join(rng.choice("0123456789") for _ in range(9))) if n == 11 else (
            str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(n - 1)))  # fmt: skip
        text = _ORDER_CTX[i % len(_ORDER_CTX)].format(n=num)
        if redact(text).kinds:
            false += 1
    assert false == 0


# --- secrets the way users paste them into chats (issue 16, class 8; eval_sets/pii_in_the_wild.yaml) ------------
# (text, the secret, the text as it must be stored). On main at 67a107e every one of these kept its secret
# (or part of it: the "!" of a password).
_PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "-----END OPENSSH PRIVATE KEY-----")
_JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


@pytest.mark.parametrize(
    "text,secret,keep",
    [
        ("my netflix password is Sunshine2024! so you can sign in", "Sunshine2024!",
         "my netflix password is [PASSWORD] so you can sign in"),
        ("网银登录密码是Zhang@1988!，U盾在抽屉里", "Zhang@1988!", "网银登录密码是[PASSWORD]，U盾在抽屉里"),
        ("the door code for the building is 4471, the buzzer is broken", "4471",
         "the door code for the building is [ACCESS_CODE], the buzzer is broken"),
        ("我们小区门禁是4471#，快递员来了让他直接按", "4471#", "我们小区门禁是[ACCESS_CODE]，快递员来了让他直接按"),
        # fresh-user trial, session 6: a device word between the place and 'code' hid it
        ("garage opener code 7731 — the left button", "7731", "garage opener code [ACCESS_CODE] — the left button"),
        ("the gate keypad code is 2580#", "2580#", "the gate keypad code is [ACCESS_CODE]"),
        ("门禁密码是4471#", "4471#", "门禁密码是[PASSWORD]"),
        ("my parents' gate code is 1925* and the opener is in the Honda", "1925*",
         "my parents' gate code is [ACCESS_CODE] and the opener is in the Honda"),
        ("我备用手机的解锁码是 052013，放在客厅", "052013", "我备用手机的解锁码是 [ACCESS_CODE]，放在客厅"),
        ("健身房储物柜我用 58 号，开锁码是 2468", "2468", "健身房储物柜我用 58 号，开锁码是 [ACCESS_CODE]"),
        ("the alarm code is 3344 and the company is ADT", "3344", "the alarm code is [ACCESS_CODE] and the company is ADT"),
        ("pin for the joint chase debit card is 2580", "2580", "pin for the joint chase debit card is [PASSWORD]"),
        ("我妈那张农行卡取款密码 625813，她总记不住", "625813", "我妈那张农行卡取款密码 [PASSWORD]，她总记不住"),
        ("my github 2FA recovery codes are 8f3a1-b92c4 and 77d0e-a1f53, save them", "77d0e-a1f53",
         "my github 2FA recovery codes are [ACCESS_CODE] and [ACCESS_CODE], save them"),
        ("谷歌两步验证的备用码：4F7K-9QX2、M8PL-3RT6，换手机要用", "M8PL-3RT6",
         "谷歌两步验证的备用码：[ACCESS_CODE]、[ACCESS_CODE]，换手机要用"),
        ("here's my OpenAI key sk-proj-4fJ8kLmN2pQr7sTuVwXy9zAbCdEf1gHiJk, use it", "4fJ8kLmN2pQr7sTuVwXy9zAbCdEf1gHiJk",
         "here's my OpenAI key [API_KEY], use it"),
        ("DeepSeek API key：sk-7f3a9b2c4d5e6f708192a3b4c5d6e7f8，写脚本用", "7f3a9b2c4d5e6f708192a3b4c5d6e7f8",
         "DeepSeek API key：[API_KEY]，写脚本用"),
        ("use ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A to push", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A",
         "use [API_KEY] to push"),
        ("access key AKIAQX4TLM7YB2EXAMPL secret key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY region us-west-2",
         "wJalrXUtnFEMI", "access key [API_KEY] secret key [API_KEY] region us-west-2"),
        ("阿里云 AccessKey ID 是 LTAI5tRq8mXz3KpW9vYb2NcD，Secret 是 xK8mP2qR5tW9yB3nF6hJ1lA4sD7gV0，三点跑",
         "xK8mP2qR5tW9yB3nF6hJ1lA4sD7gV0", "阿里云 AccessKey ID 是 [API_KEY]，Secret 是 [API_KEY]，三点跑"),
        ("slack bot token 是 xoxb-2048-4096-aBcDeFgHiJkLmNoP，频道 #deploys", "xoxb-2048",
         "slack bot token 是 [API_KEY]，频道 #deploys"),
        (f"header Authorization: Bearer {_JWT} 才能调通", "dozjgNryP4J3jVmNHl0w5N",
         "header Authorization: Bearer [API_KEY] 才能调通"),
        ("Authorization: Bearer 9f8e7d6c5b4a39281706 works", "9f8e7d6c5b4a39281706", "Authorization: Bearer [API_KEY] works"),
        (f"deploy key for the pi:\n{_PEM}\nthe pi runs pihole on port 8080", "b3BlbnNzaC1rZXktdjEA",
         "deploy key for the pi:\n[API_KEY]\nthe pi runs pihole on port 8080"),
        ("postgres://admin:S3cretPass@db.example.com:5432/app", "S3cretPass",
         "postgres://admin:[API_KEY]@db.example.com:5432/app"),
        ("我的护照号是E12345678，有效期到2031年", "E12345678", "我的护照号是[PASSPORT]，有效期到2031年"),
        ("for the ESTA form: passport no. 548893021, expires 2029", "548893021",
         "for the ESTA form: passport no. [PASSPORT], expires 2029"),
        ("the cabin wifi is LakeHouse5G, pw is loon-call-88, router in the attic", "loon-call-88",
         "the cabin wifi is LakeHouse5G, pw is [PASSWORD], router in the attic"),
    ],
)  # fmt: skip
def test_secrets_pasted_in_chats_are_redacted_and_the_rest_kept(text, secret, keep):
    r = redact(text)
    assert r.text == keep and secret not in r.text, r


@pytest.mark.parametrize(
    "text",
    [
        "I changed my password yesterday because the old one leaked",
        "手机银行密码错了3次，卡被锁了",  # a count (main: '密码[PASSWORD]')
        "wifi密码是什么",  # a question (main: 'wifi密码是[PASSWORD]')
        "密码为什么错了",
        "the password is in the drawer",  # main: 'the password is [PASSWORD] the drawer'
        "passwordless login is enabled",
        "the secretary is Jane",
        "key to the shed is under the mat",
        "the token expires in 30 days",
        "the access code of conduct training is on May 5",
        "I always pin the standup notes at 9:15",
        "order #112-4839201-7735 cost $129.99, flight UA857 at 10:30 on 2026-03-05, room 1207, v2.3.1",
        "酒店房间号 1207，一晚 688 元，明早 7:45 的 MU5137 回上海",
        "公司的报销 App 要升级到 v3.2.1 才能提交，密码这次没改",
        "passport expires 2029, renew it",
        "APAC2026Q3 budget review",
        "门禁卡丢了，物业说 8 点前能补办",
        "my recovery codes are somewhere in my email",
        "my Venmo PIN is 4 digits",  # a length (main: 'my Venmo PIN is [PASSWORD] digits')
        "密码是6位数字",  # main: '密码是[PASSWORD]位数字'
        "my password is expired",  # main: 'my password is [PASSWORD]'
        "the password is correct now",
        "the password is saved in 1Password",
        "Kindle PW5 is on sale",
        "m_pw_hint",
    ],
)  # fmt: skip
def test_no_secret_no_redaction(text):
    assert redact(text).text == text


@pytest.mark.parametrize(
    "question,kind",
    [
        ("好的，我来帮你登录路由器后台。请问管理员密码是多少？", "PASSWORD"),
        ("Sure, I can note it for the babysitter. What's the alarm code?", "ACCESS_CODE"),
        ("Could you send me the API key for the staging project?", "API_KEY"),
        ("办签证需要护照号，可以告诉我吗？", "PASSPORT"),
        ("I reset your password.", None),  # asks nothing
        ("What is your favourite colour?", None),  # asks for no secret
    ],
)  # fmt: skip
def test_asked_secret(question, kind):
    assert asked_secret(question) == kind


def test_the_answer_to_a_request_for_a_secret_is_redacted():
    assert redact("Tp@Link2580，用户名是 admin", answers="PASSWORD").text == "[PASSWORD]，用户名是 admin"
    assert (redact("it's 7391, disarm it within 30 seconds", answers="ACCESS_CODE").text
            == "it's [ACCESS_CODE], disarm it within 30 seconds")
    assert redact("I don't know, ask my wife", answers="PASSWORD").text == "I don't know, ask my wife"
    assert redact("it's 7391", answers=None).text == "it's 7391"  # without the question: a number
    assert leads_with_value("是 Tp@Link2580") and not leads_with_value("I don't know")


def test_new_detectors_and_their_numbers_are_configurable():
    cfg = EngineConfig().with_overrides({"pii.detectors": ["PASSWORD"], "pii.code_min_digits": 5})
    s = PiiSettings.from_config(cfg.pii)
    assert redact("the door code is 4471 and token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", s).kinds == ()
    s = PiiSettings.from_config(EngineConfig().with_overrides({"pii.code_min_digits": 5}).pii)
    assert redact("the door code is 4471", s).kinds == () and redact("the door code is 447100", s).kinds == ("ACCESS_CODE",)
    s = PiiSettings.from_config(EngineConfig().with_overrides({"pii.secret_plugins": []}).pii)
    assert "ghp_" in redact("use ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A now", s).text  # the GitHub format is the plugin's
    with pytest.raises(Exception, match="unknown detect-secrets plugin"):
        EngineConfig().with_overrides({"pii.secret_plugins": ["NopeDetector"]})


@pytest.mark.parametrize(
    "text",
    [
        "I learnt that my own happiness is the most important thing",  # a LoCoMo dev turn: main stored
        # 'my own happiness is [PASSWORD] most important thing' ('pin' inside 'happiness')
        "https://i.pinimg.com/originals/02/94/c3/0294c3460b66d1fd50530e4bd5a2e1f5.jpg",  # main: 'https://i.pin[PASSWORD]'
        "shipping.address",  # main: 'shippin[PASSWORD]'
        "WiFi 密码是多少",  # a pii-redaction query; main: 'WiFi 密码是[PASSWORD]'
    ],
)  # fmt: skip
def test_a_password_word_inside_another_word_takes_nothing(text):
    # found by redacting every dev text (LoCoMo conv-26/30/41, MemDaily, eval_sets) with main and with this code
    assert redact(text).text == text


# --- a local number abroad (issue 16 session 19, red-team: '我妈在慕尼黑，电话是 089 1234567' stored raw) ---------
_ABROAD = ("DE", "FR", "JP", "AU", "IN", "BR", "IT", "ES", "KR", "NL", "SE", "MX")
_PHONE_SENTENCES = ("我妈在国外，电话是 {n}，有事打给她", "her phone is {n}, call after six", "Tel: {n}", "you can reach my mum in Munich at {n}",
                    "有急事就拨 {n}", "you can reach me on WhatsApp at {n}")


@pytest.mark.parametrize("region", _ABROAD)
def test_a_national_number_of_any_region_after_a_phone_word_is_redacted(region):
    num = phonenumbers.format_number(phonenumbers.example_number(region), phonenumbers.PhoneNumberFormat.NATIONAL)
    for sentence in _PHONE_SENTENCES:
        text = sentence.format(n=num)
        r = redact(text)
        assert num not in r.text and "PHONE" in r.kinds, text
    # the same number without a phone word is left to the configured regions (no evidence it is a phone)
    bare = f"the code on the box was {num}"
    assert "PHONE" not in redact(bare, PiiSettings(detectors=("PHONE",), phone_regions=())).kinds


@pytest.mark.parametrize("text", [
    "电话会议定在 2026-06-10 10:30", "phone call at 2026.06.10", "手机花了4999元，型号 1234567",
    "phone model 1234567", "call me at 3pm", "电话打了12次", "the phone bill was 129.50",
])  # fmt: skip
def test_a_phone_word_before_a_date_price_or_model_takes_nothing(text):
    assert redact(text).kinds == (), text


def test_phone_context_any_region_is_configurable():
    cfg = EngineConfig().with_overrides({"pii.phone_context_any_region": False, "pii.phone_context_min_digits": 9})
    s = PiiSettings.from_config(cfg.pii)
    assert (s.phone_context_any_region, s.phone_context_min_digits) == (False, 9)
    assert "089 1234567" in redact("电话是 089 1234567", s).text
    assert "089 1234567" not in redact("电话是 089 1234567").text


@pytest.mark.parametrize("text,raw", [
    ("我的身份证号是110101199003071234，明天去社保局办退休手续", "110101199003071234"),  # check digit wrong (…1233)
    ("ID card: 110101 19900307 1234", "110101 19900307 1234"),
])
def test_an_id_after_an_id_word_is_redacted_despite_a_typo_in_its_check_digit(text, raw):
    """Red-team round 2 (session 19): a mistyped check digit left the user's resident id stored raw; the id word
    is the evidence. Without it the checksum still decides ('invalid id 110101199003071234' stays, above)."""
    r = redact(text)
    assert raw not in r.text and r.kinds == ("ID_NUMBER",)
    assert "ID_NUMBER" not in redact("订单 110101199003071234").kinds


@pytest.mark.parametrize("text,raw,kind", [
    # the published samples validators reject, and numbers with a typo, are still the user's after their name
    ("NINO is QQ 12 34 56 C", "QQ 12 34 56 C", "NINO"),
    ("my national insurance number is QQ123456C", "QQ123456C", "NINO"),
    ("ssn 219-09-9999", "219-09-9999", "SSN"),
    ("my social security number is 078-05-1120, keep it safe", "078-05-1120", "SSN"),
    ("my IBAN is DE89 3704 0044 0532 0130 01 thanks", "DE89 3704 0044 0532 0130 01", "IBAN"),  # check digits off
    ("IBAN: GB00 WEST 1234 5698 7654 32", "GB00 WEST 1234 5698 7654 32", "IBAN"),
    # other countries' national ids, after their names
    ("my SIN is 046 454 286 and I live in Toronto", "046 454 286", "ID_NUMBER"),
    ("Aadhaar 2345 6789 0123", "2345 6789 0123", "ID_NUMBER"),
    ("my CPF is 123.456.789-09", "123.456.789-09", "ID_NUMBER"),
    ("DNI: 12345678Z", "12345678Z", "ID_NUMBER"),
    ("My national ID is 9001015009087", "9001015009087", "ID_NUMBER"),
    ("我的身份证号是11010119900307123", "11010119900307123", "ID_NUMBER"),  # a digit short
])
def test_a_number_after_its_name_is_redacted_though_its_checksum_fails(text, raw, kind):
    """Red-team round 5 (P05, P06): a labelled number that failed validation was stored raw; the label is the
    evidence, as for the Chinese id above. Unlabelled, the validators still decide."""
    r = redact(text)
    assert raw not in r.text and r.kinds == (kind,), r.text
    assert text.split(raw)[0] in r.text  # the label is kept


@pytest.mark.parametrize("text", [
    "my id number is 42", "order id 12345678 shipped", "sin 2020 I moved", "QQ 12 34 56 C was on the form",
    "219-09-9999", "room 12345678", "the order id number is 12345678", "my student id number is 20231234",
])
def test_a_short_value_or_no_name_takes_no_national_id(text):
    assert redact(text).kinds == (), text


def test_national_id_min_digits_is_configuration():
    assert redact("my SIN is 046 45", PiiSettings(national_id_min_digits=6)).kinds == ()
    assert redact("my SIN is 046 45", PiiSettings(national_id_min_digits=5)).kinds == ("ID_NUMBER",)


@pytest.mark.parametrize("text,raw", [
    ("email me at john dot harper at gmail dot com if anyone wants the bike", "john dot harper at gmail dot com"),
    ("my email is jo[at]example[dot]org", "jo[at]example[dot]org"),
    ("li.lei (at) 163 (dot) com 是我邮箱", "li.lei (at) 163 (dot) com"),
    ("contact: sara.k at outlook.com", "sara.k at outlook.com"),
])
def test_a_spelled_out_email_address_is_redacted(text, raw):
    """Red-team round 4 P26: an address spelled out against scrapers was stored raw."""
    r = redact(text)
    assert raw not in r.text and r.kinds == ("EMAIL",), r.text


@pytest.mark.parametrize("text", ["I work at Acme dot com", "we met at Google dot com offices", "meet me at the station"])
def test_a_company_at_a_dot_com_is_no_email_address(text):
    assert redact(text).kinds == (), text


@pytest.mark.parametrize("text,raw,kind", [
    # red-team round 6: the name a few words before the value, common spellings, typos, accounts
    ("CRA login wants my SIN again, it's 046 454 286 ugh", "046 454 286", "ID_NUMBER"),
    ("the gestoría asked for my DNI, it's 12345678Z", "12345678Z", "ID_NUMBER"),
    ("my aadhar no is 2345 6789 0123", "2345 6789 0123", "ID_NUMBER"),
    ("我身分证320102198805061234下个月就到期了", "320102198805061234", "ID_NUMBER"),
    ("for the tax guy, my social is 078-05-1120", "078-05-1120", "SSN"),
    ("工资卡是招行的，卡号6225 8801 2345 6789", "6225 8801 2345 6789", "BANK_CARD"),  # fails Luhn: a typo
    ("for the direct deposit form: checking account 004512983377, routing 021000021", "004512983377",
     "BANK_ACCOUNT"),
])
def test_a_value_a_few_words_after_its_name_is_redacted(text, raw, kind):
    r = redact(text)
    assert raw not in r.text and kind in r.kinds, r.text


@pytest.mark.parametrize("text", [
    "the faucet I want is Lowe's item 5013-421-987",  # valid as a US number, grouped as none is written
    "the order id number is 12345678", "social media post got 1234567 views", "flight MU5101 on 2026-06-10",
])
def test_a_record_number_is_kept(text):
    assert redact(text).kinds == (), redact(text).text


def test_each_value_goes_to_the_name_nearest_before_it():
    r = redact("身份证110101199003071233，卡号4111 1111 1111 1111，手机13812345678")
    assert r.kinds == ("ID_NUMBER", "BANK_CARD", "PHONE")
    assert redact("my bank account is closed, call me at 13812345678").kinds == ("PHONE",)
    assert redact("my number is (415) 555-2671").kinds == ("PHONE",)  # 'my number' is no national id
    assert redact("座机 010-12345678").kinds == ("PHONE",)  # written coarser than the national grouping: still a phone


@pytest.mark.parametrize("text,raw", [
    ("my Japanese SIM number is 090-1234-5678, and flight NH 880 lands at 9:40am", "090-1234-5678"),
    ("my Handy number here in Munich is 0151 2345 6789, call that one", "0151 2345 6789"),
    ("order confirmation went to 138-1234-5678", "138-1234-5678"),
    ("the product manager's number 13812345678", "13812345678"),  # 'product' / 'part' are no record words
    ("I'm part of it, 13812345678", "13812345678"),
])
def test_a_phone_of_any_region_after_its_name_is_redacted(text, raw):
    """A SIM / Handy number is a phone word; the grouping test that keeps "Lowe's item 5013-421-987" applies only
    after a record word (red-team round 4 P04 / P22 must stay redacted)."""
    r = redact(text)
    assert raw not in r.text and r.kinds == ("PHONE",), r.text
