"""Create the local login `make run` prints: a superuser with a fresh random password.

The password is printed once, when the user is created; later runs say the login exists
and how to reset it (`--reset` prints a new one). Nothing is hard-coded.
"""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

DEFAULT_USERNAME = "admin"


class Command(BaseCommand):
    help = "Create (or reset with --reset) the local superuser login and print its password once."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=DEFAULT_USERNAME)
        parser.add_argument("--reset", action="store_true", help="set and print a new password")

    def handle(self, *args, username, reset, **options):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is not None and not reset:
            self.stdout.write(
                f"Local login: {username} (its password was printed when it was created; "
                f"`.venv/bin/python manage.py ensure_local_login --reset` prints a new one)"
            )
            return
        password = secrets.token_urlsafe(12)
        if user is None:
            user = User.objects.create_superuser(username=username, email="", password=password)
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
        self.stdout.write(self.style.SUCCESS(f"Local login: {username} / {password}"))
        self.stdout.write(
            "  (shown only now; keep it, or reset it with `ensure_local_login --reset`)"
        )
