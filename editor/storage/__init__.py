"""Writing transcripts: the one path every change takes (editor, API, import, restore).

* ``save.save_transcript`` changes a transcript: compare-and-swap on ``version`` (a stale
  version gets ``ConflictError``, never a silent overwrite), messages replaced, diagnostics
  refreshed, a revision written, all in one transaction.
* ``create.create_transcripts`` adds new ones in bulk (the importer), ``create_transcript`` one.
* ``save.delete_transcript`` / ``undelete_transcript`` hide and bring back (soft delete), with a
  revision each.
* ``content`` checks what is stored; ``message_rows`` keeps the message rows (and the search
  index, through ``editor.search``); what a revision records is ``editor.models.revisions``'.

Refusals are ``editor.errors.DomainError`` subclasses.
"""
