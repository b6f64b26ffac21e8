"""The metric names, once: what a run stores and what the statistics compare.

SUMMARY: the metrics every run's summary.json holds, in the runs table's (runs.csv's) column order.
COMPARED: the metrics the statistics compare by default (effects, flips, `compare`), in display order.
"""

SUMMARY = ("test_loss", "test_accuracy", "best_val_accuracy", "best_epoch", "final_train_accuracy",
           "final_val_accuracy", "gap", "params", "seconds")
COMPARED = ("test_accuracy", "best_val_accuracy", "final_train_accuracy", "gap", "seconds")
