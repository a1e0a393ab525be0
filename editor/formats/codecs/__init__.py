"""The codecs: one module per spec family, reading text into the model and writing it back.

``openchatml2`` (2.0, 2.2, Harmony; ``chatml`` is a dialect of it), ``openchatml01``,
``mms`` (JSON thread and tokens) and ``jsonformats`` (every other JSON spec, with
``chatml_json`` and ``ocm_json``), on top of the shared ``scanner`` (control tokens),
``bodytext`` (escapes), ``header`` (the YAML header), ``v01body`` (v0.1 body blocks) and
``json_support`` (lenient JSON reading). ``editor.formats.specs`` registers them.
"""
