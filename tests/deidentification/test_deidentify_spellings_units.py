"""The decoding of URLs (percent-encoding, base64 data: URLs) and the whole-name guard, unit by unit."""

from __future__ import annotations

import base64
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.names import name_units
from deid_ds.deidentification.overlap import holds_phrase
from deid_ds.deidentification.spellings import data_url_payloads, encode_payload, percent_decoded, readings


def test_percent_decoding_keeps_where_each_character_was_written():
    text = "?nom=Kerdr%61on&p=H%C3%A9l%C3%A8ne"
    decoded = percent_decoded(text)
    assert decoded.text == "?nom=Kerdraon&p=Hélène"
    start = decoded.text.index("Hélène")
    assert text[slice(*decoded.source(start, start + len("Hélène")))] == "H%C3%A9l%C3%A8ne"
    assert percent_decoded("no escapes") is None
    assert percent_decoded("%FF%FEbad").text == "%FF%FEbad"  # not UTF-8: kept as written


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_percent_decoding_reads_back_what_quote_wrote(text):
    encoded = quote(text, safe="")
    decoded = percent_decoded(encoded)
    assert (decoded.text if decoded is not None else encoded) == text


def test_data_urls_that_hold_text_are_decoded_and_images_are_not():
    payload = base64.b64encode(b"Mme Kerdraon").decode()
    image = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    text = f"url(data:text/plain;charset=utf-8;base64,{payload}) and {image}"
    found = data_url_payloads(text)
    assert [(text[s:e], decoded) for s, e, decoded in found] == [(payload, "Mme Kerdraon")]
    assert readings(f"data:text/plain;base64,{payload}") == ([], ["Mme Kerdraon"])
    assert encode_payload("Mme Le Bihan", payload) == base64.b64encode(b"Mme Le Bihan").decode()


def test_a_name_s_multi_word_parts_and_whole_phrases():
    assert name_units("LE DU Yann") == ("LE DU",)
    assert "Le Du" in name_units("Le Du Yann") and "de la Tour" in name_units("Marie de la Tour")
    assert holds_phrase("Thomas Le-Du", ["LE DU"]) and not holds_phrase("Thomas LE DUC", ["LE DU"])
    assert holds_phrase("Éric LE  DU", ["le du"]) and not holds_phrase("ALEDU", ["le du"])
