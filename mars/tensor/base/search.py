"""(being written: issue 17)"""

from __future__ import annotations

__all__: list[str] = []
