import pytest

from pallas.onebot.convert import stored_message_from_turn, turn_input_from_event

BOT = 999


def _event(message, **extra):
    event = {
        "self_id": BOT,
        "user_id": 1,
        "group_id": 55,
        "message_id": -42,
        "time": 1700000000,
        "message": message,
        "sender": {"card": "", "nickname": "nick", "role": "member"},
    }
    event.update(extra)
    return event


@pytest.mark.parametrize(
    ("message", "text", "mentions", "reply_to"),
    [
        (
            [{"type": "at", "data": {"qq": str(BOT)}}, {"type": "text", "data": {"text": " 在吗"}}],
            "在吗",
            (BOT,),
            None,
        ),
        (
            [{"type": "reply", "data": {"id": "-7"}}, {"type": "text", "data": {"text": "对"}}],
            "对",
            (),
            -7,
        ),
        (
            [{"type": "at", "data": {"qq": "5"}}, {"type": "text", "data": {"text": "看"}}],
            "@5 看",
            (5,),
            None,
        ),
        ("[CQ:at,qq=999]早[CQ:face,id=1]", "早", (BOT,), None),
        ([], "", (), None),
    ],
)
def test_turn_input_text_mentions_reply(message, text, mentions, reply_to) -> None:
    turn = turn_input_from_event(_event(message))
    assert (turn.text, turn.mentions, turn.reply_to) == (text, mentions, reply_to)
    assert turn.message_id == -42 and turn.group_id == 55


def test_display_text_uses_placeholders_and_names() -> None:
    turn = turn_input_from_event(
        _event(
            [
                {"type": "text", "data": {"text": "看"}},
                {"type": "image", "data": {"url": "https://x/y.png"}},
                {"type": "mface", "data": {"summary": "[开心]"}},
                {"type": "at", "data": {"qq": "all"}},
            ]
        )
    )
    stored = stored_message_from_turn(turn)
    assert stored.text == "看[图片][开心]@全体成员"
    assert turn.image_urls == ("https://x/y.png",) and turn.mentions_all


def test_speaker_falls_back_to_anonymous_label() -> None:
    turn = turn_input_from_event(_event("hi", user_id=123456, sender={}))
    assert turn.speaker.display_name == "群友#3456"


def test_missing_ids_are_rejected() -> None:
    with pytest.raises(ValueError):
        turn_input_from_event({"self_id": 1, "message": "x"})


def test_private_message_is_addressed() -> None:
    turn = turn_input_from_event(_event("hi", group_id=None))
    assert turn.is_private and turn.to_me
