"""Deterministic head + tail truncation of a streamed output: the same bytes, the same text."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from contextos_lab.harness.redaction import cut_secret_hit


def truncation_marker(dropped: int) -> str:
    return f"...truncated {dropped} lines..."


class HeadTail:
    """Keeps the first `head` and last `tail` lines of a stream, and counts the rest.

    Lines are stored as bytes and decoded only when rendered, so a long log costs O(head+tail).
    """

    def __init__(self, head: int = 20, tail: int = 80, max_line_bytes: int = 2000) -> None:
        if head < 0 or tail < 0 or max_line_bytes < 1:
            raise ValueError("head and tail must be >= 0, max_line_bytes >= 1")
        self.head, self.tail, self.max_line_bytes = head, tail, max_line_bytes
        self._head: list[bytes] = []
        self._tail: deque[bytes] = deque(maxlen=tail) if tail else deque(maxlen=0)
        self.total = 0

    def add(self, line: bytes, dropped_bytes: int = 0) -> None:
        """One complete line (without its newline); `dropped_bytes` were already cut upstream."""
        if len(line) > self.max_line_bytes:
            dropped_bytes += len(line) - self.max_line_bytes
            line = line[: self.max_line_bytes]
        if dropped_bytes:
            # the cut may have split a secret: its start alone matches no full pattern
            name = cut_secret_hit(line.decode("utf-8", errors="replace"))
            if name is not None:
                line = f"[redacted: {name}]".encode()
            line += f" ...[line cut, {dropped_bytes} more bytes]".encode()
        self.total += 1
        if len(self._head) < self.head:
            self._head.append(line)
        elif self.tail:
            self._tail.append(line)

    @property
    def dropped(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def lines(self) -> list[str]:
        kept = [b.decode("utf-8", errors="replace") for b in self._head]
        if self.dropped:
            kept.append(truncation_marker(self.dropped))
        kept.extend(b.decode("utf-8", errors="replace") for b in self._tail)
        return kept

    def render(self) -> str:
        return "\n".join(self.lines())


def truncate_lines(lines: Iterable[str], head: int = 20, tail: int = 80) -> str:
    """The record text for a sequence of lines (same rule the streaming runner applies)."""
    acc = HeadTail(head=head, tail=tail, max_line_bytes=1 << 30)
    for line in lines:
        acc.add(line.encode("utf-8"))
    return acc.render()


class LineSplitter:
    """Bytes chunks -> complete lines, each buffered up to `max_bytes` (the excess is counted)."""

    def __init__(self, max_bytes: int, emit: Callable[[bytes, int], None]) -> None:
        self._max = max_bytes
        self._emit = emit
        self._buf = bytearray()
        self._dropped = 0
        self._open = False

    def feed(self, chunk: bytes) -> None:
        parts = chunk.split(b"\n")
        for part in parts[:-1]:
            self._take(part)
            self._flush()
        if parts[-1]:
            self._take(parts[-1])

    def close(self) -> None:
        if self._open:
            self._flush()

    def _take(self, piece: bytes) -> None:
        self._open = True
        room = self._max - len(self._buf)
        if len(piece) <= room:
            self._buf += piece
        else:
            self._buf += piece[: max(room, 0)]
            self._dropped += len(piece) - max(room, 0)

    def _flush(self) -> None:
        line = bytes(self._buf)
        if line.endswith(b"\r"):
            line = line[:-1]
        self._emit(line, self._dropped)
        self._buf.clear()
        self._dropped = 0
        self._open = False
