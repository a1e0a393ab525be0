"""A curator imports a JSONL file from the dataset page, watches it finish, and exports."""

import json

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.models import Dataset, Membership, Role

LINES = "".join(
    json.dumps(
        {
            "id": f"chat-{i}",
            "messages": [
                {"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": f"answer {i}"},
            ],
        }
    )
    + "\n"
    for i in range(30)
)
# Chat ML has no developer role: each of these loses it when exported as chatml.
DEVELOPER_LINES = "".join(
    json.dumps(
        {
            "id": f"dev-{i}",
            "messages": [
                {"role": "developer", "content": "Answer in French."},
                {"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": f"réponse {i}"},
            ],
        }
    )
    + "\n"
    for i in range(30)
)


@pytest.fixture
def curator_page(live_server, page, transactional_db):
    user = get_user_model().objects.create_user("cur", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    page.goto(f"{live_server.url}/accounts/login/?next=/datasets/support/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()
    return page


def test_import_then_export(curator_page, live_server, tmp_path, screenshot):
    page = curator_page
    expect(page.get_by_role("heading", name="Support chats")).to_be_visible()
    source = tmp_path / "batch.jsonl"
    source.write_text(LINES, encoding="utf-8")
    page.get_by_test_id("import-form").get_by_label("File").set_input_files(str(source))
    screenshot("dataset")
    page.get_by_role("button", name="Import").click()

    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)
    expect(page.locator('[data-testid="import-report"] tr[data-action="created"]')).to_have_count(
        30
    )
    screenshot("import-finished")

    page.get_by_role("link", name="Support chats").click()
    expect(page.locator("tr[data-transcript]")).to_have_count(30)
    page.get_by_test_id("export-form").get_by_label("Spec").select_option("openchatml-2.2")
    # The preview is its own request, checking every transcript: slower under a full suite's load.
    expect(page.get_by_test_id("export-nothing-lost")).to_have_text(
        "Nothing is lost: 30 transcripts export whole.", timeout=15_000
    )
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download JSONL").click()
    download = download_info.value
    lines = [json.loads(line) for line in download.path().read_text("utf-8").splitlines()]
    assert len(lines) == 30
    assert {line["spec"] for line in lines} == {"openchatml-2.2"}


def test_an_export_prepared_in_the_background_shows_its_losses_and_downloads(
    curator_page, live_server, tmp_path, screenshot
):
    page = curator_page
    source = tmp_path / "batch.jsonl"
    source.write_text(DEVELOPER_LINES, encoding="utf-8")
    page.get_by_test_id("import-form").get_by_label("File").set_input_files(str(source))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)

    page.get_by_role("link", name="Support chats").click()
    page.get_by_test_id("export-form").get_by_label("Spec").select_option("chatml")
    # Said as soon as the spec is chosen, before any download.
    expect(
        page.get_by_test_id("export-preview").get_by_test_id("export-loss-summary")
    ).to_contain_text("30 transcripts lose role")
    screenshot("export-preview")
    page.get_by_test_id("export-in-background").click()
    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)
    expect(page.get_by_text("30 of 30 transcripts written")).to_be_visible()
    expect(page.get_by_test_id("export-loss-summary")).to_contain_text("30 transcripts lose role")
    screenshot("export-finished")
    with page.expect_download() as download_info:
        page.get_by_test_id("export-download").click()
    lines = download_info.value.path().read_text("utf-8").splitlines()
    assert len(lines) == 30
    assert {json.loads(line)["spec"] for line in lines} == {"chatml"}

    page.get_by_role("link", name="Support chats").click()
    expect(page.get_by_test_id("export-tasks").get_by_role("link")).to_have_count(1)


def test_a_large_import_report_pages_and_shows_the_failures_at_a_click(
    curator_page, tmp_path, screenshot
):
    page = curator_page
    broken = {100, 230, 249}  # lines that are not JSON
    source = tmp_path / "big.jsonl"
    source.write_text(
        "".join(
            "{not json\n"
            if n in broken
            else json.dumps({"id": f"big-{n}", "messages": [{"role": "user", "content": f"q{n}"}]})
            + "\n"
            for n in range(1, 251)
        ),
        encoding="utf-8",
    )
    form = page.get_by_test_id("import-form")
    form.get_by_label("File").set_input_files(str(source))
    form.get_by_label("Import the readable items").check()
    page.get_by_role("button", name="Import").click()

    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)
    report = page.get_by_test_id("import-report")
    expect(report.locator("tbody tr")).to_have_count(200)
    expect(page.get_by_test_id("report-range")).to_have_text("Items 1\N{EN DASH}200 of 250")
    screenshot("first-page")

    page.get_by_test_id("report-actions").get_by_role("link", name="3 failed").click()
    expect(report.locator('tr[data-action="failed"]')).to_have_count(3)
    expect(report.locator('tr[data-action="created"]')).to_have_count(0)
    expect(report).to_contain_text("big.jsonl:230")
    screenshot("failed-only")

    page.get_by_test_id("report-actions").get_by_role("link", name="all 250").click()
    page.get_by_role("link", name="Next").click()
    expect(report.locator("tbody tr")).to_have_count(50)
    expect(page.get_by_test_id("report-range")).to_have_text("Items 201\N{EN DASH}250 of 250")
