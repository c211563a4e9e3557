"""Repeat rules and China time across midnight and month ends (no DST in Asia/Shanghai)."""

from __future__ import annotations

from datetime import UTC, datetime

from pallas.features.reminders import CHINA_TZ, Repeat, format_when, next_fire, read_request


def _at(year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=CHINA_TZ)


def test_monthly_31st_falls_on_the_last_day_of_short_months() -> None:
    rule = Repeat("monthly", 31, 9, 0)
    assert next_fire(rule, _at(2026, 12, 31, 9, 0)) == _at(2027, 1, 31, 9, 0)
    assert next_fire(rule, _at(2027, 1, 31, 9, 0)) == _at(2027, 2, 28, 9, 0)
    assert next_fire(rule, _at(2028, 2, 1, 0, 0)) == _at(2028, 2, 29, 9, 0)  # leap year


def test_daily_across_midnight_and_the_year_end() -> None:
    rule = Repeat("daily", 0, 0, 5)
    assert next_fire(rule, _at(2026, 12, 31, 23, 59)) == _at(2027, 1, 1, 0, 5)


def test_weekdays_skip_the_weekend() -> None:
    rule = Repeat("weekdays", 0, 8, 0)
    assert next_fire(rule, _at(2026, 12, 11, 8, 0)) == _at(2026, 12, 14, 8, 0)  # Fri → Mon


def test_rules_round_trip_their_stored_form() -> None:
    for rule in (Repeat("daily", 0, 7, 0), Repeat("weekly", 5, 17, 0), Repeat("every", 90)):
        assert Repeat.from_rule(rule.rule) == rule
    assert Repeat.from_rule("nonsense") is None


def test_china_time_is_used_whatever_the_host_zone() -> None:
    # 2026-12-06 23:50 in China is 15:50 UTC: "十分钟后" is after midnight, China time
    now = datetime(2026, 12, 6, 15, 50, tzinfo=UTC).astimezone(CHINA_TZ)
    request = read_request("二十分钟后提醒我睡觉", now)
    assert request is not None and request.when == _at(2026, 12, 7, 0, 10)
    tomorrow = read_request("明天早上八点提醒我", now)
    assert tomorrow is not None and tomorrow.when == _at(2026, 12, 7, 8, 0)


def test_month_end_day_words() -> None:
    now = _at(2026, 11, 30, 22, 0)
    request = read_request("明天中午提醒我吃饭", now)
    assert request is not None and request.when == _at(2026, 12, 1, 12, 0)
    late = read_request("31号提醒我交房租", now)  # November has no 31st: December's
    assert late is not None and late.when == _at(2026, 12, 31, 9, 0)


def test_confirmation_names_the_exact_time() -> None:
    assert format_when(_at(2026, 12, 7, 8, 0)) == "12月7日（周一）08:00"


def test_several_weekdays_in_one_weekly_rule() -> None:
    rule = Repeat("weekly", 135, 20, 0)
    assert rule.weekdays == (1, 3, 5) and rule.describe() == "每周一、三、五 20:00"
    assert Repeat.from_rule(rule.rule) == rule
    assert next_fire(rule, _at(2026, 12, 7, 20, 0)) == _at(2026, 12, 9, 20, 0)  # Mon → Wed
    assert next_fire(rule, _at(2026, 12, 11, 21, 0)) == _at(2026, 12, 14, 20, 0)  # Fri → Mon
