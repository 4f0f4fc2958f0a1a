"""Property: the parsers of what a client sends (SQL and JSON predicate hints, profiles)
either accept arbitrary input or refuse it with their own error, never with another
exception (one the server would answer with a 500)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from deltaport.protocol.predicates import (
    PredicateError,
    parse_json_predicate,
    parse_sql_predicate,
    predicate_to_json,
)
from deltaport.protocol.profile import ProfileError, load_profile, split_table_url

SQL_TOKENS = [
    "a", "`b c`", "st.x", "`a``b`", "date", "timestamp", "DATE '2021-01-01'",
    "TIMESTAMP '2021-06-01 00:00:00.001'", "'x'", "'it''s'", "'\\''", "1", "-1", "2.5",
    "1e3", ".5", "9223372036854775808", "true", "false", "null", "NULL", "and", "OR", "not",
    "is", "IS NOT NULL", "=", "==", "<>", "!=", "<", "<=", ">", ">=", "(", ")", "-", ".",
    "DATE", "'2021-13-45'", "TIMESTAMP 'x'", "é", "\x00", "'",
]  # fmt: skip
"""Pieces of the SQL hint grammar (and near misses), to reach past the tokenizer."""


def sql_text() -> st.SearchStrategy[str]:
    soup = st.lists(st.sampled_from(SQL_TOKENS), max_size=12).map(" ".join)
    return st.one_of(st.text(max_size=60), soup)


@settings(max_examples=400)
@given(sql_text())
def test_sql_hints_parse_or_raise_predicate_error(text: str) -> None:
    try:
        parse_sql_predicate(text, max_depth=8)
    except PredicateError:
        return


JSON_OPS = [
    "column", "literal", "isNull", "not", "and", "or", "equal", "lessThan",
    "lessThanOrEqual", "greaterThan", "greaterThanOrEqual", "in", "",
]  # fmt: skip
VALUE_TYPES = ["int", "long", "double", "float", "string", "date", "timestamp", "bool", "x"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["2021-01-01", "2021-06-01T00:00:00.001Z", "1.5", "NaN", "1e400", "-0"]),
)


def json_nodes() -> st.SearchStrategy[Any]:
    """Objects shaped like predicate nodes, with every field possibly wrong."""

    def node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.fixed_dictionaries(
            {},
            optional={
                "op": st.one_of(st.sampled_from(JSON_OPS), SCALARS),
                "name": st.one_of(st.sampled_from(["a", "st.x", ""]), SCALARS),
                "value": SCALARS,
                "valueType": st.one_of(st.sampled_from(VALUE_TYPES), SCALARS),
                "children": st.one_of(st.lists(children, max_size=3), children),
            },
        )

    return st.recursive(st.one_of(SCALARS, node(SCALARS)), node, max_leaves=12)


@settings(max_examples=400)
@given(st.one_of(json_nodes().map(json.dumps), st.text(max_size=60)))
def test_json_hints_parse_or_raise_predicate_error(text: str) -> None:
    try:
        expr = parse_json_predicate(text, max_depth=8)
    except PredicateError:
        return
    assert parse_json_predicate(predicate_to_json(expr)) == expr


PROFILE_FIELDS = {
    "shareCredentialsVersion": st.one_of(st.integers(-1, 3), SCALARS),
    "type": st.one_of(st.sampled_from(["bearer_token", "oauth_client_credentials"]), SCALARS),
    "endpoint": st.one_of(
        st.sampled_from(
            [
                "https://sharing.example.com/delta-sharing/",
                "http://[::1]:8080/ds",
                "http://[::1",
                "http://[not-an-address]/",
                "https://:80/",
                "ftp://x/",
                " https://x ",
            ]
        ),
        st.text(max_size=30),
        SCALARS,
    ),
    "tokenEndpoint": st.one_of(
        st.sampled_from(["https://login.example.com/t", "http://[x"]), SCALARS
    ),
    "clientId": SCALARS,
    "clientSecret": SCALARS,
    "scope": SCALARS,
    "expirationTime": st.one_of(
        st.sampled_from(["2021-11-12T00:12:29.0Z", "9999-12-31T23:59:59-23:59", "0000-01-01"]),
        SCALARS,
    ),
    "accessMode": st.one_of(st.sampled_from(["auto", "URL", "dir", "x"]), SCALARS),
}


@settings(max_examples=500)
@given(
    st.one_of(
        st.fixed_dictionaries({}, optional={**PROFILE_FIELDS, "bearerToken": SCALARS}).map(
            json.dumps
        ),
        st.fixed_dictionaries(
            {"shareCredentialsVersion": st.sampled_from([1, 2]), "bearerToken": st.just("t")},
            optional={k: v for k, v in PROFILE_FIELDS.items() if k != "shareCredentialsVersion"},
        ).map(json.dumps),
        st.text(max_size=40).map(lambda t: "{" + t),
        st.binary(max_size=40),
    )
)
@example(json.dumps({"shareCredentialsVersion": 1, "endpoint": "http://[::1", "bearerToken": "t"}))
@example(json.dumps({"shareCredentialsVersion": 1, "endpoint": "http://[x]/", "bearerToken": "t"}))
def test_profiles_load_or_raise_profile_error(source: str | bytes) -> None:
    try:
        profile = load_profile(source)
    except ProfileError:
        return
    assert profile.endpoint.startswith(("http://", "https://"))


@given(st.text(max_size=40))
def test_table_urls_split_or_raise_profile_error(url: str) -> None:
    try:
        parts = split_table_url(url)
    except ProfileError:
        return
    assert "#".join([parts[0], ".".join(parts[1:])]) == url
