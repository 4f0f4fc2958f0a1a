"""The documents that scope vended credentials, asserted exactly: no emulator enforces an
S3 session policy (moto) or a GCS access boundary, and Azurite does not check directory SAS."""

from __future__ import annotations

import base64
import hmac
import json
from datetime import UTC, datetime
from urllib.parse import parse_qs

import pytest

from deltaport.storage import parse_location
from deltaport.storage.credentials import (
    CredentialSettings,
    PolicyTooLargeError,
    StorageHints,
    storage_hints,
    vendor_problem,
)
from deltaport.storage.credentials.azure import directory_sas
from deltaport.storage.credentials.azure_identity import DelegationKey
from deltaport.storage.credentials.gcs import access_boundary, google_boundary
from deltaport.storage.credentials.s3 import MAX_POLICY_CHARS, policy_text

# Session policies as STS receives them, written out from AWS's documentation: the
# "read objects in a folder" example of the IAM user guide (GetObject on ``folder/*``,
# ListBucket conditioned on ``s3:prefix``), the policy-variable escapes ``${*}``, ``${?}``
# and ``${$}`` for literal characters, and ``kms:ViaService`` = ``s3.<region>.amazonaws.com``.
S3_POLICIES = {
    "tables/sales": """{"Version":"2012-10-17","Statement":[
        {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
         "Resource":"arn:aws:s3:::bkt/tables/sales/*"},
        {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
         "Resource":"arn:aws:s3:::bkt",
         "Condition":{"StringLike":{"s3:prefix":["tables/sales","tables/sales/*"]}}}]}""",
    "a*b/t?x/": """{"Version":"2012-10-17","Statement":[
        {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
         "Resource":"arn:aws:s3:::bkt/a${*}b/t${?}x/*"},
        {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
         "Resource":"arn:aws:s3:::bkt",
         "Condition":{"StringLike":{"s3:prefix":["a${*}b/t${?}x","a${*}b/t${?}x/*"]}}}]}""",
    "cost$/${aws:username}/t": """{"Version":"2012-10-17","Statement":[
        {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
         "Resource":"arn:aws:s3:::bkt/cost${$}/${$}{aws:username}/t/*"},
        {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
         "Resource":"arn:aws:s3:::bkt",
         "Condition":{"StringLike":{"s3:prefix":
            ["cost${$}/${$}{aws:username}/t","cost${$}/${$}{aws:username}/t/*"]}}}]}""",
    "q'uo\"te/ sp ace": """{"Version":"2012-10-17","Statement":[
        {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
         "Resource":"arn:aws:s3:::bkt/q'uo\\"te/ sp ace/*"},
        {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
         "Resource":"arn:aws:s3:::bkt",
         "Condition":{"StringLike":{"s3:prefix":["q'uo\\"te/ sp ace","q'uo\\"te/ sp ace/*"]}}}]}""",
}
S3_ROOT_WITH_KMS = """{"Version":"2012-10-17","Statement":[
    {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
     "Resource":"arn:aws:s3:::bkt/*"},
    {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
     "Resource":"arn:aws:s3:::bkt"},
    {"Sid":"DecryptThroughS3","Effect":"Allow","Action":"kms:Decrypt",
     "Resource":"arn:aws:kms:ap-south-1:1:key/k",
     "Condition":{"StringEquals":{"kms:ViaService":"s3.ap-south-1.amazonaws.com"}}}]}"""


@pytest.mark.parametrize("path", list(S3_POLICIES))
def test_s3_session_policy(path: str) -> None:
    text = policy_text(parse_location(f"s3://bkt/{path}"), CredentialSettings(), {})
    assert json.loads(text) == json.loads(S3_POLICIES[path])
    assert " " not in text.replace(" sp ace", "")


def test_s3_policy_with_kms_and_at_bucket_root() -> None:
    settings = CredentialSettings(aws_kms_key="arn:aws:kms:ap-south-1:1:key/k")
    text = policy_text(parse_location("s3://bkt/"), settings, {"aws_region": "ap-south-1"})
    assert json.loads(text) == json.loads(S3_ROOT_WITH_KMS)
    text = policy_text(
        parse_location("s3://bkt/t"),
        CredentialSettings(aws_kms_key="*"),
        {"aws_region": "eu-north-1"},
    )
    assert json.loads(text)["Statement"][2]["Condition"]["StringEquals"] == {
        "kms:ViaService": "s3.eu-north-1.amazonaws.com"
    }


def test_s3_policy_too_large_is_refused_not_widened() -> None:
    settings = CredentialSettings(aws_role_arn="arn:aws:iam::1:role/r")
    long_path = "s3://bkt/" + "/".join(["segment"] * 120)
    with pytest.raises(PolicyTooLargeError, match=str(MAX_POLICY_CHARS)):
        policy_text(parse_location(long_path), settings, {})
    # wildcards grow the policy as they are escaped
    starry = "s3://bkt/" + "*" * 300
    assert "characters" in (vendor_problem(parse_location(starry), {}, settings) or "")
    assert vendor_problem(parse_location("s3://bkt/short"), {}, settings) is None


GCS_CASES = [
    ("tables/sales", '"projects/_/buckets/b/objects/tables/sales/"', '"tables/sales/"'),
    ("a*b?c$d", '"projects/_/buckets/b/objects/a*b?c$d/"', '"a*b?c$d/"'),
    (
        "q\"uo'te\\x/t",
        '"projects/_/buckets/b/objects/q\\"uo\'te\\\\x/t/"',
        '"q\\"uo\'te\\\\x/t/"',
    ),
    ("new\nline", '"projects/_/buckets/b/objects/new\\nline/"', '"new\\nline/"'),
]


