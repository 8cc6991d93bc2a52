"""HTTP to the team server, with a deadline on every call.

Turns the server's answers back into the library's named errors, so a door shows the
server's own message ("Nobody approves their own proposal...") with the right exit.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from memory_layer.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    MemoryLayerError,
    NotFound,
    Stale,
    TeamUnavailable,
    Unauthorized,
)

DEFAULT_TIMEOUT = 10.0
_ERRORS: dict[int, type[MemoryLayerError]] = {
    400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound, 413: InvalidInput,
}


@dataclass(frozen=True)
class Remote:
    url: str
    token: str

    def call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(
            self.url.rstrip("/") + path, data=data, method=method,
            headers={"Authorization": f"Bearer {self.token}",
                     "Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise _error(exc.code, exc.read()) from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TeamUnavailable(
                f"Cannot reach the team server at {self.url}: {reason}. Work continues "
                "locally; `memory-layer team sync` sends what is queued once it is back."
            ) from None


def _error(status: int, payload: bytes) -> MemoryLayerError:
    try:
        message = str(json.loads(payload).get("error") or "")
    except (ValueError, AttributeError):
        message = ""
    message = message or f"The team server answered HTTP {status}."
    if status == 409:
        kind: type[MemoryLayerError] = Stale if "revision" in message else Conflict
        return kind(message)
    if status in _ERRORS:
        return _ERRORS[status](message)
    return TeamUnavailable(f"The team server answered HTTP {status}: {message}")
