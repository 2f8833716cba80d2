"""Thin synchronous wrappers over the async core."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to completion from sync code, also when the caller already runs an
    event loop (a notebook, an async web app calling sync code): then it runs on a thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="scorers-sync")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


def blocking(async_function: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The sync twin of `async_function`, with its signature (as type checkers, editors and
    `help()` see it): `run_evals = blocking(arun_evals)` is named `run_evals`."""

    @functools.wraps(async_function)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(async_function(*args, **kwargs))

    name = async_function.__name__.removeprefix("a")
    run.__name__, run.__qualname__ = name, async_function.__qualname__.removesuffix(async_function.__name__) + name
    run.__doc__ = f"Sync twin of `{async_function.__name__}` (same arguments).\n\n{async_function.__doc__ or ''}".rstrip()
    return run
