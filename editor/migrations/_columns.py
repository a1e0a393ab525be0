"""Copying a column into another, converted, in batches: what the migrations that change how
a column is stored (0017, 0023) do, because casting in SQL would not convert the same way."""

BATCH = 500


def copy_column(apps, schema_editor, model: str, read: str, write: str, convert) -> None:
    """Every ``editor.<model>`` row's ``read`` value, converted, into its ``write`` column."""
    connection = schema_editor.connection
    rows = apps.get_model("editor", model)._base_manager.using(connection.alias)
    quote = connection.ops.quote_name
    update = f"UPDATE {quote(rows.model._meta.db_table)} SET {quote(write)} = %s WHERE id = %s"
    last = 0
    while batch := list(rows.filter(pk__gt=last).order_by("pk").values_list("pk", read)[:BATCH]):
        with connection.cursor() as cursor:
            cursor.executemany(update, [(convert(value), pk) for pk, value in batch])
        last = batch[-1][0]
