"""SQLite's FTS5 search tables, as the migrations that (re)make them need them.

Up to migration 0021, one table of two columns: what the end user sees of each message, and
the whole content where that is not all of it. From 0021 on, two tables of one column,
without token positions: the first holds what the end user sees of every message, the second
the whole content of the messages whose end user sees only part of it (or none).
"""

TOKENIZER = "tokenize='unicode61 remove_diacritics 2'"

# --- one table of two columns (migrations 0010 to 0020) ------------------------------------


def create(column_sizes: bool, positions: bool = True) -> str:
    options = ("" if column_sizes else ", columnsize=0") + ("" if positions else ", detail=column")
    return f"""CREATE VIRTUAL TABLE editor_message_search USING fts5(
        end_user_text, hidden_text, content='', {TOKENIZER}{options}
    )"""


FILL = """INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
    SELECT id, COALESCE(end_user_text, content),
           CASE WHEN end_user_text IS NULL THEN '' ELSE content END
    FROM editor_message"""


def _two_columns(row: str) -> str:
    return (
        f"COALESCE({row}.end_user_text, {row}.content), "
        f"CASE WHEN {row}.end_user_text IS NULL THEN '' ELSE {row}.content END"
    )


# Migration 0010's. A contentless table forgets a row only when told the values it indexed.
TWO_COLUMN_TRIGGERS = [
    f"""CREATE TRIGGER editor_message_search_delete AFTER DELETE ON editor_message BEGIN
        INSERT INTO editor_message_search(editor_message_search, rowid, end_user_text, hidden_text)
        VALUES ('delete', old.id, {_two_columns("old")});
    END""",
    f"""CREATE TRIGGER editor_message_search_update
    AFTER UPDATE OF content, end_user_text ON editor_message BEGIN
        INSERT INTO editor_message_search(editor_message_search, rowid, end_user_text, hidden_text)
        VALUES ('delete', old.id, {_two_columns("old")});
        INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
        VALUES (new.id, {_two_columns("new")});
    END""",
]

DROP_TRIGGERS = [
    "DROP TRIGGER editor_message_search_update",
    "DROP TRIGGER editor_message_search_delete",
]

# --- two tables of one column (migration 0021 on) ------------------------------------------

SPLIT_TABLES = [
    f"""CREATE VIRTUAL TABLE editor_message_search USING fts5(
        end_user_text, content='', {TOKENIZER}, columnsize=0, detail=none
    )""",
    f"""CREATE VIRTUAL TABLE editor_message_content_search USING fts5(
        content, content='', {TOKENIZER}, columnsize=0, detail=none
    )""",
]


def _split_rows(row: str, delete: bool) -> list[str]:
    """The statements that put ``row`` (``new``, ``old``) into both tables, or take it out."""
    command = "'delete', " if delete else ""
    visible = "editor_message_search, " if delete else ""
    whole = "editor_message_content_search, " if delete else ""
    return [
        f"INSERT INTO editor_message_search({visible}rowid, end_user_text)"
        f" VALUES ({command}{row}.id, COALESCE({row}.end_user_text, {row}.content));",
        f"INSERT INTO editor_message_content_search({whole}rowid, content)"
        f" SELECT {command}{row}.id, {row}.content WHERE {row}.end_user_text IS NOT NULL;",
    ]


SPLIT_TRIGGERS = [
    f"""CREATE TRIGGER editor_message_search_delete AFTER DELETE ON editor_message BEGIN
        {" ".join(_split_rows("old", delete=True))}
    END""",
    f"""CREATE TRIGGER editor_message_search_update
    AFTER UPDATE OF content, end_user_text ON editor_message BEGIN
        {" ".join(_split_rows("old", delete=True))}
        {" ".join(_split_rows("new", delete=False))}
    END""",
]

SPLIT_FILL = [
    """INSERT INTO editor_message_search(rowid, end_user_text)
    SELECT id, COALESCE(end_user_text, content) FROM editor_message""",
    """INSERT INTO editor_message_content_search(rowid, content)
    SELECT id, content FROM editor_message WHERE end_user_text IS NOT NULL""",
]


def on_sqlite(statements: list[str]):
    """A RunPython function running ``statements`` on SQLite only (PostgreSQL's search is its
    GIN indexes)."""

    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement)

    return run
