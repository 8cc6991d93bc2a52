"""Small named exceptions. Messages say how to fix the problem.

Only the CLI turns these into ``click.ClickException`` and only ``web/`` into HTTP errors.
"""


class MemoryLayerError(Exception):
    """Base class for every error memory-layer raises on purpose."""


class InvalidInput(MemoryLayerError):
    """Text, category, confidence or another argument is not acceptable."""


class UnknownCategory(InvalidInput):
    """A category outside the 16 known ones."""


class NotFound(MemoryLayerError):
    """No memory (or task, or record) with that id."""


class DatabaseError(MemoryLayerError):
    """The database is corrupt, locked or unreadable."""


class ConfigError(MemoryLayerError):
    """config.yaml is unreadable or holds an invalid value."""


class ModelUnavailable(MemoryLayerError):
    """The configured embedding model's package is missing or cannot run on this CPU."""


class ImportFailed(InvalidInput):
    """An import file has a bad line; nothing was imported."""


class Unauthorized(InvalidInput):
    """Team server: no token, or one that is unknown, revoked or expired."""


class Forbidden(InvalidInput):
    """Team server: the token's scopes or the member's role do not allow this."""


class Stale(InvalidInput):
    """Team server: a change made against an older revision of the memory."""


class Conflict(InvalidInput):
    """Team server: a new value for a fact the team already holds with another value."""


class TeamUnavailable(MemoryLayerError):
    """The team server cannot be reached or answered with an error."""


class RateLimited(MemoryLayerError):
    """Team server: too many requests, or too many proposals waiting; retry later."""
