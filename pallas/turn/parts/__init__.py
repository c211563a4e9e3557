"""What the spine's steps use and nothing else does (see `pallas.turn` for the steps)."""
