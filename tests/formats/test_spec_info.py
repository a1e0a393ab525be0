"""What the registry tells the app of each spec (``SpecInfo``, docs/formats.md "What the
registry tells the app"): complete for every registered spec, consistent with the registry's
constants, and its words name every message of the spec's valid fixtures."""

from dataclasses import replace

import pytest

from editor import formats
from editor.formats.render import ANNOTATOR, END_USER, render

from .conftest import fixture_inputs, read_input

VALID = fixture_inputs("valid")


@pytest.mark.parametrize("spec", formats.spec_ids())
def test_every_registered_spec_has_a_complete_spec_info(spec):
    assert formats.spec_info(spec).problems() == []


def test_the_registry_lists_the_shipped_specs_in_menu_order():
    assert formats.spec_ids() == formats.SPEC_IDS
    assert all(formats.is_spec(spec) for spec in formats.SPEC_IDS)
    assert not formats.is_spec("unknown") and not formats.is_spec(None)


@pytest.mark.parametrize("spec", formats.SPEC_IDS)
def test_a_text_spec_is_one_its_info_says_is_text(spec):
    assert formats.spec_info(spec).text == (spec in formats.TEXT_SPECS)


def test_an_unknown_spec_has_no_info():
    with pytest.raises(formats.UnknownSpec):
        formats.spec_info("yaml-chat")


@pytest.mark.parametrize(("spec", "path"), VALID, ids=[f"{s}/{p.name}" for s, p in VALID])
def test_its_words_name_every_message_of_a_valid_transcript(spec, path):
    transcript = formats.parse(read_input(path), spec).transcript
    info = formats.spec_info(spec)
    messages = transcript.messages
    groups = _file_messages(messages)
    if not info.splits_messages:
        assert all(len(group) == 1 for group in groups)
    if info.file_groups is not None:
        regrouped = info.file_groups(messages)
        assert [m for group in regrouped for m in group] == messages
    for audience in (ANNOTATOR, END_USER):
        items = {item.index: item for item in render(transcript, audience).items}
        for group in groups:
            assert info.role_as_written(messages[group[0]])
            group_messages = [messages[i] for i in group]
            context = formats.PartContext(transcript, group_messages, audience == END_USER)
            for index in group:
                if index in items:
                    badges = info.part_badges(messages[index], items[index], context)
                    assert all(isinstance(b, formats.Badge) and b.label for b in badges)


def _file_messages(messages: list[formats.Message]) -> list[list[int]]:
    """The messages read from one file message: those sharing where it starts."""
    groups: list[list[int]] = []
    for index, message in enumerate(messages):
        if groups and messages[groups[-1][0]].source.start == message.source.start:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def test_register_refuses_a_taken_id_and_an_incomplete_info():
    chatml = formats.get_codec("chatml")
    with pytest.raises(ValueError, match="already registered"):
        formats.register(chatml)
    incomplete = replace(chatml.info, fields=("name",), default_channel="final")
    with pytest.raises(ValueError, match="fields must include role") as refused:
        formats.register(replace(chatml, spec="chatml-draft", info=incomplete))
    assert "default channel" in str(refused.value)
    assert not formats.is_spec("chatml-draft")


def test_a_shipped_spec_cannot_be_unregistered():
    with pytest.raises(ValueError, match="ships with the package"):
        formats.unregister("harmony")
    with pytest.raises(formats.UnknownSpec):
        formats.unregister("yaml-chat")
