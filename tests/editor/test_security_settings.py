"""The security headers, the production settings and login throttling (django-axes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

pytestmark = pytest.mark.django_db

PROJECT = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-test-password"


def directives(response) -> dict[str, str]:
    policy = response["Content-Security-Policy"]
    return {
        name: value.strip()
        for name, _, value in (part.strip().partition(" ") for part in policy.split(";"))
    }


def test_pages_carry_a_strict_content_security_policy(client):
    policy = directives(client.get(reverse("login")))
    assert policy["default-src"] == "'self'"
    assert policy["img-src"] == "'self'"
    assert policy["object-src"] == "'none'"
    assert policy["base-uri"] == "'none'"
    assert policy["form-action"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert "script-src" not in policy  # default-src 'self' covers scripts and styles
    assert "style-src" not in policy


def test_only_the_api_docs_page_may_show_data_images(client, curator):
    client.force_login(curator)
    assert directives(client.get("/api/v1/docs"))["img-src"] == "'self' data:"
    assert directives(client.get(reverse("dashboard")))["img-src"] == "'self'"


def test_pages_may_not_be_framed_nor_leak_the_referrer(client):
    response = client.get(reverse("login"))
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_templates_have_no_inline_script_style_or_event_handler():
    # The policy would block them: a page relying on one would break silently in browsers.
    forbidden = ("style=", "<style", "<script>", "hx-on", " onclick=", " onload=", "javascript:")
    for template in (PROJECT / "templates").rglob("*.html"):
        text = template.read_text()
        for word in forbidden:
            assert word not in text, f"{template.relative_to(PROJECT)} has {word!r}"


def test_template_comments_close_on_their_line(client):
    # Django's {# #} is one line only: one left open runs on and is shown on the page.
    for template in (PROJECT / "templates").rglob("*.html"):
        for number, line in enumerate(template.read_text().splitlines(), 1):
            assert line.count("{#") == line.count("#}"), (
                f"{template.relative_to(PROJECT)}:{number} opens a comment it does not close"
            )
    assert "{#" not in client.get(reverse("login")).content.decode()


def test_local_runs_stay_plain_http():
    # The test run, like `make run`, leaves DJANGO_DEBUG unset: a development setup.
    if os.environ.get("DJANGO_DEBUG", "true").lower() not in {"1", "true", "yes", "on"}:
        pytest.skip("DJANGO_DEBUG is false in this environment")
    assert settings.SECURE_SSL_REDIRECT is False
    assert settings.SESSION_COOKIE_SECURE is False
    assert settings.SECURE_HSTS_SECONDS == 0


def deploy_check(tmp_path, **variables) -> subprocess.CompletedProcess:
    """`check --deploy --fail-level WARNING` with production environment variables."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("DJANGO_") and key != "DATABASE_URL"
    }
    environment.update(
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="x7!" + "k2-Qz9vLp4_Rt8wYb3nM" * 4,
        DJANGO_ALLOWED_HOSTS="workbench.example.org",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        **variables,
    )
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_checks_pass_with_production_settings(tmp_path):
    result = deploy_check(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_plain_http_in_production_must_be_asked_for_and_is_reported(tmp_path):
    result = deploy_check(tmp_path, DJANGO_HTTPS_ONLY="false")
    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr + result.stdout


# --- passwords ---------------------------------------------------------------------------


def test_a_new_password_is_hashed_with_argon2id_in_one_lane(django_user_model):
    user = django_user_model.objects.create_user("fresh", password=PASSWORD)
    assert user.password.startswith("argon2$argon2id$v=19$m=65536,t=2,p=1$")
    assert user.check_password(PASSWORD)


@pytest.mark.parametrize(
    "hasher_path",
    [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.Argon2PasswordHasher",  # Django's parameters: eight lanes
    ],
)
def test_a_hash_made_before_still_logs_in_and_is_made_again(client, django_user_model, hasher_path):
    from django.utils.module_loading import import_string

    hasher = import_string(hasher_path)()
    user = django_user_model.objects.create_user("older")
    user.password = hasher.encode(PASSWORD, hasher.salt())
    user.save(update_fields=["password"])

    response = client.post(reverse("login"), {"username": "older", "password": PASSWORD})

    assert response.status_code == 302
    user.refresh_from_db()
    assert user.password.startswith("argon2$argon2id$v=19$m=65536,t=2,p=1$")


# --- login throttling --------------------------------------------------------------------


@pytest.fixture
def member(django_user_model, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return django_user_model.objects.create_user("member", password=PASSWORD)


def log_in(client, password: str, username: str = "member", address: str = "127.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def fail(client, times: int, **kwargs) -> None:
    for _ in range(times):
        response = log_in(client, "wrong password", **kwargs)
        assert response.status_code == 200  # the login form again, with its error


def lock_out(client, **kwargs) -> None:
    """Fail as often as allowed: the last failure already answers with the lockout page."""
    fail(client, settings.AXES_FAILURE_LIMIT - 1, **kwargs)
    assert log_in(client, "wrong password", **kwargs).status_code == 429


def test_the_eleventh_attempt_is_refused_even_with_the_right_password(client, member):
    lock_out(client)
    response = log_in(client, PASSWORD)
    assert response.status_code == 429
    assert b'data-testid="locked-out"' in response.content
    assert b"blocked for it for 15 minutes" in response.content
    assert "_auth_user_id" not in client.session


def test_a_lockout_holds_one_username_from_one_address(client, member, django_user_model):
    django_user_model.objects.create_user("colleague", password=PASSWORD)
    lock_out(client)
    assert log_in(client, PASSWORD, address="10.0.0.2").status_code == 302
    client.logout()
    assert log_in(client, PASSWORD, username="colleague").status_code == 302


def test_a_successful_login_resets_the_count(client, member):
    fail(client, settings.AXES_FAILURE_LIMIT - 1)
    assert log_in(client, PASSWORD).status_code == 302
    client.logout()
    fail(client, settings.AXES_FAILURE_LIMIT - 1)
    assert log_in(client, PASSWORD).status_code == 302


BEHIND_ONE_PROXY = {
    "AXES_IPWARE_PROXY_COUNT": 1,
    "AXES_IPWARE_META_PRECEDENCE_ORDER": ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"),
}


def test_behind_a_proxy_the_client_address_is_the_one_the_proxy_forwards(client, member):
    def through_the_proxy(password: str, forwarded_for: str):
        # Every request comes from the proxy (10.0.0.1); the client is what it forwards.
        return client.post(
            reverse("login"),
            {"username": "member", "password": password},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR=forwarded_for,
        )

    with override_settings(**BEHIND_ONE_PROXY):
        for _ in range(settings.AXES_FAILURE_LIMIT):
            through_the_proxy("wrong", "203.0.113.7")
        assert through_the_proxy(PASSWORD, "203.0.113.7").status_code == 429
        # The same username from another client behind the same proxy still logs in; a
        # client that forges the header is only the address left of the proxy's own.
        assert through_the_proxy(PASSWORD, "198.51.100.4, 198.51.100.9").status_code == 302


def test_the_proxy_count_comes_from_the_environment(monkeypatch):
    import importlib

    import ocm_site.settings as site_settings

    monkeypatch.setenv("DJANGO_PROXY_COUNT", "2")
    try:
        reloaded = importlib.reload(site_settings)
        assert reloaded.AXES_IPWARE_PROXY_COUNT == 2
        assert reloaded.AXES_IPWARE_META_PRECEDENCE_ORDER[0] == "HTTP_X_FORWARDED_FOR"
    finally:
        monkeypatch.delenv("DJANGO_PROXY_COUNT")
        importlib.reload(site_settings)


def test_a_web_worker_builds_its_urls_as_it_starts_not_in_its_first_request(tmp_path):
    script = (
        "import sys, ocm_site.wsgi\nprint('api.api' in sys.modules, 'editor.urls' in sys.modules)\n"
    )
    environment = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split() == ["True", "True"]
