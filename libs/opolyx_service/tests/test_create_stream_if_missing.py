"""`create_stream_if_missing`: a consumer that starts before a stream's owner gets the
stream; an owner's configuration is never changed by it."""

from __future__ import annotations

from nats.aio.client import Client
from opolyx_service import create_stream_if_missing, ensure_stream


async def test_a_missing_stream_is_created_and_an_existing_one_left_as_its_owner_set_it(
    nc: Client,
) -> None:
    js = nc.jetstream()
    await create_stream_if_missing(js, "EARLY", ["early.>"])
    assert (await js.stream_info("EARLY")).config.subjects == ["early.>"]

    await ensure_stream(js, "OWNED", ["owned.>"], max_age=600.0)
    await create_stream_if_missing(js, "OWNED", ["owned.>", "other.>"])
    config = (await js.stream_info("OWNED")).config
    assert config.subjects == ["owned.>"]
    assert config.max_age == 600.0
