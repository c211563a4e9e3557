"""Knowledge placeholders (`kb_placeholders`): `【kb::库名::数量::最低分::模式::参数】`.

They are honoured in admin text only (persona, prompt overrides).
Pools are `pool:<name>` scopes of the memory store's `knowledge` kind, filled by
`pallas kb import DIR --pool NAME` (or `/pallas memory add knowledge pool:NAME …`).
"""
