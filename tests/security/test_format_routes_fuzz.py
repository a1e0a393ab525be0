"""The stateless format routes (/validate, /convert, /render) fuzzed with chat markup, not
just schema-shaped strings: control-token soup, every spec's samples cut and spliced, deep
and huge JSON. Whatever the text, the answer is 200 with the route's shape or a 4xx JSON
error, never a 5xx, and the same text answers the same way twice.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor import formats
from editor.formats.render import AUDIENCES
from tests.api.conftest import api_client_for
from tests.budget import examples
from tests.editor.samples import conversation, readable_specs
from tests.formats.test_properties_token_text import soup

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SAMPLES = [conversation(spec) for spec in readable_specs()]
specs = st.none() | st.sampled_from(sorted(formats.SPEC_IDS))


@st.composite
def spliced(draw) -> str:
    """A piece of one spec's sample followed by a piece of another's."""
    first, second = draw(st.sampled_from(SAMPLES)), draw(st.sampled_from(SAMPLES))
    cut_first = draw(st.integers(0, len(first)))
    cut_second = draw(st.integers(0, len(second)))
    return first[:cut_first] + draw(soup) + second[cut_second:]


def nested_json(depth: int) -> str:
    return '{"messages": [' + '{"a": [' * depth + "1" + "]}" * depth + "]}"


texts = st.one_of(
    soup,
    spliced(),
    st.text(max_size=200),
    st.integers(100, 5000).map(nested_json),
    st.integers(1, 300).map(lambda n: "[" * n * 100),
    st.sampled_from(SAMPLES).map(
        lambda s: s.replace("<|message|>", "<|message|>" + "x" * 200_000, 1)
    ),
)


def post(client, route: str, body: dict):
    return client.client.post(
        f"/api/v1/{route}",
        json.dumps(body),
        content_type="application/json",
        headers=client.headers,
    )


def assert_answered(response, keys: set[str]) -> dict:
    assert response.status_code < 500, response.content[:2000]
    body = response.json()
    if response.status_code == 200:
        assert keys <= body.keys(), body.keys()
    else:
        assert response.status_code in (413, 422), response.content[:2000]
        assert {"code", "message"} <= body.keys()
    return body


@pytest.fixture
def client(viewer):
    return api_client_for(viewer)


@FUZZ
@given(text=texts, spec=specs)
def test_validate_answers_any_text(client, text, spec):
    body = {"text": text, "spec": spec}
    first = assert_answered(post(client, "validate", body), {"spec", "messages", "diagnostics"})
    assert assert_answered(post(client, "validate", body), set()) == first


@FUZZ
@given(text=texts, source=specs, target=st.sampled_from(sorted(formats.SPEC_IDS)))
def test_convert_answers_any_text(client, text, source, target):
    body = {"text": text, "from": source, "to": target}
    assert_answered(post(client, "convert", body), {"spec", "text", "losses"})


@FUZZ
@given(text=texts, spec=specs, audience=st.sampled_from(AUDIENCES))
def test_render_answers_any_text(client, text, spec, audience):
    body = {"text": text, "spec": spec, "audience": audience}
    assert_answered(post(client, "render", body), set())
