"""Personas: the packs of `config/personas/<name>.toml` (name, aliases, persona and
self-identity text, timeline labels, regex rules) that a group's `persona` names, read and
kept fresh by `PersonaStore`.
"""

from pallas.features.persona.pack import PersonaPack, PersonaStore

__all__ = ["PersonaPack", "PersonaStore"]
