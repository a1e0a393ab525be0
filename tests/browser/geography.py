"""The small world several browser tests start from: a "Geography" dataset (slug ``geo``)
with an annotator ``ann`` and a curator ``cur``, and one two-message transcript, "Capital";
and logging in through the login page."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from editor.models import Dataset, Membership, Role, Transcript
from editor.storage.create import create_transcript

PASSWORD = "a-long-test-password"


def capital_text(answer: str) -> str:
    """A user's question and the assistant's ``answer`` (OpenChatML 2.2)."""
    return (
        "<|start|>user<|message|>Capital of Australia?<|end|>\n"
        f"<|start|>assistant<|channel|>final<|message|>{answer}<|end|>\n"
    )


@dataclass
class Geography:
    dataset: Dataset
    transcript: Transcript
    annotator: object
    curator: object


def geography(answer: str = "Canberra.") -> Geography:
    """Create the world (in the test's database: call it from a ``transactional_db`` fixture,
    the live server reads what the test wrote)."""
    users = get_user_model().objects
    annotator = users.create_user("ann", password=PASSWORD)
    curator = users.create_user("cur", password=PASSWORD)
    dataset = Dataset.objects.create(name="Geography", slug="geo")
    Membership.objects.create(user=annotator, dataset=dataset, role=Role.ANNOTATOR)
    Membership.objects.create(user=curator, dataset=dataset, role=Role.CURATOR)
    transcript = create_transcript(
        dataset, author=annotator, text=capital_text(answer), spec="openchatml-2.2", title="Capital"
    )
    return Geography(dataset, transcript, annotator, curator)


def log_in(page, live_server, username: str, path: str = "/") -> None:
    page.goto(f"{live_server.url}/accounts/login/?next={path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
