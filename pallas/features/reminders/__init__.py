"""Reminders: a member's "明天早上八点提醒我交电费" read by rules (the cheap model only when the
time cannot be read), answered with the exact time, kept as database rows and fired once at
that time (China time) by a database poll — see `firing.py` for why a poll.
"""

from pallas.features.reminders.admin import COMMANDS as REMINDER_COMMANDS
from pallas.features.reminders.admin import ReminderAdmin
from pallas.features.reminders.clock_words import CHINA_TZ, china_now, format_when
from pallas.features.reminders.config import ReminderConfig
from pallas.features.reminders.firing import (
    FireDecision,
    ReminderFirer,
    ReminderSender,
    fired_message,
    firing_decision,
    pick_accounts,
)
from pallas.features.reminders.model_time import ModelTimeReader, parse_time_answer
from pallas.features.reminders.parse import ReminderRequest, read_request, strip_call
from pallas.features.reminders.phrasing import ReminderPhraser, usable_phrase
from pallas.features.reminders.repository import (
    CANCELLED,
    DONE,
    FAILED,
    FIRING,
    MISSED,
    PENDING,
    NewReminder,
    Reminder,
    ReminderRepository,
)
from pallas.features.reminders.schedule import Repeat, next_fire
from pallas.features.reminders.service import ReminderReply, ReminderService, describe

__all__ = [
    "CANCELLED",
    "CHINA_TZ",
    "DONE",
    "FAILED",
    "FIRING",
    "MISSED",
    "PENDING",
    "REMINDER_COMMANDS",
    "FireDecision",
    "ModelTimeReader",
    "NewReminder",
    "Reminder",
    "ReminderAdmin",
    "ReminderConfig",
    "ReminderFirer",
    "ReminderPhraser",
    "ReminderReply",
    "ReminderRepository",
    "ReminderRequest",
    "ReminderSender",
    "ReminderService",
    "Repeat",
    "china_now",
    "describe",
    "fired_message",
    "firing_decision",
    "format_when",
    "next_fire",
    "parse_time_answer",
    "pick_accounts",
    "read_request",
    "strip_call",
    "usable_phrase",
]
