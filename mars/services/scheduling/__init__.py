"""The scheduling service."""
