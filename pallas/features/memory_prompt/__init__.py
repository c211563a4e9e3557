"""Memory in the prompt: the context sources that render what a turn may read from memory.

The memory / knowledge (with worldbooks) / relationship / person-fact sources (`sources`), their
blocks (`render`), the speaker's compact profile (`profile`) and "what do you remember about me"
answers (`recall`). It reads the memory store (`pallas.features.memory`).
"""

from pallas.features.memory_prompt.recall import (
    MAX_LISTED_FACTS,
    RECALL_HEADER,
    RECALL_MAX_ITEMS,
    answer_question,
    own_facts,
    said_to_subject,
    second_person,
)
from pallas.features.memory_prompt.sources import (
    KnowledgeSource,
    MemorySource,
    MemorySourceConfig,
    PersonFactsSource,
    QuestionAhead,
    RelationshipSource,
)

__all__ = [
    "MAX_LISTED_FACTS",
    "RECALL_HEADER",
    "RECALL_MAX_ITEMS",
    "KnowledgeSource",
    "MemorySource",
    "MemorySourceConfig",
    "PersonFactsSource",
    "QuestionAhead",
    "RelationshipSource",
    "answer_question",
    "own_facts",
    "said_to_subject",
    "second_person",
]
