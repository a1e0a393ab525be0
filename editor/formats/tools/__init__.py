"""Tool declarations: the TypeScript ``namespace functions {…}`` of Harmony developer messages
(``typescript``) and the tools a transcript declares in any form (``schemas``)."""
