"""A curator exports DPO pairs from the dataset page: picks the preference format and the
sources, sees how many pairs go out and how many are left out, downloads the rows; then
prepares the same pairs as a Parquet file in the background."""

import io
import json

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.importing import import_transcripts
from editor.models import Dataset, Membership, PreferencePair, Role
from editor.pairs import exclude_pair
from tests.browser.conftest import settled

ROWS = [
    {
        "prompt": [{"role": "user", "content": f"Question {n}?"}],
        "chosen": [{"role": "assistant", "content": f"Good answer {n}."}],
        "rejected": [{"role": "assistant", "content": f"Bad answer {n}."}],
    }
    for n in range(4)
]


@pytest.fixture
def curator_page(live_server, page, transactional_db):
    user = get_user_model().objects.create_user("cur", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    data = "".join(json.dumps(row) + "\n" for row in ROWS).encode()
    import_transcripts(data, dataset=dataset, author=user, name="pairs.jsonl")
    exclude_pair(PreferencePair.objects.order_by("pk").last(), user)
    page.goto(f"{live_server.url}/accounts/login/?next=/datasets/support/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    return page


def test_a_curator_exports_dpo_pairs(curator_page, screenshot):
    page = curator_page
    expect(page.get_by_role("heading", name="Support chats")).to_be_visible()
    settled(page)
    form = page.get_by_test_id("export-form")
    form.get_by_label("Format").select_option("preference")
    settled(page)
    form.get_by_label("imported pairs").check()
    settled(page)
    expect(page.get_by_test_id("export-pairs")).to_contain_text("3 pairs exported")
    expect(page.get_by_test_id("export-left-out")).to_contain_text("1 excluded")
    page.get_by_test_id("export-pairs").scroll_into_view_if_needed()
    screenshot("preference-preview")

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download JSONL").click()
    rows = [json.loads(line) for line in download_info.value.path().read_text().splitlines()]
    assert [row["chosen"][0]["content"] for row in rows] == [
        "Good answer 0.",
        "Good answer 1.",
        "Good answer 2.",
    ]
    assert all(set(row) == {"prompt", "chosen", "rejected", "provenance"} for row in rows)
    assert {row["provenance"]["source"] for row in rows} == {"import"}

    form.get_by_label("File").select_option("parquet")
    settled(page)
    page.get_by_test_id("export-in-background").click()
    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)
    screenshot("preference-parquet-ready")
    with page.expect_download() as parquet_info:
        page.get_by_role("link", name="Download").first.click()
    assert parquet_info.value.suggested_filename == "support-preference.parquet"
    table = pq.read_table(io.BytesIO(parquet_info.value.path().read_bytes()))
    assert table.num_rows == 3
    assert {"prompt", "chosen", "rejected", "provenance"} <= set(table.column_names)
