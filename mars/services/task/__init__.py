"""The task service."""
