import json

import pytest
from opolyx_contracts import ContractError, decode, encode, error_reply
from opolyx_contracts.errors import BAD_REQUEST, CONTRACT_VERSION_UNSUPPORTED, MALFORMED_JSON
from opolyx_contracts.subjects import (
    DEFAULT_TABLE_PARTITIONS,
    table_command,
    table_command_wildcard,
    table_events,
    table_partition,
)
from opolyx_contracts.table import CreateTable, TableCommand


def test_every_message_carries_the_contract_version() -> None:
    body = json.loads(encode(error_reply("table/not_found", "no such table")))
    assert body == {
        "v": 1,
        "ok": False,
        "error": {"code": "table/not_found", "message": "no such table"},
    }


def test_a_table_command_subject_lies_in_its_partition_wildcard() -> None:
    subject = table_command("t-123")
    partition = table_partition("t-123")
    assert 0 <= partition < DEFAULT_TABLE_PARTITIONS
    assert subject == f"opolyx.table.{partition}.t-123.cmd"
    assert table_command_wildcard(partition).replace("*", "t-123") == subject


def test_partitions_are_stable_and_spread() -> None:
    assert table_partition("abc") == table_partition("abc")
    assert len({table_partition(f"t{i}") for i in range(200)}) == DEFAULT_TABLE_PARTITIONS


@pytest.mark.parametrize("bad", ["a.b", "*", ">", "", "with space", "x" * 129])
def test_an_id_cannot_inject_subject_tokens(bad: str) -> None:
    with pytest.raises(ValueError):
        table_events(bad)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", MALFORMED_JSON),
        (b"[1, 2]", MALFORMED_JSON),
        (b"\xff\xfe", MALFORMED_JSON),
        (b'{"v": 1, "player_id": "p"}', BAD_REQUEST),
        (
            b'{"v": 2, "command_id": "c", "player_id": "p", "command": {}}',
            CONTRACT_VERSION_UNSUPPORTED,
        ),
    ],
)
def test_bad_bodies_become_contract_errors_with_a_code(body: bytes, code: str) -> None:
    with pytest.raises(ContractError) as caught:
        decode(TableCommand, body)
    assert caught.value.code == code
    assert caught.value.message


def test_a_create_request_needs_two_to_six_seats() -> None:
    with pytest.raises(ContractError):
        decode(CreateTable, {"mode": "classic", "seats": [{"player_id": "a"}]})
    created = decode(
        CreateTable, {"mode": "classic", "seats": [{"player_id": "a"}, {"player_id": "b"}]}
    )
    assert created.v == 1
    assert created.seed is None
