"""The functions a view may call, as sqlglot's expression classes (the Databricks dialect
parses each name into one of them), and those refused as non-deterministic."""

from __future__ import annotations

from sqlglot import exp

RECIPIENT_FUNCTION = "current_recipient"

# The same SQL must give the same rows for the same source version and binding: a
# materialization is computed once and served many times.
NON_DETERMINISTIC: tuple[type[exp.Expression], ...] = (
    exp.Rand,
    exp.Randn,
    exp.Uuid,
    exp.Shuffle,
    exp.CurrentTimestamp,
    exp.CurrentDate,
    exp.CurrentTime,
    exp.CurrentDatetime,
    exp.CurrentUser,
)

_STRING: tuple[type[exp.Expression], ...] = (
    exp.Upper,
    exp.Lower,
    exp.Length,
    exp.Trim,
    exp.Substring,
    exp.Concat,
    exp.ConcatWs,
    exp.RegexpReplace,
    exp.RegexpExtract,
    exp.RegexpLike,
    exp.Replace,
    exp.Translate,
    exp.Left,
    exp.Right,
    exp.Pad,
    exp.Initcap,
    exp.StrPosition,
    exp.Reverse,
    exp.Repeat,
    exp.Hex,
)
_HASH: tuple[type[exp.Expression], ...] = (exp.SHA, exp.SHA2, exp.MD5)
_CONDITIONAL: tuple[type[exp.Expression], ...] = (
    exp.Case,
    exp.If,
    exp.Coalesce,
    exp.Nullif,
)
# sqlglot parses these operators into function classes
_LOGIC: tuple[type[exp.Expression], ...] = (exp.And, exp.Or, exp.Xor, exp.Exists)
_CAST: tuple[type[exp.Expression], ...] = (exp.Cast, exp.TryCast)
_DATE_TIME: tuple[type[exp.Expression], ...] = (
    exp.Year,
    exp.Month,
    exp.Day,
    exp.Hour,
    exp.Minute,
    exp.Second,
    exp.DayOfWeek,
    exp.DayOfMonth,
    exp.DayOfYear,
    exp.WeekOfYear,
    exp.Quarter,
    exp.DateAdd,
    exp.DateSub,
    exp.DateDiff,
    exp.TsOrDsAdd,
    exp.TsOrDsToDate,
    exp.TimeStrToTime,
    exp.TimeToStr,
    exp.StrToTime,
    exp.StrToDate,
    exp.UnixToTime,
    exp.UnixToStr,
    exp.DateTrunc,
    exp.TimestampTrunc,
    exp.AddMonths,
    exp.MonthsBetween,
    exp.LastDay,
    exp.Extract,
)
_ARITHMETIC: tuple[type[exp.Expression], ...] = (
    exp.Abs,
    exp.Round,
    exp.Floor,
    exp.Ceil,
    exp.Mod,
    exp.IntDiv,
    exp.Pow,
    exp.Sqrt,
    exp.Sign,
    exp.Greatest,
    exp.Least,
)
# Allowed in views recomputed whole (their shape says so).
AGGREGATES: tuple[type[exp.Expression], ...] = (
    exp.Count,
    exp.Sum,
    exp.Avg,
    exp.Min,
    exp.Max,
)

SUPPORTED: tuple[type[exp.Expression], ...] = (
    _STRING + _HASH + _CONDITIONAL + _LOGIC + _CAST + _DATE_TIME + _ARITHMETIC + AGGREGATES
)

# sha2's bit lengths every engine computes (DuckDB has SHA-256 alone).
SHA2_LENGTHS = frozenset({"256"})


def function_name(node: exp.Func) -> str:
    """The name a provider wrote (or sqlglot's name for it), for a refusal's message."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()
