"""One root for every error the companion raises on purpose.

Each also inherits the matching built-in (as gpiozero does), so callers may catch either.
The CLI turns any CompanionError into a one-line message and exit code 2.
"""

from __future__ import annotations


class CompanionError(Exception):
    """Something the user can fix: bad input, missing file, no camera."""


class UnknownCardError(CompanionError, ValueError):
    """A card id that is not one of the 56 cards."""


class BadInputError(CompanionError, ValueError):
    """Malformed user input (JSON, arguments, calibration, images)."""
