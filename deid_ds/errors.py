"""Exceptions with messages a user can act on.

Messages say *what* went wrong and *where* (file, column, row number, document id) and never quote
note text or patient identifiers: they end up in terminals, logs and CI output.
"""

from __future__ import annotations


class DeidError(Exception):
    """Base class of the errors deid-ds reports to users (the CLI prints them without a traceback)."""


class InputError(DeidError):
    """An input file or table is missing, unreadable, or not in the expected format."""


class DocumentError(DeidError):
    """One document could not be processed; the run goes on and the document is reported."""
