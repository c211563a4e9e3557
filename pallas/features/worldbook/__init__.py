"""Worldbooks (SillyTavern world info): entry model, JSON loader, key matching, activation,
results, and the per-group run-time service."""
