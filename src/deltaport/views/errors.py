"""Why a view's SQL is refused. No HTTP here: the surfaces that create views map a
refusal to 400 INVALID_PARAMETER_VALUE at their edge."""

from __future__ import annotations

import enum


class Refusal(enum.Enum):
    SYNTAX = "syntax"
    STATEMENTS = "statements"  # more than one statement
    NOT_SELECT = "not_select"
    FUNCTION = "function"  # a function outside the supported list
    NON_DETERMINISTIC = "non_deterministic"
    UNKNOWN_TABLE = "unknown_table"
    UNKNOWN_COLUMN = "unknown_column"
    RECIPIENT_ARGUMENT = "recipient_argument"  # current_recipient(...) not one string literal
    OUTPUT = "output"  # the output cannot be a Delta table (duplicate or unnamed columns)
    ENGINE = "engine"  # the engine cannot run it (a type mismatch found when binding)


class ViewDefinitionError(ValueError):
    """A view's SQL refused: ``reason`` says which rule, the message names the part."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
