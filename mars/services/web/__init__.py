"""The web service: the cluster's REST API (see docs/web-api.md) and its HTTP client."""

from __future__ import annotations

from .client import SyncWebClient, WebClient, split_url
from .server import WebServer, start_web_server
from .wire import (
    BadRequest,
    PayloadTooLarge,
    Unauthorized,
    WebConnectionError,
    WebError,
)

__all__ = [
    "BadRequest",
    "PayloadTooLarge",
    "SyncWebClient",
    "Unauthorized",
    "WebClient",
    "WebConnectionError",
    "WebError",
    "WebServer",
    "split_url",
    "start_web_server",
]
