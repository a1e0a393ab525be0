"""Importing transcripts: one function, ``import_transcripts``, for the UI, the API and the
``import_transcripts`` management command.

What it reads (``kind="auto"`` tells them apart; see docs/storage.md):

* one transcript file: text in any text spec, or one JSON document in any JSON spec, or one
  JSON *envelope* ``{"text" | "document", "spec"?, "id"?, "title"?, "metadata"?, "status"?}``;
* a JSONL file (``.jsonl`` / ``.ndjson``, or any file whose first line is a whole JSON
  value and which has more lines): one envelope or one bare JSON-spec document per line;
  unless its first line is one message (``{"role": …}``): then it is one openchatml-json
  transcript written as JSON Lines;
* a zip archive or a folder: every file in it is one transcript, except ``.jsonl`` /
  ``.ndjson`` members, which are read line by line.
* preference data: JSONL lines or a JSON array of TRL / HH-RLHF rows (``chosen`` and
  ``rejected``; ``shape`` says it instead): each row a transcript with its alternatives and
  an imported pair (``preference``, docs/preference.md).

An envelope, and a bare document on a JSONL line, are read by ``editor.formats.jsonl``: the
one reader of the envelope, which ``ocm validate`` reads datasets with too.

What fails an item (it is *unreadable*): bytes that are not UTF-8 or cannot be read, an empty
file, a JSONL line that is not JSON or is a JSON scalar, an envelope field of the wrong type
or with both bodies, an unknown spec id, a spec that is not given and cannot be detected, a
parse that yields no message at all and reports an error (unless an envelope names its spec
and has an empty body: an empty transcript), text the database cannot store (NUL, lone
surrogates, over-long fields), an id seen twice in the same import, an id held by a deleted
transcript. A source with no item at all is an error. A transcript that parses with errors
but yields messages is *readable*: it is imported as a draft with its diagnostics.

All or nothing by default: one transaction, each batch written as it is read (on SQLite,
short ones into a stage nobody sees, then one that moves it in: ``staging``); one failed item
rolls everything back and
``ImportRejected`` carries the report (every failed item with its line and reason).
``partial=True`` imports every readable item and reports the rest.

Idempotent by external id (the envelope's ``id``, a bare document's top-level ``id``, or a
file's path inside the zip/folder, or its name): an item whose id exists in the dataset
updates it through ``save_transcript`` (a revision) or is skipped, as ``on_conflict`` says;
identical content is skipped without a revision either way. Items without an id are always
created. An envelope's ``status`` is given to new transcripts when the author may curate the
dataset (or is the system); updates never change a status.

The modules, one job each: ``sources`` tells the kinds of input apart, ``lines`` reads JSONL,
``archives`` reads zips and folders, ``candidates`` turns what was read into items,
``batches`` parses, checks and writes them, ``staging`` writes an all-or-nothing import in
short transactions on SQLite, ``preference`` reads preference rows and records
their pairs, ``report`` says what became of each, ``run`` is
``import_transcripts``, ``collector`` keeps the garbage collector out of its way, ``limits``
holds every bound; ``tasks`` runs an import as a
background task.
"""

from editor.errors import ImportRejected
from editor.importing.batches import OnConflict
from editor.importing.report import Action, ImportItem, ImportReport, ProgressCallback
from editor.importing.run import import_transcripts
from editor.importing.sources import Kind

__all__ = [
    "Action",
    "ImportItem",
    "ImportRejected",
    "ImportReport",
    "Kind",
    "OnConflict",
    "ProgressCallback",
    "import_transcripts",
]
