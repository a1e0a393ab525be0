"""The SQLite FTS5 search table's definition, shared by the migrations that (re)make it."""


def create(column_sizes: bool) -> str:
    options = "" if column_sizes else ", columnsize=0"
    return f"""CREATE VIRTUAL TABLE editor_message_search USING fts5(
        end_user_text, hidden_text, content='', tokenize='unicode61 remove_diacritics 2'{options}
    )"""


FILL = """INSERT INTO editor_message_search(rowid, end_user_text, hidden_text)
    SELECT id, COALESCE(end_user_text, content),
           CASE WHEN end_user_text IS NULL THEN '' ELSE content END
    FROM editor_message"""
