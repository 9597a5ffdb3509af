"""The prompts are byte-for-byte contracts; parsing is lenient and honest about format."""

import pytest

from marlin_agent.errors import EmptyQuery
from marlin_agent.marlin import CAPTION_PROMPT, find_prompt, parse_caption, parse_span, strip_think

# Copied from MARLIN.md, independently of the code under test.
CONTRACT_CAPTION = (
    "Provide a spatial description of this clip followed by time-ranged events.\n"
    "For each event, give the time range as <start - end> and a short description."
)
CONTRACT_FIND = (
    'Identify the timestamps during which "a dog jumps" takes place. '
    'Output the time range as "From <start> to <end>." (numbers in seconds).'
)


def test_the_caption_prompt_is_the_contract_byte_for_byte():
    assert CAPTION_PROMPT == CONTRACT_CAPTION
    assert not CAPTION_PROMPT.endswith("\n") and CAPTION_PROMPT.count("\n") == 1


def test_the_find_prompt_is_the_contract_byte_for_byte():
    assert find_prompt("a dog jumps") == CONTRACT_FIND


def test_an_event_with_quotes_and_odd_spacing_keeps_the_prompt_well_formed():
    prompt = find_prompt('  the  "hero"\nwaves ')
    assert '"the \'hero\' waves"' in prompt and prompt.count('"') == 4


def test_an_empty_event_is_refused():
    with pytest.raises(EmptyQuery):
        find_prompt("   ")


CANONICAL = "Scene: A kitchen with a window.\nEvents:\n<0.0 - 4.5> a man opens the fridge\n<5.0 - 12.25> he pours milk"


def test_a_canonical_caption_parses_exactly():
    caption = parse_caption(CANONICAL)
    assert caption.format_ok
    assert caption.scene == "A kitchen with a window."
    assert [(e.start, e.end, e.text) for e in caption.events] == [
        (0.0, 4.5, "a man opens the fridge"), (5.0, 12.25, "he pours milk")]
    assert caption.raw == CANONICAL


@pytest.mark.parametrize("preamble", ["<think>\n\n</think>\n\n", "<think>\nlet me look\n</think>\n", "<think>\n", "</think>\n"])
def test_think_preambles_are_stripped(preamble):
    caption = parse_caption(preamble + CANONICAL)
    assert caption.format_ok and len(caption.events) == 2
    assert "think" not in caption.scene


def test_strip_think_leaves_plain_text_alone():
    assert strip_think("From 1.0 to 2.0.") == "From 1.0 to 2.0."


def test_sloppy_captions_still_parse_but_are_flagged():
    sloppy = "A kitchen.\n<0 – 4.5>: a man opens the fridge\n[5s - 12s] he pours milk"
    caption = parse_caption(sloppy)
    assert not caption.format_ok
    assert caption.scene == "A kitchen."
    assert [(e.start, e.end) for e in caption.events] == [(0.0, 4.5), (5.0, 12.0)]


def test_caption_times_are_ordered_and_clamped_to_the_clip():
    caption = parse_caption("Scene: x\nEvents:\n<9.0 - 3.0> backwards\n<50.0 - 70.0> past the end", duration=60.0)
    assert [(e.start, e.end) for e in caption.events] == [(3.0, 9.0), (50.0, 60.0)]


def test_prose_is_kept_as_the_scene_with_no_events():
    caption = parse_caption("The video shows a dog.")
    assert not caption.format_ok and caption.events == [] and caption.scene == "The video shows a dog."


@pytest.mark.parametrize(
    ("raw", "expected", "strict"),
    [
        ("From 14.5 to 18.0.", (14.5, 18.0), True),
        ("<think>\n\n</think>\n\nFrom 3 to 7.", (3.0, 7.0), True),
        ("from 14.5s to 18s", (14.5, 18.0), False),
        ("The event happens at 2.0 - 4.0 seconds.", (2.0, 4.0), False),
        ("From 18.0 to 14.5.", (14.5, 18.0), False),
    ],
)
def test_spans_parse_leniently(raw, expected, strict):
    span = parse_span(raw)
    assert (span.start, span.end) == expected and span.format_ok is strict and span.raw == raw


def test_a_span_is_clamped_to_the_clip():
    span = parse_span("From 50.0 to 75.0.", duration=60.0)
    assert (span.start, span.end) == (50.0, 60.0)


def test_an_answer_without_times_has_no_span():
    assert parse_span("I cannot tell.") is None


def test_the_answer_after_the_last_closing_think_tag_is_kept_whole():
    raw = "<think>\nfirst</think>\n<think>second</think>\n\n  Scene: a yard.  \nEvents:\n<1.0 - 2.0> a dog runs"
    assert strip_think(raw) == "Scene: a yard.  \nEvents:\n<1.0 - 2.0> a dog runs"
    assert strip_think("  <think> unclosed, Scene: a yard. ") == "unclosed, Scene: a yard. "
    assert strip_think("Scene: a <think> tag mid-text") == "Scene: a <think> tag mid-text"


def test_a_line_that_is_neither_scene_nor_event_after_the_events_breaks_the_format():
    base = "Scene: A dog in a yard,\nrunning.\nEvents:\n<1.0 - 2.0> a dog runs\n"
    clean = parse_caption(base)
    assert clean.format_ok and clean.scene == "A dog in a yard, running."
    stray = parse_caption(base + "That is all I can see.\n<3.0 - 4.0> a dog sits")
    assert not stray.format_ok and [e.text for e in stray.events] == ["a dog runs", "a dog sits"]
    assert stray.scene == "A dog in a yard, running."  # the stray line is not taken into the scene
    headerless = parse_caption("Scene: A yard.\n<1.0 - 2.0> a dog runs\nno more")
    assert not headerless.format_ok and headerless.scene == "A yard."


def test_times_are_clamped_to_the_clip_at_both_ends_and_kept_inside_it():
    caption = parse_caption("Scene: x.\nEvents:\n<0.4 - 0.8> early\n<59.5 - 75.0> late", duration=60.0)
    assert [(e.start, e.end) for e in caption.events] == [(0.4, 0.8), (59.5, 60.0)]
    assert (parse_span("From 7.0 to 7.0.").start, parse_span("From 7.0 to 7.0.").end) == (7.0, 7.0)
    assert parse_span("From 7.0 to 7.0.").format_ok  # a zero-length span keeps the format


@pytest.mark.parametrize(("a", "b", "expected"), [
    ((0, 10), (0, 10), 1.0), ((0, 10), (5, 15), 5 / 15), ((5, 15), (0, 10), 5 / 15), ((0, 10), (2, 4), 0.2),
    ((0, 1), (3, 4), 0.0), ((3, 4), (0, 1), 0.0), ((2, 2), (2, 2), 1.0), ((2, 2), (3, 3), 0.0),
    ((0.2, 0.6), (0.4, 0.8), 1 / 3),
])
def test_iou_is_overlap_over_union_for_any_order_and_length(a, b, expected):
    from marlin_agent.verification.spans import iou

    assert iou(a, b) == pytest.approx(expected)
