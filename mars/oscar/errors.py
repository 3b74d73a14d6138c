"""Every error that mars.oscar raises derives from :class:`OscarError`."""

from __future__ import annotations


class OscarError(Exception):
    """Root of the actor framework's own errors."""


class ActorNotExist(OscarError, LookupError):
    """No actor with the given uid lives in the pool the call reached."""


class ActorAlreadyExist(OscarError):
    """An actor was created with a uid that the target pool already holds."""


class ServerClosed(OscarError, ConnectionError):
    """The pool at the other end went away (stopped, crashed, or unreachable)."""


class NoMatchingPool(OscarError):
    """An allocation strategy matched no sub pool (unknown label, index, or all busy)."""


class RemoteError(OscarError):
    """An actor raised an exception that could not be sent back as itself.

    The message names the original exception type, its text, and the remote
    traceback.
    """


class AuthenticationError(OscarError, PermissionError):
    """A pool refused a connection that did not show the pool's token."""


class PoolStartError(OscarError):
    """A sub pool process failed to start or to report that it was ready."""
