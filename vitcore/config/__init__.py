"""The config layer: RunConfig (the run's identity and id: vitcore.config.run) and the facts every layer shares."""
