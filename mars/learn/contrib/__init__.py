"""mars.learn.contrib: bridges to other libraries (``mars.learn.contrib.joblib``: a joblib backend)."""

from __future__ import annotations
