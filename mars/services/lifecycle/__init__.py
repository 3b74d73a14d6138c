"""The lifecycle service."""
