"""``mars-web`` (also ``python -m mars.deploy.oscar.web``): the web service alone, for the supervisors of ``-s``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cmdline import main as _main


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mars-web`` with ``argv`` (``sys.argv[1:]`` when None); returns the exit code."""
    return _main("web", argv)


if __name__ == "__main__":
    sys.exit(main())
