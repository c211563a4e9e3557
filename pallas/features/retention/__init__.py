"""Retention: old rows pruned per group (`[retention]`), in small batches, every hour."""

from pallas.features.retention.config import RetentionConfig
from pallas.features.retention.job import Cutoff, RetentionJob, RetentionReport, cutoffs

__all__ = ["Cutoff", "RetentionConfig", "RetentionJob", "RetentionReport", "cutoffs"]
