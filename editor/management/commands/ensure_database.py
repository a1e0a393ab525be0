"""``manage.py ensure_database``: create the PostgreSQL database of DATABASE_URL if missing.

For `make serve` and `make load` on a fresh machine. SQLite creates its file by itself.
"""

from django.core.management.base import BaseCommand
from django.db import connection


class Command(BaseCommand):
    help = "Create the PostgreSQL database named in DATABASE_URL when it does not exist yet."

    def handle(self, *args, **options):
        if connection.vendor != "postgresql":
            return
        name = connection.settings_dict["NAME"]
        with connection._nodb_cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if cursor.fetchone():
                return
            cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
        self.stdout.write(f"Created the PostgreSQL database {name}")
