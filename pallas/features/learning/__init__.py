"""Group learning: how this group talks, learned from its own messages. A background sweep
(`GroupInsightProcessor`) pairs messages with the replies members gave them, labels them with
the cheap model within a daily budget and keeps a reply profile; `GroupLearningSource` turns
that into the prompt's expression and behaviour references and the turn's reply shape
(`decide_reply_shape`). An admin's 「不可以」 on a bot line blames what was injected into that
turn (`handle_negative_feedback`); `/pallas learn` and `/pallas feedback` show and undo it.
"""

from pallas.features.learning.admin import COMMANDS as LEARNING_COMMANDS
from pallas.features.learning.admin import LearningAdmin
from pallas.features.learning.config import LearningConfig
from pallas.features.learning.context_source import GroupLearningSource
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.feedback_service import (
    FeedbackConfigView,
    FeedbackStores,
    admin_ids,
    handle_negative_feedback,
    recall_allowed,
)
from pallas.features.learning.group_insight_processor import (
    GroupInsightProcessor,
    InsightConfigView,
    scheduled_sweep,
    sweep_interval_seconds,
)
from pallas.features.learning.injection_feedback import matched_negative_word
from pallas.features.learning.reply_shape import decide_reply_shape
from pallas.features.learning.repository import LearningRepository

__all__ = [
    "LEARNING_COMMANDS",
    "FeedbackConfigView",
    "FeedbackRepository",
    "FeedbackStores",
    "GroupInsightProcessor",
    "GroupLearningSource",
    "InsightConfigView",
    "LearningAdmin",
    "LearningConfig",
    "LearningRepository",
    "admin_ids",
    "decide_reply_shape",
    "handle_negative_feedback",
    "matched_negative_word",
    "recall_allowed",
    "scheduled_sweep",
    "sweep_interval_seconds",
]
