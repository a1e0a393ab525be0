"""The SQLite FTS5 search table's definition, shared by the migrations that (re)make it."""


def create(column_sizes: bool, positions: bool = True) -> str:
    options = ("" if column_sizes else ", columnsize=0") + ("" if positions else ", detail=column")
    return f"""CREATE VIRTUAL TABLE editor_message_search USING fts5(
        end_user_text, hidden_text, content='', tokenize='unicode61 remove_diacritics 2'{options}
    )"""


FILL = """INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
    SELECT id, COALESCE(end_user_text, content),
           CASE WHEN end_user_text IS NULL THEN '' ELSE content END
    FROM editor_message"""


def on_sqlite(statements: list[str]):
    """A RunPython function running ``statements`` on SQLite only (PostgreSQL's search is its
    GIN indexes)."""

    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement)

    return run
