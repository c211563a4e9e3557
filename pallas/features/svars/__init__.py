"""Session variables (the `svars` processor): per-group / per-member role-play state.

`<svar name="hp" op="+" value="10" />` in the model's answer (or `/pallas svar set`) changes a
variable declared in the group's `[svars]` config; `$[svars::table]`, `$[svars::list]` and
`$[svars::<name>]` render the current values into admin-authored prompt text.
"""
