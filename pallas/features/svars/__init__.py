"""Session variables (the `svars` processor): per-group / per-member role-play state.

`<svar name="hp" op="+" value="10" />` in the model's answer (or `/pallas svar set`) changes a
variable declared in the group's `[svars]` config; `$[svars::table]`, `$[svars::list]` and
`$[svars::<name>]` render the current values into admin-authored prompt text. The turn reads a
`SvarView` before the pipeline (`SvarService.view`), strips the tags from the answer
(`split_svar_tags`) and commits them after delivery under a `CommitHold`;
`VariableProcessor` renders the view into the prompt; `/pallas svar …` reads and sets values.
"""

from pallas.features.svars.admin import COMMANDS as SVAR_COMMANDS
from pallas.features.svars.admin import SvarAdmin
from pallas.features.svars.config import SvarConfig
from pallas.features.svars.ops import SvarOp, split_svar_tags, strip_svar_tags
from pallas.features.svars.pending import CommitHold, NoHold
from pallas.features.svars.processor import VariableProcessor
from pallas.features.svars.render import SvarView
from pallas.features.svars.repository import SessionVariableRepository
from pallas.features.svars.service import SvarService, result_trace

__all__ = [
    "SVAR_COMMANDS",
    "CommitHold",
    "NoHold",
    "SessionVariableRepository",
    "SvarAdmin",
    "SvarConfig",
    "SvarOp",
    "SvarService",
    "SvarView",
    "VariableProcessor",
    "result_trace",
    "split_svar_tags",
    "strip_svar_tags",
]
