"""The Seed noise page."""
