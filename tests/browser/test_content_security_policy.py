"""Every kind of page works under the strict Content Security Policy: the browser reports no
violation (an inline script, style or a data: image would be one) on our pages, the admin
and the API docs."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from editor.models import Transcript


@pytest.fixture
def violations(page):
    """The CSP violations the browser reports, as console messages."""
    seen = []

    def keep_violations(message):
        if "Content Security Policy" in message.text:
            seen.append(message.text)

    page.on("console", keep_violations)
    return seen


@pytest.fixture
def logged_in(live_server, page, transactional_db):
    call_command("load_demo", verbosity=0)
    get_user_model().objects.create_superuser("boss", password="a-long-test-password")
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_test_id("current-user")).to_have_text("boss")
    return page


def test_the_policy_is_sent(live_server, page):
    response = page.goto(f"{live_server.url}/accounts/login/")
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy


def test_app_pages_run_without_violations(logged_in, live_server, violations):
    page = logged_in
    transcript = Transcript.objects.order_by("pk").first()
    for path in (
        "/",
        f"/transcripts/{transcript.pk}/",
        f"/transcripts/{transcript.pk}/?audience=annotator",
        f"/transcripts/{transcript.pk}/source/",
        f"/transcripts/{transcript.pk}/history/",
    ):
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
    # htmx works (allowEval false, no indicator styles): switching the audience swaps in place.
    page.goto(f"{live_server.url}/transcripts/{transcript.pk}/")
    page.get_by_role("link", name="Annotator").click()
    expect(page.locator("#transcript-messages")).to_have_attribute("data-audience", "annotator")
    assert violations == []


def test_admin_and_api_docs_run_without_violations(logged_in, live_server, violations):
    page = logged_in
    page.goto(f"{live_server.url}/admin/")
    expect(page.get_by_role("link", name="Transcripts")).to_be_visible()
    page.goto(f"{live_server.url}/api/v1/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("OCM transcript workbench")
    # An opened operation draws swagger's data: icons (the docs page's own img-src allows them).
    page.locator(".opblock-summary").first.click()
    expect(page.get_by_role("button", name="Try it out")).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert violations == []
