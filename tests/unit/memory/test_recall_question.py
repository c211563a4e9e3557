"""What a person-facts question and a stored fact are encoded from (issue #47)."""

from __future__ import annotations

import pytest

from pallas.ranking import recall_question, speaker_voice


@pytest.mark.parametrize(
    ("question", "encoded"),
    [
        ("你还记得我说过我老婆叫什么吗", "我老婆叫什么"),
        ("我跟你说过我爸是做什么的吗？", "我爸是做什么的"),
        ("我以前跟你讲过我的血型吗？", "我的血型"),
        ("我最喜欢哪个歌手来着？", "我最喜欢哪个歌手"),
        ("你还记得我养的狗叫什么么", "我养的狗叫什么"),
        ("你还记得吗，我外孙女在哪念书？", "我外孙女在哪念书"),  # the frame asked first
        ("你记得吗？我住哪", "我住哪"),
        # "什么" / "怎么" keep their 么; a question with no frame is encoded as asked
        ("我养的猫叫什么名字", "我养的猫叫什么名字"),
        ("你记得我什么", "我什么"),
        ("我是做哪一行的？", "我是做哪一行的"),
        # nothing but the frame: the text itself
        ("吗？", "吗？"),
    ],
)
def test_the_remember_frame_is_not_what_is_asked(question: str, encoded: str) -> None:
    assert recall_question(question) == encoded


@pytest.mark.parametrize(
    ("stored", "encoded"),
    [("TA在学日语", "我在学日语"), ("TA的猫叫煤球", "我的猫叫煤球"), ("喜欢游泳", "喜欢游泳")],
)
def test_a_person_fact_is_encoded_in_the_members_voice(stored: str, encoded: str) -> None:
    assert speaker_voice(stored) == encoded
