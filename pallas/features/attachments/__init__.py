"""Attachments (spec processors 4 and 11): shared text files read into the message, voice
messages as `[语音]` or a transcript, and images counted in the token budget."""
