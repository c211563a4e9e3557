"""Memory commands: what members and admins say to the memory.

Members' 记住 / 忘记我 / 忘掉我<某件事> / 撤销 / 你记得我什么 (`member_commands`, `teaching`,
`about_others`, `corrections`, `correction_judge`, `member_forget`, `recall_pages`,
`remembered_words`) and the
admins' ``/pallas memory …`` commands (`admin`). They act through the memory store, the prompt
slice's recall and the ranking library.
"""

from pallas.features.memory_commands.about_others import GroupNames
from pallas.features.memory_commands.admin import COMMANDS as MEMORY_COMMANDS
from pallas.features.memory_commands.admin import MemoryAdmin
from pallas.features.memory_commands.member_commands import handle_member_message
from pallas.features.memory_commands.remembered_words import heading_of, stake_words

__all__ = [
    "MEMORY_COMMANDS",
    "GroupNames",
    "MemoryAdmin",
    "handle_member_message",
    "heading_of",
    "stake_words",
]
