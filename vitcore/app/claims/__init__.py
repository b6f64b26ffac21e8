"""The Claims page."""
