"""How much of what a server wrote to a TCP connection its client has taken
(``delivery_progress``): what the realtime feed (``games.tables.feed``) uses to
tell a client that stopped reading from one that is only slow. Interface layer."""

from __future__ import annotations

import socket
import struct
from typing import Any

# struct tcp_info (linux/tcp.h): tcpi_unacked (u32) at 24, tcpi_bytes_acked (u64,
# Linux 4.1) at 120, tcpi_notsent_bytes (u32, Linux 4.6) at 144.
_TCP_INFO = getattr(socket, "TCP_INFO", None)
_TCP_INFO_BYTES = 148


def delivery_progress(transport: Any) -> tuple[int, int] | None:
    """``(waiting, acknowledged)`` for a TCP connection: what was written to it
    that its client has not acknowledged yet (the transport's buffer and the
    kernel's unsent bytes, plus one per segment in flight: 0 only when all
    was taken), and how many bytes the
    client has acknowledged so far; ``None`` where the kernel does not say
    (not Linux, not TCP, closed).

    Why the kernel: a client that stops reading is invisible to a send until
    the kernel's send buffer is full, and on a fast link (loopback: ~2.8 MB)
    that can take minutes of deltas, during which a send never waits. A
    client whose receive window is full acknowledges nothing more, whatever
    the buffers hold: that is seen at once."""
    if _TCP_INFO is None or transport.is_closing():
        return None
    sock = transport.get_extra_info("socket")
    if sock is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 256)
    except (OSError, ValueError):
        return None
    if len(info) < _TCP_INFO_BYTES:
        return None
    (unacked,) = struct.unpack_from("=I", info, 24)
    (acknowledged,) = struct.unpack_from("=Q", info, 120)
    (unsent,) = struct.unpack_from("=I", info, 144)
    return int(transport.get_write_buffer_size()) + unsent + unacked, acknowledged
