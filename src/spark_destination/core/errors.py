"""The one exception root of the project and its subtrees, by phase.

Every message says what was received, where, and what was expected. Messages never carry key
material or row values: they reach logs and Fivetran's dashboard.
"""

from __future__ import annotations


class DestinationError(Exception):
    """Root of every error this project raises on purpose.

    ``loggable`` is the text for logs when the message shown to the user must quote a value
    (a stored value that does not convert): logs never carry row values.
    """

    def __init__(self, message: str, *, loggable: str | None = None) -> None:
        super().__init__(message)
        self.loggable = message if loggable is None else loggable


class InvalidRequestError(DestinationError, ValueError):
    """The request itself is inconsistent (bad schema, unknown column, bad parameter)."""


class UnsupportedOperationError(DestinationError):
    """The request is valid but this destination cannot carry it out."""


class BatchFileError(DestinationError):
    """A batch file could not be read: missing, wrong key, corrupt, truncated or malformed CSV."""


class ValueConversionError(DestinationError):
    """A value in a batch file does not fit its column's type."""


class TableMetadataError(DestinationError):
    """A table's stored Fivetran metadata is unreadable: describing it anyway would mislead."""


class RenderError(DestinationError):
    """Rendered SQL failed to parse back: a bug in a template or the renderer."""


class RetryableError(DestinationError):
    """Nothing the user must fix: a service was down or another writer kept winning the commit
    race, after the destination's own retries. The server answers with gRPC status UNAVAILABLE,
    which Fivetran retries, instead of a task that stops the sync."""


class ExecutionError(DestinationError):
    """Spark rejected or failed a statement."""


class ServiceUnavailableError(ExecutionError, RetryableError):
    """The catalog, the object store or another service the request needs did not answer
    (connection refused, timed out) for the whole retry budget."""


class CommitRaceLostError(ExecutionError, RetryableError):
    """Other writers committed to the table before every attempt of a statement's commit for
    the whole retry budget; nothing of the request was committed."""


class CommitUncertainError(ExecutionError):
    """The catalog did not confirm a commit and the table changed meanwhile, not provably by
    it: the request is planned again from the table's current state."""


class ConfigurationError(DestinationError):
    """The configuration map is invalid or asks for settings the running JVM cannot take."""


class SparkLostError(ExecutionError, RetryableError):
    """The Spark JVM died (killed, out of memory) while a request ran; the next request starts
    a new one."""
