"""The run layer: deterministic training, named sweeps over worker processes, benchmarks."""
