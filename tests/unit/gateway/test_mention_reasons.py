"""Every reason the contract knows reaches the REST answer by name and the reader in words."""

from __future__ import annotations

from typing import get_args

import pytest

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway import schemas as s
from cograph_gateway.convert import docs_page_from_pb
from cograph_gateway.web.reader import REASON_PHRASES


def test_the_reader_has_one_distinct_phrase_per_reason() -> None:
    assert set(REASON_PHRASES) == set(get_args(s.MentionReasonName))
    phrases = list(REASON_PHRASES.values())
    assert len(set(phrases)) == len(phrases)
    assert all(phrase.strip() for phrase in phrases)


@pytest.mark.parametrize("reason", rpb.MentionReason.values())
def test_each_reason_of_the_contract_is_named_and_phrased(reason: rpb.MentionReason) -> None:
    written = rpb.PageMention(
        code_node_id="n1", mention="Field", form=rpb.MENTION_FORM_REFERENCE, reason=reason
    )
    message = rpb.GetDocsPageResponse(related_code=[rpb.CodeNode(id="n1")], related_code_mentions=[written])
    (mention,) = docs_page_from_pb(message).related_code_mentions
    assert (mention.node_id, mention.mention, mention.form) == ("n1", "Field", "reference")
    # Unspecified (a link stored before reasons were) is "", every other value its own name.
    assert (mention.reason == "") == (reason == rpb.MENTION_REASON_UNSPECIFIED)
    assert REASON_PHRASES[mention.reason]
