"""`cancel_and_wait`: a stop that is never lost, never hides the caller's own cancellation,
and never waits forever."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from opolyx_service.tasks import cancel_and_wait


def _wait_for_loop(wake: asyncio.Event, rounds: list[int]) -> asyncio.Task[None]:
    async def loop() -> None:
        while True:
            wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), 60)
            rounds.append(1)

    return asyncio.create_task(loop())


def _stubborn(release: asyncio.Event) -> asyncio.Task[None]:
    """A task that ignores every cancellation until `release` is set (and it is woken)."""

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                continue

    return asyncio.create_task(stubborn())


async def test_a_loop_whose_wait_for_swallowed_the_cancellation_is_stopped() -> None:
    wake = asyncio.Event()
    rounds: list[int] = []
    task = _wait_for_loop(wake, rounds)
    await asyncio.sleep(0)  # the loop waits in `wait_for`
    wake.set()  # its wait finishes in the same turn as the cancellation below
    await cancel_and_wait(task)
    assert task.cancelled()
    assert rounds == [1], "the first cancellation was swallowed: the loop went round once"


async def test_a_plain_cancel_and_await_of_that_loop_would_hang() -> None:
    # The premise of the helper on this Python (the test fails once CPython no longer
    # swallows the cancellation, which is when the helper could go).
    wake = asyncio.Event()
    rounds: list[int] = []
    task = _wait_for_loop(wake, rounds)
    await asyncio.sleep(0)
    wake.set()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=1.0)
    assert not done, "this Python delivers the cancellation: cancel_and_wait's retry is moot"
    await cancel_and_wait(task)
    assert task.cancelled()


async def test_the_callers_own_cancellation_is_not_swallowed() -> None:
    release = asyncio.Event()
    task = _stubborn(release)
    await asyncio.sleep(0)
    stopping = asyncio.create_task(cancel_and_wait(task, limit=60))
    await asyncio.sleep(0.05)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    release.set()
    task.cancel()
    await asyncio.wait({task}, timeout=5)
    assert task.done()


async def test_a_task_that_never_ends_is_given_up_on_after_the_limit() -> None:
    release = asyncio.Event()
    task = _stubborn(release)
    await asyncio.sleep(0)
    await cancel_and_wait(task, limit=0.3)
    assert not task.done(), "returned although the task still runs: given up on"
    release.set()
    task.cancel()
    await asyncio.wait({task}, timeout=5)
    assert task.done()


async def test_what_a_task_raised_is_retrieved_not_left_for_the_garbage_collector() -> None:
    async def fails() -> None:
        raise ValueError("boom")

    task = asyncio.create_task(fails())
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert isinstance(task.exception(), ValueError)