@pytest.mark.parametrize(("prefix", "objects", "listing"), GCS_CASES)
def test_gcs_access_boundary(prefix: str, objects: str, listing: str) -> None:
    expected = {
        "accessBoundary": {
            "accessBoundaryRules": [
                {
                    "availablePermissions": ["inRole:roles/storage.objectViewer"],
                    "availableResource": "//storage.googleapis.com/projects/_/buckets/b",
                    "availabilityCondition": {
                        "title": "table directory",
                        "expression": f"resource.name.startsWith({objects}) || "
                        "api.getAttribute('storage.googleapis.com/objectListPrefix', '')"
                        f".startsWith({listing})",
                    },
                }
            ]
        }
    }
    assert access_boundary("b", prefix) == expected
    # what is sent to Google's token exchange is the same document
    assert google_boundary("b", prefix).to_json() == expected


EXPIRY = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
KEY = b"0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(
    ("directory", "depth"),
    [("tables/sales", "2"), ("t", "1"), ("a b/ü/c*?$/x", "4")],
)
def test_azure_service_directory_sas(directory: str, depth: str) -> None:
    sas = directory_sas("acct", "cont", directory + "/", EXPIRY, KEY)
    # the fields of azure_sas's blob SAS (checked by Azurite), for a directory
    fields = ["rl", "", "2030-01-02T03:04:05Z", f"/blob/acct/cont/{directory}", "", "", "https"]
    assert sas.string_to_sign == "\n".join([*fields, "2022-11-02", "d", *[""] * 7])
    query = parse_qs(sas.token, keep_blank_values=True)
    signature = base64.b64encode(hmac.digest(KEY, sas.string_to_sign.encode(), "sha256")).decode()
    assert query == {
        "sv": ["2022-11-02"],
        "sr": ["d"],
        "sdd": [depth],
        "sp": ["rl"],
        "se": ["2030-01-02T03:04:05Z"],
        "spr": ["https"],
        "sig": [signature],
    }


def test_azure_user_delegation_directory_sas() -> None:
    key = DelegationKey("oid", "tid", "2030-01-01T00:00:00Z", "2030-01-03T00:00:00Z", "b", "v", KEY)
    sas = directory_sas("acct", "cont", "t/x", EXPIRY, key, https_only=False)
    assert sas.string_to_sign.split("\n") == [
        "rl",
        "",
        "2030-01-02T03:04:05Z",
        "/blob/acct/cont/t/x",
        "oid",
        "tid",
        "2030-01-01T00:00:00Z",
        "2030-01-03T00:00:00Z",
        "b",
        "v",
        "",  # saoid
        "",  # suoid
        "",  # scid
        "",  # sip
        "",  # spr: http allowed (emulators)
        "2022-11-02",
        "d",
        *[""] * 7,
    ]
    query = parse_qs(sas.token)
    assert query["skoid"] == ["oid"] and query["sktid"] == ["tid"] and query["sdd"] == ["2"]
    assert "spr" not in query


def test_azure_container_root_is_refused() -> None:
    options = {"azure_storage_account_name": "a", "azure_storage_account_key": "a2V5"}
    problem = vendor_problem(parse_location("az://cont"), options, CredentialSettings())
    assert problem is not None and "container root" in problem
    assert vendor_problem(parse_location("az://cont/t"), options, CredentialSettings()) is None
    problem = vendor_problem(
        parse_location("az://cont/t"), {"azure_storage_account_name": "a"}, CredentialSettings()
    )
    assert problem is not None and "azureManagedIdentity" in problem


def test_what_recipients_are_told_besides_the_credential() -> None:
    """S3: the bucket's region always; the endpoint only for an S3-compatible store, and
    the one recipients reach when the server reaches it by another address. Azure: the
    blob endpoint only when the options name one (an emulator, a private endpoint)."""
    s3 = parse_location("s3://b/tables/t")
    plain = CredentialSettings(aws_role_arn="arn:aws:iam::1:role/r")
    assert storage_hints(s3, {}, plain) == StorageHints(None, "us-east-1")
    assert storage_hints(s3, {"aws_region": "eu-west-1"}, plain) == StorageHints(None, "eu-west-1")
    minio = {"aws_endpoint": "http://minio.internal:9000", "aws_region": "eu-west-1"}
    assert storage_hints(s3, minio, plain) == StorageHints(
        "http://minio.internal:9000", "eu-west-1"
    )
    public = CredentialSettings(
        aws_role_arn="arn:aws:iam::1:role/r", aws_recipient_endpoint="https://s3.example.com"
    )
    assert storage_hints(s3, minio, public).endpoint == "https://s3.example.com"
    azure = parse_location("az://container/tables/t")
    assert storage_hints(azure, {"azure_storage_account_name": "a"}, plain) == StorageHints()
    emulator = {"azure_storage_endpoint": "http://127.0.0.1:10000/a/"}
    assert storage_hints(azure, emulator, plain) == StorageHints("http://127.0.0.1:10000/a")
    told = CredentialSettings(azure_recipient_endpoint="https://blobs.example.com/a")
    assert storage_hints(azure, emulator, told) == StorageHints("https://blobs.example.com/a")
