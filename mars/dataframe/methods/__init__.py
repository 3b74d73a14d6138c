"""More DataFrame/Series methods (issue 18): each module adds its methods when imported."""

from __future__ import annotations
