"""Issue a bearer token for the HTTP API and print it once.

Only its hash is stored: a lost token cannot be shown again, only revoked (admin, "API
tokens") and replaced by a new one.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from editor.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args, username, name, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive; its tokens would not work.")
        _, token = ApiToken.issue(user, name=name)
        # The token alone on stdout, so that `TOKEN=$(manage.py api_token …)` works.
        self.stdout.write(token)
        self.stderr.write(
            "Shown only now: store it (send it as `Authorization: Bearer <token>`); "
            "revoke it in the admin under API tokens."
        )
