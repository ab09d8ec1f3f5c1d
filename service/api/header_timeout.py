"""A deadline for a request's headers, which uvicorn does not have.

    uvicorn.run(app, http=protocol_class(), ...)     # service.server does this; "h11" or "httptools"

uvicorn times out an idle keep-alive connection (`timeout_keep_alive`, 5 s) and caps the headers' size (h11:
16 KiB), but a client that sends its headers a byte at a time is never timed out: each byte cancels the keep-alive
timer, and 500 such connections stayed open (slowloris). Here each connection must complete a request's headers
within `GPU_ADVISOR_HEADER_TIMEOUT_S` (10 s) of opening, and the next request's headers within that of the previous
response; otherwise it gets `408 Request Timeout` (when part of a request came) and is closed. The body has its own
deadline (service.api.limits, `GPU_ADVISOR_BODY_TIMEOUT_S`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)
TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                    b"content-length: %d\r\n\r\n%s")
TIMEOUT_BODY = (b'{"error": {"code": "request_timeout", "message": "The request headers did not arrive in time.", '
                b'"fix": "Send the whole request at once, promptly."}}')


class HeaderDeadline:
    """Mixed in before a uvicorn HTTP protocol class (H11Protocol, HttpToolsProtocol): arms a timer when the
    connection opens and after each response, disarms it when a request's headers are complete (the protocol
    starts a new request cycle)."""

    header_timeout_s: float | None = None  # None: GPU_ADVISOR_HEADER_TIMEOUT_S

    _header_timer: asyncio.TimerHandle | None
    _armed_cycle: Any
    _data_since_armed: bool

    def _timeout_s(self) -> float:
        if self.header_timeout_s is None:
            from service.settings import get_settings

            type(self).header_timeout_s = get_settings().header_timeout_s
        return float(self.header_timeout_s or 0)

    def _arm(self) -> None:
        self._disarm()
        timeout = self._timeout_s()
        if timeout > 0:
            self._armed_cycle = getattr(self, "cycle", None)
            self._data_since_armed = False
            loop: asyncio.AbstractEventLoop = self.loop  # type: ignore[attr-defined]
            self._header_timer = loop.call_later(timeout, self._headers_timed_out)

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        self._header_timer = None

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        transport: asyncio.Transport = self.transport  # type: ignore[attr-defined]
        if transport.is_closing() or getattr(self, "cycle", None) is not self._armed_cycle:
            return
        if self._data_since_armed:  # part of a request came: say why before closing
            log.info("closing a connection whose request headers did not arrive within %.0f s", self._timeout_s())
            transport.write(TIMEOUT_RESPONSE % (len(TIMEOUT_BODY), TIMEOUT_BODY))
        transport.close()

    # -- the protocol's hooks ------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        self._data_since_armed = True
        super().data_received(data)  # type: ignore[misc]
        if self._header_timer is not None and getattr(self, "cycle", None) is not self._armed_cycle:
            self._disarm()  # a request's headers are complete: the body has its own deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._arm()  # the next request on this keep-alive connection gets its own deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402  (uvicorn: the service extra)


class H11WithHeaderDeadline(HeaderDeadline, H11Protocol):
    pass


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is optional: uvicorn then uses h11
    HTTPTOOLS: type[asyncio.Protocol] | None = None
else:

    class HttpToolsWithHeaderDeadline(HeaderDeadline, HttpToolsProtocol):
        pass

    HTTPTOOLS = HttpToolsWithHeaderDeadline


def protocol_class(kind: str = "auto") -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with the deadline ("auto": httptools when installed, as uvicorn picks; else h11).
    Module-level classes, so `--workers N` can hand them to its worker processes."""
    if kind == "h11" or (kind == "auto" and HTTPTOOLS is None):
        return H11WithHeaderDeadline
    if HTTPTOOLS is None:
        raise ImportError("httptools is not installed")
    return HTTPTOOLS
