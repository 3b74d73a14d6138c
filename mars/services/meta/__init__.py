"""The meta service."""
