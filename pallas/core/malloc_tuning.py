"""glibc malloc settings for a long-running bot with a few threads (no-ops elsewhere).

Measured with `python -m benchmarks.footprint` (1,000 groups over a 1M-message database):
the writer, aiosqlite and `to_thread` workers each get their own malloc arena by default
(up to 8 per core), and freed memory from start-up loads (the BPE file, jieba's dictionary
build) stays in the heap. Two arenas plus fixed mmap / trim thresholds (128 KiB: large buffers
are returned to the kernel when freed), and `trim()` after the warm-ups and periodically,
keep RSS close to the live data.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger("pallas.core")

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
ARENA_MAX = 2
THRESHOLD_BYTES = 128 * 1024


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()


def tune() -> bool:
    """Apply the arena and threshold settings; call first thing in the process."""
    if _LIBC is None:
        return False
    ok = bool(_LIBC.mallopt(M_ARENA_MAX, ARENA_MAX))
    ok &= bool(_LIBC.mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES))
    ok &= bool(_LIBC.mallopt(M_TRIM_THRESHOLD, THRESHOLD_BYTES))
    return ok


def trim() -> bool:
    """Return free heap pages to the kernel (`malloc_trim(0)`); True if any were released."""
    if _LIBC is None:
        return False
    return bool(_LIBC.malloc_trim(0))


__all__ = ["trim", "tune"]
