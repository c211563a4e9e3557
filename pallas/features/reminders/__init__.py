"""Reminders: a member's "明天早上八点提醒我交电费" read by rules (the cheap model only when the
time cannot be read), kept as database rows, and fired once at the time, in China time.
"""

from pallas.features.reminders.clock_words import CHINA_TZ, china_now, format_when
from pallas.features.reminders.parse import ReminderRequest, read_request, strip_call
from pallas.features.reminders.schedule import Repeat, next_fire

__all__ = [
    "CHINA_TZ",
    "ReminderRequest",
    "Repeat",
    "china_now",
    "format_when",
    "next_fire",
    "read_request",
    "strip_call",
]
