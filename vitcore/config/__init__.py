"""The config layer: RunConfig (the run's identity and id) and the facts every layer shares."""
