"""Fetching a feed body from an http(s) URL or a local file, with a timeout and clear errors."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path

MAX_BODY_BYTES = 50 * 1024 * 1024


class FeedError(Exception):
    """A feed that could not be fetched or read; the message says why (it is stored on the run)."""


def fetch(source: str, *, timeout_s: float) -> bytes:
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"User-Agent": "gpu-planner feed importer"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (http/https only)
                body = response.read(MAX_BODY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise FeedError(f"{source}: HTTP {exc.code} {exc.reason}") from None
        except TimeoutError:
            raise FeedError(f"{source}: no answer within {timeout_s:g} s (timeout)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise FeedError(f"{source}: no answer within {timeout_s:g} s (timeout)") from None
            raise FeedError(f"{source}: cannot connect ({reason})") from None
        except OSError as exc:
            raise FeedError(f"{source}: read failed ({exc})") from None
    else:
        path = Path(source)
        try:
            body = path.read_bytes()
        except OSError as exc:
            raise FeedError(f"{source}: cannot read the file ({exc.strerror or exc})") from None
    if len(body) > MAX_BODY_BYTES:
        raise FeedError(f"{source}: body larger than {MAX_BODY_BYTES} bytes")
    if not body.strip():
        raise FeedError(f"{source}: empty body")
    return body
