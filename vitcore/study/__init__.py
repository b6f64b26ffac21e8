"""The study layer: one analysis of one store state (Study), computed once and handed out as typed
records (vitcore.stats.records) or DataFrames, and the words every view says them in (words)."""

from vitcore.study.study import Study, Verdicts

__all__ = ["Study", "Verdicts"]
