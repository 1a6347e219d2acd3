import asyncio
import io
import json
import logging

import pytest
from opentelemetry import trace
from opolyx_service import (
    HealthServer,
    HttpSettings,
    ServiceRuntime,
    ServiceSettings,
    configure_logging,
    configure_tracing,
    extracted_context,
    get_logger,
    inject_headers,
    traced_headers,
)
from opolyx_service.metrics import counter
from opolyx_testing import http_get
from prometheus_client import CollectorRegistry


def test_settings_come_from_nested_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPOLYX_NATS__URL", "nats://a:1, nats://b:2")
    monkeypatch.setenv("OPOLYX_HTTP__PORT", "9100")
    monkeypatch.setenv("OPOLYX_SERVICE_NAME", "table")
    settings = ServiceSettings()
    assert settings.nats.servers == ["nats://a:1", "nats://b:2"]
    assert settings.http.port == 9100
    assert settings.service_name == "table"


async def test_readiness_fails_while_a_check_fails_and_when_draining() -> None:
    registry = CollectorRegistry()
    counter(registry, "opolyx_probe", "a probe").inc()
    health = HealthServer(registry)
    connected = {"value": False}
    health.add_readiness_check("nats", lambda: connected["value"])
    await health.start()
    try:
        assert (await http_get(health.port, "/livez"))[0] == 200
        status, body = await http_get(health.port, "/readyz")
        assert status == 503
        assert json.loads(body)["checks"]["nats"] is False
        connected["value"] = True
        assert (await http_get(health.port, "/readyz"))[0] == 200
        health.draining = True
        assert (await http_get(health.port, "/readyz"))[0] == 503
        assert (await http_get(health.port, "/livez"))[0] == 200
        status, metrics = await http_get(health.port, "/metrics")
        assert status == 200
        assert b"opolyx_probe_total 1.0" in metrics
    finally:
        await health.stop()


async def test_shutdown_hooks_run_in_reverse_order_even_when_one_fails() -> None:
    ran: list[str] = []

    async def first() -> None:
        ran.append("first")

    async def broken() -> None:
        raise RuntimeError("hook failed")

    async def last() -> None:
        ran.append("last")

    runtime = ServiceRuntime(ServiceSettings(http=HttpSettings(port=-1)))
    async with runtime:
        runtime.on_shutdown(first)
        runtime.on_shutdown(broken)
        runtime.on_shutdown(last)
        runtime.request_shutdown()
        await asyncio.wait_for(runtime.wait_for_shutdown(), 1)
    assert ran == ["last", "first"]


def test_stdlib_and_faststream_logs_come_out_as_json_with_trace_ids() -> None:
    # Before the stream is set up: a provider set already by an earlier test in this
    # process makes OpenTelemetry warn "Overriding of current TracerProvider", which is
    # not what this test reads.
    configure_tracing("table")
    stream = io.StringIO()
    configure_logging("table", "INFO", "json", stream=stream)
    faststream_logger = logging.getLogger("faststream")
    faststream_logger.propagate = False  # FastStream does this itself
    configure_logging("table", "INFO", "json", stream=stream)
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("work"):
        get_logger("opolyx.test").info("structured", table_id="t1")
        logging.getLogger("faststream").info("from faststream")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["structured", "from faststream"]
    assert lines[0]["table_id"] == "t1"
    assert lines[0]["service"] == "table"
    assert lines[0]["trace_id"] == lines[1]["trace_id"]
    assert len(lines[0]["trace_id"]) == 32
    logging.getLogger().handlers.clear()


def test_trace_context_round_trips_through_message_headers() -> None:
    configure_tracing("table")
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("sender") as sender:
        headers = inject_headers({"Nats-Msg-Id": "x"})
    assert "traceparent" in headers
    assert headers["Nats-Msg-Id"] == "x"
    with tracer.start_as_current_span("receiver", context=extracted_context(headers)) as receiver:
        assert receiver.get_span_context().trace_id == sender.get_span_context().trace_id


def test_traced_headers_add_a_context_only_inside_a_span() -> None:
    configure_tracing("table")
    tracer = trace.get_tracer("test")
    plain = {"Nats-Msg-Id": "x"}
    assert traced_headers(plain) is plain  # nothing current: no copy, no injection
    assert traced_headers() is None
    with tracer.start_as_current_span("sender") as sender:
        headers = traced_headers({"Nats-Msg-Id": "x"})
        alone = traced_headers()
    assert headers["Nats-Msg-Id"] == "x"
    assert alone is not None and alone["traceparent"] == headers["traceparent"]
    trace_id = format(sender.get_span_context().trace_id, "032x")
    assert headers["traceparent"].split("-")[1] == trace_id


