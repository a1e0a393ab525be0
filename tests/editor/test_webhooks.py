"""Webhooks (editor/webhooks/): deliveries signed as Standard Webhooks and checked by a real
receiver on 127.0.0.1, retried after a 500, kept in order per transcript, never sent twice
(a worker killed mid-delivery resends that one attempt, with the same id), endpoints disabled
after failures in a row, and URLs refused when they resolve to private addresses."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from editor import editing, queues, webhooks
from editor.errors import NotAllowed, WebhookUrlRefused
from editor.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from editor.storage.create import create_transcript
from editor.webhooks import endpoints, notices, sending
from editor.webhooks.addresses import check_url
from editor.webhooks.tasks import queue_overdue
from tests.editor.samples import conversation

pytestmark = pytest.mark.django_db

SPEC = "openchatml-2.2"


class Receiver:
    """An HTTP server in a thread: answers each POST with the next of ``statuses`` (then
    200), verifies its signature, and keeps what it got."""

    def __init__(self):
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self.secret: str | None = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["content-length"])).decode()
                headers = {key.lower(): value for key, value in self.headers.items()}
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                try:
                    verified = Webhook(receiver.secret).verify(body, headers)
                except WebhookVerificationError:
                    verified, status = False, 401
                receiver.requests.append(
                    {"headers": headers, "body": body, "verified": verified, "status": status}
                )
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok" if status < 300 else b"boom")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook?x=1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def ids(self) -> list[str]:
        return [r["headers"]["webhook-id"] for r in self.requests]

    def delivered(self) -> list[dict]:
        """Bodies of the requests answered 2xx, repeats of one id counted once."""
        seen, bodies = set(), []
        for request in self.requests:
            message_id = request["headers"]["webhook-id"]
            if request["status"] < 300 and message_id not in seen:
                seen.add(message_id)
                bodies.append(json.loads(request["body"]))
        return bodies


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def private_allowed(settings):
    settings.OCM_WEBHOOKS_ALLOW_PRIVATE = True


@pytest.fixture
def endpoint(dataset, curator, receiver, private_allowed):
    hook = endpoints.create_endpoint(dataset, curator, url=receiver.url)
    receiver.secret = hook.secret
    return hook


def make_due(*deliveries_or_endpoint) -> None:
    """What the clock does: every pending delivery given is due now."""
    past = timezone.now() - timedelta(seconds=1)
    for item in deliveries_or_endpoint:
        if isinstance(item, WebhookEndpoint):
            item.deliveries.filter(status=DeliveryStatus.PENDING).update(next_attempt_at=past)
        else:
            WebhookDelivery.objects.filter(pk=item.pk).update(next_attempt_at=past)


def test_a_delivery_is_signed_and_sent_once_the_change_commits(
    dataset, endpoint, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 7})
        assert receiver.requests == []  # not before the commit
    (request,) = receiver.requests
    assert request["verified"] == {
        "type": "export.ready",
        "timestamp": delivery.payload["timestamp"],
        "data": {"dataset": "support-chats", "export_id": 7},
    }
    assert request["headers"]["webhook-id"] == delivery.message_id
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("succeeded", 1, 200)
    assert delivery.response_body == "ok"


def test_a_wrong_secret_fails_verification(dataset, endpoint, receiver):
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 1})
    receiver.secret = endpoints.new_secret()  # the receiver knows another secret
    sending.send_due(endpoint.pk)
    assert [r["verified"] for r in receiver.requests] == [False]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.response_status) == ("pending", 401)


def test_a_500_is_retried_with_back_off_and_the_same_id(dataset, endpoint, receiver):
    receiver.statuses = [500]
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 1})
    before = timezone.now()
    sending.send_due(endpoint.pk)
    delivery.refresh_from_db()
    endpoint.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("pending", 1, 500)
    assert delivery.error == "HTTP 500" and delivery.response_body == "boom"
    wait = (delivery.next_attempt_at - before).total_seconds()
    assert sending.BACKOFF[0] - 1 <= wait <= sending.BACKOFF[0] + 1
    assert endpoint.failures_in_a_row == 1
    sending.send_due(endpoint.pk)  # not due yet: nothing sent
    assert len(receiver.requests) == 1
    make_due(delivery)
    sending.send_due(endpoint.pk)
    delivery.refresh_from_db()
    endpoint.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert receiver.ids() == [delivery.message_id, delivery.message_id]
    assert endpoint.failures_in_a_row == 0


def test_a_delivery_fails_for_good_after_its_attempts(dataset, endpoint, receiver):
    receiver.statuses = [503] * sending.MAX_ATTEMPTS
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 1})
    for _ in range(sending.MAX_ATTEMPTS):
        make_due(delivery)
        sending.send_due(endpoint.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", sending.MAX_ATTEMPTS)
    make_due(delivery)
    sending.send_due(endpoint.pk)
    assert len(receiver.requests) == sending.MAX_ATTEMPTS  # no more


def test_a_failing_delivery_holds_back_later_ones_of_its_transcript_only(
    dataset, endpoint, receiver
):
    receiver.statuses = [500]
    first = webhooks.emit(dataset, "transcript.status_changed", {"transcript_id": 1, "to": "a"})[0]
    second = webhooks.emit(dataset, "transcript.status_changed", {"transcript_id": 1, "to": "b"})[0]
    other = webhooks.emit(dataset, "transcript.status_changed", {"transcript_id": 2, "to": "c"})[0]
    sending.send_due(endpoint.pk)
    assert receiver.ids() == [first.message_id, other.message_id]  # the second waits
    second.refresh_from_db()
    first.refresh_from_db()
    assert second.attempts == 0 and second.next_attempt_at >= first.next_attempt_at
    queue_overdue()  # the held one is not overdue: the sweep leaves it
    assert len(receiver.requests) == 2
    make_due(endpoint)
    sending.send_due(endpoint.pk)
    in_order = [body["data"]["to"] for body in receiver.delivered()]
    assert in_order == ["c", "a", "b"]


def test_a_worker_killed_mid_delivery_resends_that_attempt_with_the_same_id(
    dataset, endpoint, receiver
):
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 3})
    # A worker claims the attempt and sends it, then dies before recording the outcome.
    assert sending.claim(delivery, timezone.now())
    body = sending.body_of(delivery)
    headers = sending.signed_headers(endpoint.secret, delivery.message_id, body, timezone.now())
    assert sending.post(endpoint.url, body, headers).ok
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    # Another worker meanwhile: the attempt is leased, nothing is sent twice.
    sending.send_due(endpoint.pk)
    queue_overdue()
    assert len(receiver.requests) == 1
    # The lease runs out: the task worker's sweep queues the endpoint again.
    later = timezone.now() + timedelta(seconds=sending.LEASE + sending.SWEEP_GRACE + 1)
    assert sending.due_endpoints(now=later) == [endpoint.pk]
    make_due(delivery)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        next_attempt_at=timezone.now() - timedelta(seconds=sending.SWEEP_GRACE + 1)
    )
    assert queue_overdue() == 1  # runs at once here (immediate tasks)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert receiver.ids() == [delivery.message_id, delivery.message_id]
    assert len(receiver.delivered()) == 1  # the receiver dedupes by id: one event


def test_an_attempt_is_claimed_once(dataset, endpoint):
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 3})
    other_worker = WebhookDelivery.objects.get(pk=delivery.pk)
    assert sending.claim(delivery, timezone.now())
    assert not sending.claim(other_worker, timezone.now())


def test_an_endpoint_failing_in_a_row_is_disabled_and_curators_are_told(
    dataset, endpoint, receiver, settings, curator, annotator, rf
):
    settings.OCM_WEBHOOK_MAX_FAILURES = 3
    receiver.statuses = [500] * 10
    for n in range(3):
        webhooks.emit(dataset, "export.ready", {"export_id": n})
    sending.send_due(endpoint.pk)
    endpoint.refresh_from_db()
    assert endpoint.disabled_at is not None
    assert "3 failed deliveries in a row" in endpoint.disabled_reason
    assert len(receiver.requests) == 3
    assert webhooks.emit(dataset, "export.ready", {"export_id": 9}) == []  # not while disabled
    assert notices.disabled_endpoints(dataset, curator) == [endpoint]
    assert notices.disabled_endpoints(dataset, annotator) == []
    # Enabled again: the failures start over, what waited is sent.
    endpoints.update_endpoint(endpoint, curator, enabled=True)
    endpoint.refresh_from_db()
    assert endpoint.disabled_at is None and endpoint.failures_in_a_row == 0


def test_resend_sends_the_same_message_again(dataset, endpoint, receiver, curator):
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 1})
    sending.send_due(endpoint.pk)
    endpoints.resend(delivery, curator)
    sending.send_due(endpoint.pk)
    assert receiver.ids() == [delivery.message_id] * 2
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 1)


def test_only_curators_manage_endpoints(dataset, annotator, private_allowed):
    with pytest.raises(NotAllowed):
        endpoints.create_endpoint(dataset, annotator, url="http://127.0.0.1:9/")


def test_events_are_checked(dataset, curator, private_allowed):
    with pytest.raises(Exception, match="Unknown event"):
        endpoints.create_endpoint(dataset, curator, url="http://127.0.0.1:9/", events=["nope"])
    hook = endpoints.create_endpoint(
        dataset, curator, url="http://127.0.0.1:9/", events=["queue.completed"]
    )
    assert webhooks.emit(dataset, "export.ready", {}) == []
    assert len(webhooks.emit(dataset, "queue.completed", {"queue_id": 1})) == 1
    assert hook.secret.startswith("whsec_")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8000/hook",
        "http://localhost:8000/hook",  # a name resolving to loopback
        "http://0.0.0.0/",
        "http://192.168.1.1/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
def test_private_addresses_are_refused(url, dataset, curator):
    with pytest.raises(WebhookUrlRefused):
        check_url(url)
    with pytest.raises(WebhookUrlRefused):
        endpoints.create_endpoint(dataset, curator, url=url)
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize("url", ["ftp://93.184.216.34/", "file:///etc/passwd", "http:///x", ""])
def test_only_http_urls_with_a_host(url):
    with pytest.raises(WebhookUrlRefused):
        check_url(url)


def test_a_public_address_is_allowed_and_connected_to_directly():
    target = check_url("https://93.184.216.34:8443/in?a=b")
    assert target.connect_url == "https://93.184.216.34:8443/in?a=b"
    assert target.host_header == "93.184.216.34:8443"


def test_the_address_is_checked_again_at_each_send(dataset, endpoint, receiver, settings):
    (delivery,) = webhooks.emit(dataset, "export.ready", {"export_id": 1})
    settings.OCM_WEBHOOKS_ALLOW_PRIVATE = False  # as if the name now resolved to loopback
    sending.send_due(endpoint.pk)
    assert receiver.requests == []
    delivery.refresh_from_db()
    assert delivery.status == "pending" and "cannot receive webhooks" in delivery.error


def test_domain_changes_emit_their_events(
    dataset, curator, annotator, reviewer, private_allowed, django_capture_on_commit_callbacks
):
    WebhookEndpoint.objects.create(dataset=dataset, url="http://127.0.0.1:9/", secret="whsec_AA")
    transcript = create_transcript(dataset, author=curator, text=conversation(), spec=SPEC)
    queue = queues.create_queue(dataset, [transcript], name="q", author=curator)
    assignment = queues.claim_next(queue, annotator)
    queues.submit(assignment, annotator)
    queues.review(assignment, reviewer, decision="approve")
    other = create_transcript(dataset, author=curator, text=conversation(), spec=SPEC)
    editing.apply_transition(other, "submit", expected_version=other.version, author=curator)
    events = list(WebhookDelivery.objects.order_by("pk").values_list("event_type", flat=True))
    assert events == [
        "transcript.status_changed",  # the queue's submission: in review
        "queue_item.submitted",
        "transcript.status_changed",  # approved
        "queue_item.reviewed",
        "queue.completed",
        "transcript.status_changed",
    ]
    changed = WebhookDelivery.objects.filter(event_type="transcript.status_changed").last()
    assert changed.payload["data"] == {
        "dataset": "support-chats",
        "transcript_id": other.pk,
        "version": other.version + 1,
        "from": "draft",
        "to": "in_review",
        "by": "curator",
    }
