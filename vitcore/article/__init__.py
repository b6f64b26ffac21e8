"""The source article: its numbers, its headline re-measured, the claims ledger."""
