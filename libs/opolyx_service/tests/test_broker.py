from faststream.nats import TestNatsBroker
from opolyx_service import ServiceSettings
from opolyx_service.broker import create_broker
from prometheus_client import CollectorRegistry, generate_latest


async def test_a_broker_from_the_runtime_answers_and_counts_into_the_service_registry() -> None:
    registry = CollectorRegistry()
    broker = create_broker(ServiceSettings(service_name="probe"), registry)

    @broker.subscriber("probe.echo")
    async def echo(body: dict[str, int]) -> dict[str, int]:
        return {"n": body["n"] + 1}

    async with TestNatsBroker(broker) as test_broker:
        reply = await test_broker.request({"n": 41}, "probe.echo")
        assert await reply.decode() == {"n": 42}
    assert b'app_name="probe"' in generate_latest(registry)
