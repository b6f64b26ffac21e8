"""The study layer: one analysis of one store state (Study), computed once and handed out as typed
records (vitcore.stats.records) or DataFrames, and the words every view says them in (words). It is the app's one
door to the statistics: the pages, vitcore/app and the CLI take numbers from the Study (what no store changes, the
committed BatchNorm diagnosis and attention bench, from committed) and vocabulary from words."""

from vitcore.study.study import Study, Verdicts

__all__ = ["Study", "Verdicts"]
