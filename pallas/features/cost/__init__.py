"""Cost guard for the reply path: per-member rate limits, per-group and deployment-wide daily
budgets with a degradation ladder. `CostGuard.check` gives a turn its `CostVerdict` before any
LLM work (proceed, shorter context, cheaper model, a local phrase, or nothing);
`UsageCounters` keeps today's calls and tokens; `status_lines` / `budget_line` report them.
"""

from pallas.features.cost.config import BudgetConfig, CostConfig
from pallas.features.cost.counters import UsageCounters
from pallas.features.cost.explain import cost_reason_zh
from pallas.features.cost.guard import PROCEED, CostCheckView, CostGuard, CostVerdict
from pallas.features.cost.ladder import Limits, Usage
from pallas.features.cost.report import budget_line, status_lines

__all__ = [
    "PROCEED",
    "BudgetConfig",
    "CostCheckView",
    "CostConfig",
    "CostGuard",
    "CostVerdict",
    "Limits",
    "Usage",
    "UsageCounters",
    "budget_line",
    "cost_reason_zh",
    "status_lines",
]
