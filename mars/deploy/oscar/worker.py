"""``mars-worker`` (also ``python -m mars.deploy.oscar.worker``): a worker joining the supervisors given with ``-s``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cmdline import main as _main


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mars-worker`` with ``argv`` (``sys.argv[1:]`` when None); returns the exit code."""
    return _main("worker", argv)


if __name__ == "__main__":
    sys.exit(main())
