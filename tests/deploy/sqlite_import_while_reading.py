"""Child process of test_sqlite_concurrency: a big import in one thread while another reads
and writes through its own connection, on a SQLite file as `make run` uses it.

Prints one JSON line: how many reads and writes succeeded and the errors met.
"""

import json
import os
import sys
import tempfile
import threading
import time

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import DatabaseError, connections  # noqa: E402

call_command("migrate", verbosity=0)

from django.contrib.auth import get_user_model  # noqa: E402

from editor.importing import import_transcripts  # noqa: E402
from editor.models import Dataset, Transcript  # noqa: E402

dataset = Dataset.objects.create(name="Big", slug="big")
other = Dataset.objects.create(name="Other", slug="other")
lines = "".join(
    json.dumps(
        {
            "id": f"t{n}",
            "messages": [
                {"role": "user", "content": f"question {n} " + "words " * 40},
                {"role": "assistant", "content": f"answer {n} " + "words " * 80},
            ],
        }
    )
    + "\n"
    for n in range(int(sys.argv[1]))
)
path = os.path.join(tempfile.mkdtemp(), "big.jsonl")
with open(path, "w") as out:
    out.write(lines)
connections.close_all()

done = threading.Event()
outcome = {"reads": 0, "writes": 0, "errors": [], "import": None}


def importer():
    try:
        report = import_transcripts(path, dataset=dataset, name="big.jsonl")
        outcome["import"] = report.counts
    except Exception as error:  # reported in the outcome, where the test shows it
        outcome["import"] = f"{type(error).__name__}: {error}"
    finally:
        done.set()
        connections.close_all()


def meanwhile():
    user_model = get_user_model()
    n = 0
    while not done.is_set():
        try:
            Transcript.objects.filter(dataset=other).count()
            outcome["reads"] += 1
            n += 1
            user_model.objects.create_user(f"someone-{n}")
            outcome["writes"] += 1
        except DatabaseError as error:
            outcome["errors"].append(str(error))
        time.sleep(0.01)
    connections.close_all()


threads = [threading.Thread(target=importer), threading.Thread(target=meanwhile)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps(outcome))
