"""Analyses of stored runs: flipped images, the data-size curve, BatchNorm, token cost, attention."""
