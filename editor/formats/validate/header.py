"""Validation of the 2.x document header, channels, roles and intents (2.0/2.2 §2, §4-§6, HIP-1).

| code | rule |
|---|---|
| W-HEADER-MISSING | a 2.x text without a YAML header (the spec's own examples are headerless fragments, so a warning, not an error) |
| E-PARSE-HEADER | a header without ``version``, or with a version this tool does not know |
| E-HEADER-VALUE | ``generation_settings.reasoning_effort`` outside low/medium/high; ``generation_settings``/``profiles`` not mappings |
| E-PARSE-CHANNEL-MISSING | a model or tool message without a channel while a profile (or Harmony itself) requires channels |
| W-CHANNEL-UNKNOWN | a channel outside analysis/commentary/final, or outside the profile's ``require_channels`` |
| W-ROLE-UNKNOWN | a role outside system/developer/user/assistant/tool/functions.*/browser.*/python |
| W-INTENT-UNKNOWN | an intent outside preamble/status/debug |

Channels are required of assistant messages and tool replies only: in Harmony (and the 2.2
§16.2 example) system, developer and user messages never carry one.
"""

from __future__ import annotations

from typing import Any

from ..codecs.scanner import token
from ..model import RETURN, is_builtin
from .context import Context, insert_fix, is_call, is_reply

HEADER_SPECS = frozenset({"openchatml-2.0", "openchatml-2.2"})
CHANNEL_SPECS = HEADER_SPECS | {"harmony", "openchatml-json"}
KNOWN_VERSIONS = frozenset({"2.0", "2.2"})
REASONING_EFFORTS = ("low", "medium", "high")
CHANNELS = ("analysis", "commentary", "final")
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
TOOL_ROLE_PREFIX = "functions."
INTENTS = frozenset({"preamble", "status", "debug"})
HARMONY_PROFILE = "harmony"


def hip1_active(ctx: Context) -> bool:
    """HIP-1 applies to Harmony text and to 2.2 with ``profiles.harmony.enabled``."""
    if ctx.spec != "openchatml-2.2":
        return ctx.spec == "harmony"
    profile = _profiles(ctx.transcript.header).get(HARMONY_PROFILE)
    return isinstance(profile, dict) and profile.get("enabled") is True


def _profiles(header: dict[str, Any]) -> dict[str, Any]:
    profiles = header.get("profiles")
    return profiles if isinstance(profiles, dict) else {}


def required_channels(ctx: Context) -> tuple[str, ...] | None:
    """The channels a message must use, or None when no profile requires channels."""
    if ctx.spec == "harmony":
        return CHANNELS
    for profile in _profiles(ctx.transcript.header).values():
        if isinstance(profile, dict) and profile.get("enabled", True) is not False:
            required = profile.get("require_channels")
            if isinstance(required, list) and required:
                return tuple(str(c) for c in required)
    return None


def check(ctx: Context) -> None:
    if ctx.spec in HEADER_SPECS:
        _header(ctx)
    if ctx.spec in CHANNEL_SPECS:
        _channels(ctx)
        _roles_and_intents(ctx)


def _header_offset(ctx: Context, key: str) -> int:
    """Where ``key`` is written in the header (the text before the first message), else 0."""
    if ctx.text is None:
        return 0
    limit = ctx.message_offset(0) if ctx.messages and ctx.messages[0].source else len(ctx.text)
    at = ctx.text.find(key, 0, limit)
    return max(at, 0)


def _header(ctx: Context) -> None:
    header = ctx.transcript.header
    if not header:
        ctx.add(
            "W-HEADER-MISSING",
            None,
            "No YAML header; 2.x transcripts begin with one (version: …)",
            offset=0,
        )
        return
    version = header.get("version")
    if version is None:
        ctx.add("E-PARSE-HEADER", None, "The header has no 'version' key (required)", offset=0)
    elif str(version) not in KNOWN_VERSIONS:
        ctx.add(
            "E-PARSE-HEADER",
            None,
            f"Unknown version {version!r}; known: {', '.join(sorted(KNOWN_VERSIONS))}",
            offset=_header_offset(ctx, "version"),
        )
    settings = header.get("generation_settings")
    if settings is not None and not isinstance(settings, dict):
        ctx.add(
            "E-HEADER-VALUE",
            None,
            "generation_settings must be a mapping",
            offset=_header_offset(ctx, "generation_settings"),
        )
    elif isinstance(settings, dict) and "reasoning_effort" in settings:
        effort = settings["reasoning_effort"]
        if effort not in REASONING_EFFORTS:
            ctx.add(
                "E-HEADER-VALUE",
                None,
                f"reasoning_effort {effort!r} is not one of {', '.join(REASONING_EFFORTS)}",
                offset=_header_offset(ctx, "reasoning_effort"),
            )
    if "profiles" in header and not isinstance(header["profiles"], dict):
        ctx.add(
            "E-HEADER-VALUE",
            None,
            "profiles must be a mapping",
            offset=_header_offset(ctx, "profiles"),
        )


def _suggested_channel(message) -> str | None:
    """The channel a missing one can only be: calls and replies → commentary, <|return|> → final."""
    if is_call(message) or is_reply(message):
        return "commentary"
    if message.end == RETURN:
        return "final"
    return None


def _channels(ctx: Context) -> None:
    required = required_channels(ctx)
    for i, m in enumerate(ctx.messages):
        if m.channel is None:
            if m.attrs.get("header_only"):
                continue  # a completion prompt `<|start|>assistant`: the model writes the channel
            if required is not None and (m.role == "assistant" or is_reply(m)):
                channel = _suggested_channel(m)
                fix = None
                if channel is not None:
                    fix = insert_fix(
                        f"Add channel {channel}", ctx.header_end(i), f"{token('channel')}{channel}"
                    )
                ctx.add(
                    "E-PARSE-CHANNEL-MISSING",
                    i,
                    f"{m.role} message has no channel; the profile requires one of {', '.join(required)}",
                    fix=fix,
                )
        elif m.channel not in CHANNELS:
            ctx.add(
                "W-CHANNEL-UNKNOWN",
                i,
                f"Unknown channel {m.channel!r}; expected one of {', '.join(CHANNELS)}",
            )
        elif required is not None and m.channel not in required:
            ctx.add(
                "W-CHANNEL-UNKNOWN",
                i,
                f"Channel {m.channel!r} is not among the profile's {', '.join(required)}",
            )


def _roles_and_intents(ctx: Context) -> None:
    for i, m in enumerate(ctx.messages):
        if not (m.role in ROLES or m.role.startswith(TOOL_ROLE_PREFIX) or is_builtin(m.role)):
            ctx.add("W-ROLE-UNKNOWN", i, f"Unknown role {m.role!r}")
        if m.intent is not None and m.intent not in INTENTS:
            ctx.add(
                "W-INTENT-UNKNOWN",
                i,
                f"Unknown intent {m.intent!r}; expected one of {', '.join(sorted(INTENTS))}",
            )
