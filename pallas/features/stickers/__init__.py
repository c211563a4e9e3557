"""Real stickers: the pool of stickers a group's members send, named once, sent back on demand.

segments.py   which OneBot segments are stickers (pure)
matching.py   `[表情:名字]` → the best sticker of the group's pool, or none (pure)
config.py     `[stickers]` group config
describe.py   background job: download (SSRF-safe), dedupe by hash, name with the vision model
service.py    collection, the names for the reply-shape contract, the segment to send, bans
"""
