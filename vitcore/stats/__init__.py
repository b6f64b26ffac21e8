"""The statistics layer: estimates and verdicts, paired comparisons, effects and their families."""
