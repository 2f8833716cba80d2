"""Who holds a lease or a claim in a store shared by processes: `host:pid:nonce`, and whether
the holder is a process of this host that is gone (its hold is freed at once then, not when
it runs out)."""

from __future__ import annotations

import os
import socket
import uuid


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def new_owner() -> str:
    """A name for one holder in this process: its host, its pid, and a nonce (two holders in
    one process are two owners)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def left_by_the_dead(owner: str | None) -> bool:
    """Whether `owner` (as `new_owner` names one) was a process of this host that has ended."""
    if owner is None:
        return False
    parts = owner.rsplit(":", 2)  # a host's name may hold a colon; the pid and nonce do not
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    return parts[0] == socket.gethostname() and not pid_alive(int(parts[1]))
