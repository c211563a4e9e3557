"""Moved: the helper is `pallas.core.single_flight.SingleFlight` (one for the whole project).

Nothing imports this module any more; it stays only until the memory folders' move (#46 item
3) lands, so the move and this change merge without a conflict — then delete it."""
