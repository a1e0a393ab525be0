"""Model connections (``editor.assist.connections``) and regenerated turns: never a key, only
the name of the environment variable that holds it and whether it is set."""

from datetime import datetime

from ninja import Field, Schema

from api.schemas.common import INT32_MAX


class ModelConnectionOut(Schema):
    id: int
    name: str
    base_url: str = Field(description="The server's OpenAI-compatible base URL (…/v1).")
    model: str
    api_key_env: str = Field(description="The environment variable holding the key ('' none).")
    api_key_set: bool = Field(description="Whether that variable is set on this server.")
    options: dict = Field(description="Sent with every request (temperature, max_tokens …).")
    timeout_seconds: float
    max_concurrency: int
    requests_per_minute: int | None
    requests_count: int = Field(description="Requests made through it, failed ones included.")
    failed_count: int
    tokens_in: int = Field(description="Prompt tokens over all its requests (servers' usage).")
    tokens_out: int = Field(description="Completion tokens over all its requests.")
    created_at: datetime
    updated_at: datetime


class ModelConnectionFields(Schema):
    """Unknown fields are refused (by ``editor.assist.connections.clean``, from the body as
    sent), and one named ``api_key`` with a clear error: a key's value is never accepted."""

    name: str | None = Field(None, max_length=100)
    base_url: str | None = Field(None, max_length=500, description="http:// or https:// only.")
    model: str | None = Field(None, max_length=200)
    api_key_env: str | None = Field(
        None, max_length=100, description="The NAME of the variable (OPENAI_API_KEY), never a key."
    )
    options: dict | None = None
    timeout_seconds: float | None = Field(None, description="1 to 600.")
    max_concurrency: int | None = Field(None, description="1 to 64.")
    requests_per_minute: int | None = Field(None, description="Empty: no limit.")


class ModelConnectionIn(ModelConnectionFields):
    name: str = Field(max_length=100)
    base_url: str = Field(max_length=500, description="http:// or https:// only.")
    model: str = Field(max_length=200)


class ConnectionTestOut(Schema):
    ok: bool
    answer: str | None = Field(None, description="The model's answer, when it answered.")
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    duration_ms: int | None = None
    error: str | None = Field(None, description="The server's exact answer, or why none came.")
    status_code: int | None = None
    retryable: bool | None = None
    retry_after: float | None = None


class RegenerateIn(Schema):
    connection_id: int = Field(ge=1, le=INT32_MAX)
