"""Long sessions: when a member's session in a group grows past `[session]`'s threshold,
`SessionSummaryHook` (an after-turn hook) compresses the older rows into one
`【此前对话摘要】` row, describing history images on the way (`PlaceholderDescriber`), and
archives each summary as an old topic that `OldTopicsSource` recalls as 【相关旧话题】.
"""

from pallas.features.session.image_descriptions import PlaceholderDescriber
from pallas.features.session.old_topics import OldTopicsSource
from pallas.features.session.repository import ImageDescriptionRepository, SessionTopicRepository
from pallas.features.session.session_summary import SessionSummaryHook, SummaryConfigView
from pallas.features.session.summary_rules import SessionSummaryConfig

__all__ = [
    "ImageDescriptionRepository",
    "OldTopicsSource",
    "PlaceholderDescriber",
    "SessionSummaryConfig",
    "SessionSummaryHook",
    "SessionTopicRepository",
    "SummaryConfigView",
]
