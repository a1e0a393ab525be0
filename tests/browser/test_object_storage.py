"""With uploads and exports in a bucket (moto's S3 server): a curator imports from the dataset
page, prepares an export and downloads it; the browser follows the redirect to the signed URL
and saves the file under the name the bucket's answer gives."""

import json

from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from editor.models import Dataset, Membership, Role

# The bucket's fixtures, for this one browser test.
from tests.objectstore.conftest import (  # noqa: F401
    PREFIX,
    aws_environment,
    bucket,
    s3_endpoint,
)

LINES = "".join(
    json.dumps({"id": f"chat-{i}", "messages": [{"role": "user", "content": f"question {i}"}]})
    + "\n"
    for i in range(12)
)


def test_import_and_prepared_export_through_the_bucket(
    live_server,
    page,
    transactional_db,
    bucket,  # noqa: F811 (the fixture imported above)
    settings,
    tmp_path,
    screenshot,
):
    user = get_user_model().objects.create_user("cur", password="a-long-test-password")
    dataset = Dataset.objects.create(name="Support chats", slug="support")
    Membership.objects.create(user=user, dataset=dataset, role=Role.CURATOR)
    page.goto(f"{live_server.url}/accounts/login/?next=/datasets/support/")
    page.get_by_label("Username").fill("cur")
    page.get_by_label("Password").fill("a-long-test-password")
    page.get_by_role("button", name="Log in").click()

    source = tmp_path / "batch.jsonl"
    source.write_text(LINES, encoding="utf-8")
    page.get_by_test_id("import-form").get_by_label("File").set_input_files(str(source))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)
    assert bucket.keys(f"{PREFIX}/uploads/") == []  # imported, then removed

    page.get_by_role("link", name="Support chats").click()
    page.get_by_test_id("export-form").get_by_label("Spec").select_option("openchatml-2.2")
    page.get_by_test_id("export-in-background").click()
    expect(page.get_by_test_id("task-status")).to_have_text("Succeeded", timeout=20_000)
    screenshot("export-in-bucket")
    [key] = bucket.keys(f"{PREFIX}/exports/")

    with page.expect_download() as download_info:
        page.get_by_test_id("export-download").click()
    download = download_info.value
    assert download.suggested_filename == "support-openchatml-2.2.jsonl"
    assert download.url.startswith(f"{bucket.endpoint}/{bucket.name}/{key}?")
    saved = download.path().read_bytes()
    assert saved == bucket.read(key)
    assert len(saved.splitlines()) == 12
    assert not settings.OCM_UPLOAD_DIR.exists() and not settings.OCM_EXPORT_DIR.exists()
