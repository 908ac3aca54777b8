"""schemathesis hooks of test/contract/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

1. Format "rut" (schemas/http/common.schema.json): the pattern alone gives a right check digit
   one time in eleven; this draws RUTs with the modulo-11 check digit, as the api validates them.
2. POST /dtes: a body generated from scratch almost never passes what no schema states (the
   amounts' arithmetic, the SII decimal places), so one draw among others is one of the
   document's own examples (DTE_ST_FIXTURES "dte_examples", rut_emisor set to the company's).
   POST /caf and POST /certificates take signed files no generator can make (a CAF signed by the
   SII's key for the company's RUT, a PKCS#12 with its password). Each generated body is sent as
   generated or, as one draw among others, with one of the real files the test made for this run
   (DTE_ST_FIXTURES: {"cafs": [xml], "certificates": [{"p12": base64, "password": str}]}); the
   other fields stay generated.
3. Idempotency-Key: see fresh_idempotency_key.
"""

import base64
import itertools
import json
import os

import schemathesis
from hypothesis import strategies as st


def check_digit(body: int) -> str:
    total, factor = 0, 2
    while body:
        total += (body % 10) * factor
        body //= 10
        factor = 2 if factor == 7 else factor + 1
    rest = 11 - total % 11
    return "K" if rest == 10 else "0" if rest == 11 else str(rest)


schemathesis.openapi.format(
    "rut", st.integers(min_value=1_000_000, max_value=99_999_999).map(lambda n: f"{n}-{check_digit(n)}")
)

with open(os.environ["DTE_ST_FIXTURES"], encoding="utf-8") as fd:
    FIXTURES = json.load(fd)
CAFS = [xml.encode("latin-1") for xml in FIXTURES["cafs"]]
CERTS = [(base64.b64decode(c["p12"]), c["password"]) for c in FIXTURES["certificates"]]
DTE_EXAMPLES = FIXTURES["dte_examples"]
# each draw takes the next file (hypothesis would draw the first one over and over, and a file
# loaded twice is a 409 duplicate); past the last one they repeat
CAF_FILES = itertools.cycle(CAFS)
P12_FILES = itertools.cycle(CERTS)


@schemathesis.hook("flatmap_body").apply_to(method="POST", path="/dtes")
def documented_dte_example(context, body):
    return st.one_of(st.just(body), st.sampled_from(DTE_EXAMPLES))


@schemathesis.hook("flatmap_body").apply_to(method="POST", path="/caf")
def real_caf_file(context, body):
    if not isinstance(body, dict):
        return st.just(body)
    # the documented fields only: a generated extra field may carry a name no multipart parser reads
    real = st.builds(lambda: {"file": next(CAF_FILES)})
    return st.one_of(st.just(body), real, real)


@schemathesis.hook("flatmap_body").apply_to(method="POST", path="/certificates")
def real_p12_file(context, body):
    if not isinstance(body, dict):
        return st.just(body)
    label = body.get("label") if isinstance(body.get("label"), str) else "fuzz"
    real = st.builds(lambda: dict(zip(("file", "password"), next(P12_FILES)), label=label))
    return st.one_of(st.just(body), real, real)


# Idempotency-Key: a client sends a fresh key with each new document or subscription. The
#    coverage and examples phases reuse one generated key for every body, and the fuzzer's keys
#    repeat, so each later body is a 409 idempotency_conflict (correct, and covered by the api
#    tests) instead of reaching the emission. A key it generated as valid is made unique here;
#    a missing or invalid one (a negative case) is left as it is.
import uuid  # noqa: E402


def fresh_idempotency_key(context, headers):
    if not isinstance(headers, dict):
        return headers
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and key.strip() and len(key) <= 255:
        headers = {**headers, "Idempotency-Key": f"st-{uuid.uuid4()}"}
    return headers


@schemathesis.hook("map_headers").apply_to(method="POST", path="/dtes")
def fresh_key_dtes(context, headers):
    return fresh_idempotency_key(context, headers)


@schemathesis.hook("map_headers").apply_to(method="POST", path="/webhooks")
def fresh_key_webhooks(context, headers):
    return fresh_idempotency_key(context, headers)


@schemathesis.hook("map_headers").apply_to(method="POST", path="/dtes/{id}/derive")
def fresh_key_derive(context, headers):
    return fresh_idempotency_key(context, headers)
