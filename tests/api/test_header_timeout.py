"""Slow headers (slowloris) are timed out: a connection that trickles its request headers gets 408 and is closed
within GPU_ADVISOR_HEADER_TIMEOUT_S, on a new connection and on a keep-alive one after a response; a normal request
is unaffected. Raw sockets against a live uvicorn on 127.0.0.1 with the server's own protocol classes.

Regression: uvicorn has no header timeout (each byte cancels its keep-alive timer): 500 connections that trickled
their headers stayed open."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from fastapi import FastAPI

from service.api.header_timeout import HTTPTOOLS, H11WithHeaderDeadline
from tests.api.conftest import free_socket, wait_for

pytestmark = pytest.mark.integration
TIMEOUT_S = 0.5
PROTOCOLS = [H11WithHeaderDeadline] + ([HTTPTOOLS] if HTTPTOOLS is not None else [])


def fast(protocol: type) -> type:
    return type(f"Fast{protocol.__name__}", (protocol,), {"header_timeout_s": TIMEOUT_S})


@pytest.fixture(params=PROTOCOLS, ids=lambda p: p.__name__)
def port(request: pytest.FixtureRequest) -> Iterator[int]:
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    sock = free_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", http=fast(request.param)))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    number = int(sock.getsockname()[1])
    wait_for(f"http://127.0.0.1:{number}/healthz")
    yield number
    server.should_exit = True
    thread.join(timeout=10)


def trickle(conn: socket.socket, head: bytes, limit_s: float = 5.0) -> tuple[float, bytes]:
    """Send `head`, then one header byte every 0.1 s until the server closes; (seconds it took, what it sent)."""
    conn.settimeout(0.1)
    started, got = time.monotonic(), b""
    conn.sendall(head)
    while time.monotonic() - started < limit_s:
        try:
            conn.sendall(b"x")
            chunk = conn.recv(4096)
            if not chunk:
                break
            got += chunk
        except TimeoutError:
            continue
        except OSError:  # reset or broken pipe: closed
            break
    return time.monotonic() - started, got


def test_trickled_headers_get_408_and_the_connection_is_closed(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        took, got = trickle(conn, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    assert took < TIMEOUT_S + 1.5, took  # it stayed open (5 s here, forever in production) before
    assert got.startswith(b"HTTP/1.1 408") and b"request_timeout" in got


def test_the_next_request_on_a_keep_alive_connection_has_its_own_deadline(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = conn.recv(4096)
        assert first.startswith(b"HTTP/1.1 200")
        took, got = trickle(conn, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    assert took < TIMEOUT_S + 1.5 and b"HTTP/1.1 408" in got, (took, got)  # after the rest of the first answer


def test_many_slow_connections_are_all_closed_and_the_server_still_answers(port: int) -> None:
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
    for conn in conns:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never finished
    time.sleep(TIMEOUT_S + 0.7)
    closed = 0
    for conn in conns:
        conn.settimeout(1.0)
        try:
            data = conn.recv(4096)
            closed += data.startswith(b"HTTP/1.1 408") or data == b""
        except TimeoutError:  # still open, waiting for the rest of the headers
            pass
        except OSError:  # reset: closed
            closed += 1
        conn.close()
    assert closed == len(conns)
    with socket.create_connection(("127.0.0.1", port)) as conn:  # a prompt request is unaffected
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")


def test_serve_runs_uvicorn_with_the_deadline(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    from service import server
    from service.api import header_timeout
    from service.settings import Settings

    seen: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(header_timeout.HeaderDeadline, "header_timeout_s", None)
    server.serve(settings=Settings(data_dir=tmp_path, header_timeout_s=7))  # type: ignore[arg-type]
    assert issubclass(seen["http"], header_timeout.HeaderDeadline)  # type: ignore[arg-type]
    assert header_timeout.HeaderDeadline.header_timeout_s == 7 and seen["timeout_keep_alive"] == 5
