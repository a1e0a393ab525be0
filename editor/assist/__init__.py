"""Model assistance: connections to OpenAI-compatible servers (``connections``), the calls
themselves (``client``) and regenerating an assistant turn (``regenerate``)."""
