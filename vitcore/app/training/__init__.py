"""Training from the app: the one-per-server slot, the budget, the train panel."""
