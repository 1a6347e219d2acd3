import io

import pytest
from faststream.nats import TestNatsBroker
from opolyx_contracts.envelope import ErrorReply, decode
from opolyx_contracts.errors import BAD_REQUEST, INTERNAL, TABLE_NOT_FOUND, ContractError
from opolyx_rules import RulesError
from opolyx_service import ServiceSettings, configure_logging, error_body, get_logger
from opolyx_service.broker import create_broker
from prometheus_client import CollectorRegistry
from pydantic import BaseModel


class Probe(BaseModel):
    n: int


def test_a_contract_error_keeps_its_code_and_message() -> None:
    body = error_body(ContractError(TABLE_NOT_FOUND, "no table t-1; check the id"))
    assert (body.code, body.message) == (TABLE_NOT_FOUND, "no table t-1; check the id")


def test_a_rules_error_is_mapped_to_the_wire_shape_with_its_own_code() -> None:
    body = error_body(RulesError("auction/bid_too_low", "bid at least 120"))
    assert (body.code, body.message) == ("auction/bid_too_low", "bid at least 120")


def test_an_unexpected_exception_is_logged_and_answered_without_its_details() -> None:
    stream = io.StringIO()
    configure_logging("probe", stream=stream)
    body = error_body(KeyError("secret-internal-key"), get_logger("probe"))
    assert body.code == INTERNAL
    assert "secret-internal-key" not in body.message
    assert "secret-internal-key" in stream.getvalue()


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (ContractError(TABLE_NOT_FOUND, "gone"), TABLE_NOT_FOUND),
        (RulesError("turn/not_your_turn", "wait"), "turn/not_your_turn"),
        (ZeroDivisionError("boom"), INTERNAL),
    ],
)
async def test_a_typed_handler_that_raises_answers_the_contract_error_reply(
    raised: Exception, code: str
) -> None:
    broker = create_broker(ServiceSettings(service_name="probe"), CollectorRegistry())

    @broker.subscriber("probe.ask")
    async def ask(body: Probe) -> Probe:
        raise raised

    async with TestNatsBroker(broker) as test_broker:
        reply = await test_broker.request({"n": 1}, "probe.ask")
    assert decode_error(reply.body) == code


async def test_an_invalid_body_is_answered_request_invalid_and_serving_goes_on() -> None:
    broker = create_broker(ServiceSettings(service_name="probe"), CollectorRegistry())

    @broker.subscriber("probe.add")
    async def add(body: Probe) -> Probe:
        return Probe(n=body.n + 1)

    async with TestNatsBroker(broker) as test_broker:
        bad = await test_broker.request(b'{"n": "many"}', "probe.add")
        not_json = await test_broker.request(b"{broken", "probe.add")
        good = await test_broker.request({"n": 41}, "probe.add")
    assert decode_error(bad.body) == BAD_REQUEST
    assert decode_error(not_json.body) == BAD_REQUEST
    assert decode(Probe, good.body).n == 42


def decode_error(body: bytes) -> str:
    return decode(ErrorReply, body).error.code


async def test_a_refused_message_without_a_reply_subject_is_logged_and_counted() -> None:
    stream = io.StringIO()
    configure_logging("probe", stream=stream)
    registry = CollectorRegistry()
    broker = create_broker(ServiceSettings(service_name="probe"), registry)
    handled: list[int] = []

    @broker.subscriber("probe.note")
    async def note(body: Probe) -> None:
        handled.append(body.n)

    async with TestNatsBroker(broker) as test_broker:
        await test_broker.publish(b'{"n": "several"}', "probe.note")
        await test_broker.publish({"n": 3}, "probe.note")
    assert handled == [3]
    assert registry.get_sample_value("opolyx_handler_errors_total", {"code": BAD_REQUEST}) == 1
    assert '"message_refused"' in stream.getvalue()
