"""Conversions and iteration (issue 18): being written."""

from __future__ import annotations
