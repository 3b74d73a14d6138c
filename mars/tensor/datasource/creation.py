"""Placeholder until this family lands."""

__all__: list[str] = []
