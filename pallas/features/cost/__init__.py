"""Cost guard for the reply path: per-member rate limits, per-group and deployment-wide daily
budgets with a degradation ladder (see `guard.py`)."""
