"""Assignment through loc/iloc/[] (issue 18): being written."""

from __future__ import annotations
