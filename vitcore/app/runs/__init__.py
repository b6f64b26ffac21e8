"""The Runs page."""