async def test_a_service_with_no_readiness_check_yet_is_not_ready() -> None:
    """Probes and test harnesses poll /readyz while a service starts; before it has
    registered its checks nothing says it can serve, so it must answer 503."""
    health = HealthServer(CollectorRegistry())
    await health.start()
    try:
        status, _ = await http_get(health.port, "/readyz")
        assert status == 503
        health.add_readiness_check("nats", lambda: True)
        assert (await http_get(health.port, "/readyz"))[0] == 200
    finally:
        await health.stop()


async def test_readiness_says_draining_only_once_shutdown_has_begun() -> None:
    runtime = ServiceRuntime(ServiceSettings(http=HttpSettings(port=0)))
    async with runtime:
        port = runtime.health.port

        async def serve(rt: ServiceRuntime) -> None:
            rt.add_readiness_check("nats", lambda: True)
            await rt.wait_for_shutdown()

        task = asyncio.create_task(runtime.run(serve))
        for _ in range(100):
            if runtime.serving:
                break
            await asyncio.sleep(0.01)
        status, body = await http_get(port, "/readyz")
        assert (status, json.loads(body)) == (
            200,
            {"ready": True, "draining": False, "checks": {"started": True, "nats": True}},
        )
        runtime.request_shutdown()
        assert await task == 0
        status, body = await http_get(port, "/readyz")
        assert status == 503
        assert json.loads(body)["draining"] is True


async def test_a_shutdown_while_starting_cancels_the_start_and_exits_cleanly() -> None:
    cancelled = asyncio.Event()

    async def serve(runtime: ServiceRuntime) -> None:
        try:
            await asyncio.Event().wait()  # e.g. waiting for an unreachable NATS
        except asyncio.CancelledError:
            cancelled.set()
            raise

    runtime = ServiceRuntime(ServiceSettings(http=HttpSettings(port=-1), shutdown_grace=30))
    async with runtime:
        task = asyncio.create_task(runtime.run(serve))
        await asyncio.sleep(0)
        readiness = await runtime.readiness.report()
        assert (readiness.ready, readiness.draining) == (False, False)
        runtime.request_shutdown()
        assert await task == 0
    assert cancelled.is_set()


async def test_a_start_that_swallows_the_cancellation_is_cancelled_again() -> None:
    """On Python 3.11 a cancellation that lands as a `wait_for` inside the start finishes is
    lost (nats-py's connect waits that way while NATS is unreachable): the start goes on
    retrying. The shutdown cancels again, so the service stops long before its grace."""
    cancellations = 0

    async def serve(runtime: ServiceRuntime) -> None:
        nonlocal cancellations
        while True:  # a retry loop whose first cancellation is lost, as in that case
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                cancellations += 1
                if cancellations > 1:
                    raise

    runtime = ServiceRuntime(ServiceSettings(http=HttpSettings(port=-1), shutdown_grace=600))
    async with runtime:
        task = asyncio.create_task(runtime.run(serve))
        await asyncio.sleep(0.05)
        runtime.request_shutdown()
        # Bounded: with one cancellation only, `run` would wait out the 600 s grace.
        await asyncio.wait({task}, timeout=60)
        assert task.done(), "the start went on after the shutdown"
        assert task.result() == 0
    assert cancellations == 2


async def test_a_service_that_fails_while_serving_exits_with_code_1() -> None:
    async def serve(runtime: ServiceRuntime) -> None:
        raise RuntimeError("storage unreadable")

    runtime = ServiceRuntime(ServiceSettings(http=HttpSettings(port=-1)))
    async with runtime:
        assert await runtime.run(serve) == 1


async def test_the_ready_gauge_follows_the_last_readiness_report() -> None:
    runtime = ServiceRuntime(ServiceSettings(service_name="probe", http=HttpSettings(port=-1)))
    await runtime.readiness.report()
    assert runtime.registry.get_sample_value("opolyx_service_ready") == 0.0
    runtime._serving = True  # what wait_for_shutdown sets
    await runtime.readiness.report()
    assert runtime.registry.get_sample_value("opolyx_service_ready") == 1.0
    info = runtime.registry.get_sample_value(
        "opolyx_service_info", {"service": "probe", "instance": runtime.instance_id}
    )
    assert info == 1.0
