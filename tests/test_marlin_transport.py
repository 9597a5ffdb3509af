"""The Marlin server's HTTP transport: connections kept and replaced, answers read whole and bounded, proxies
from the environment, and nothing left waiting when a request is given up."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from marlin_agent.marlin import transport
from marlin_agent.marlin.transport import ChatApi, ConnectionFailed, HttpStatus, ResponseInvalid
from tests.machine import needs

MODELS = {"object": "list", "data": [{"id": "marlin-2b", "owned_by": "vlm"}]}


class _Server:
    """A small HTTP/1.1 server: what it was asked (request lines, headers), on how many connections."""

    def __init__(self, answer=None, keep_open: bool = True) -> None:
        seen = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                seen.connections += 1

            def _answer(self) -> None:
                seen.requests.append((self.requestline, dict(self.headers)))
                length = int(self.headers.get("Content-Length") or 0)
                seen.bodies.append(self.rfile.read(length) if length else b"")
                (answer or _json)(self)
                if not keep_open:  # hangs up without saying so ("Connection: close"), as idle timeouts do
                    self.close_connection = True

            do_GET = do_POST = _answer

            def log_message(self, *args) -> None:
                pass

        self.connections, self.requests, self.bodies = 0, [], []
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def _json(handler, document=MODELS, status=200, headers=()) -> None:
    body = json.dumps(document).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def server():
    running = _Server()
    yield running
    running.close()


def _models(api: ChatApi, times: int = 1):
    async def go():
        try:
            return [await api.models(timeout=10) for _ in range(times)]
        finally:
            await api.close()

    return asyncio.run(go())


def test_requests_one_after_another_share_one_connection(server):
    assert _models(ChatApi(f"http://127.0.0.1:{server.port}/v1", "key"), times=4) == [{"marlin-2b": "vlm"}] * 4
    assert server.connections == 1
    line, headers = server.requests[0]
    assert line == "GET /v1/models HTTP/1.1"
    assert headers["Authorization"] == "Bearer key" and headers["User-Agent"].startswith("marlin-agent/")


def test_a_kept_connection_the_server_has_closed_since_is_replaced_without_an_error():
    closing = _Server(keep_open=False)
    try:
        assert _models(ChatApi(f"http://127.0.0.1:{closing.port}/v1", "key"), times=3) == [{"marlin-2b": "vlm"}] * 3
        assert closing.connections == 3
    finally:
        closing.close()


def test_a_completion_is_posted_as_json_and_a_chunked_answer_is_read_whole():
    def chunked(handler) -> None:
        body = json.dumps({"choices": [{"message": {"content": "<0.0 - 4.0> a red circle"}}],
                           "usage": {"prompt_tokens": 7, "completion_tokens": 5}}).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for start in range(0, len(body), 10):
            piece = body[start:start + 10]
            handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")

    chunks = _Server(chunked)
    api = ChatApi(f"http://127.0.0.1:{chunks.port}/v1", "key")
    try:
        completion = asyncio.run(api.complete({"model": "m", "messages": []}, timeout=10))
    finally:
        chunks.close()
    assert (completion.content, completion.prompt_tokens, completion.completion_tokens) == (
        "<0.0 - 4.0> a red circle", 7, 5)
    assert chunks.requests[0][0] == "POST /v1/chat/completions HTTP/1.1"
    assert json.loads(chunks.bodies[0]) == {"model": "m", "messages": []}


def test_an_error_status_keeps_what_the_server_said_and_its_headers():
    busy = _Server(lambda h: _json(h, {"error": {"message": "queue full"}}, 429, [("Retry-After", "3")]))
    try:
        with pytest.raises(HttpStatus) as caught:
            _models(ChatApi(f"http://127.0.0.1:{busy.port}/v1", "key"))
    finally:
        busy.close()
    assert (caught.value.status, caught.value.message, caught.value.headers["retry-after"]) == (429, "queue full", "3")


def test_an_answer_larger_than_any_completion_is_invalid(server, monkeypatch):
    monkeypatch.setattr(transport, "_MOST_BYTES", 20)
    with pytest.raises(ResponseInvalid, match="larger than"):
        _models(ChatApi(f"http://127.0.0.1:{server.port}/v1", "key"))


def test_an_address_that_is_not_http_fails_as_a_connection_that_cannot_be_made_and_keeps_its_secrets():
    with pytest.raises(ConnectionFailed, match="not an http") as caught:
        _models(ChatApi("ftp://ana:hunter2@example.org/v1", "key"))
    assert "ftp://" in str(caught.value) and "hunter2" not in str(caught.value)


def test_a_plain_request_goes_through_the_environment_proxy_with_its_whole_address(server, monkeypatch):
    # The proxy here answers itself; the server's name is one no resolver knows, so only the proxy can serve it.
    monkeypatch.setenv("HTTP_PROXY", f"http://ana:s%40fe@127.0.0.1:{server.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert _models(ChatApi("http://marlin.invalid:8000/v1", "key")) == [{"marlin-2b": "vlm"}]
    line, headers = server.requests[0]
    assert line == "GET http://marlin.invalid:8000/v1/models HTTP/1.1"
    assert headers["Proxy-Authorization"] == "Basic YW5hOnNAZmU="  # ana:s@fe


def test_an_https_server_is_reached_through_a_tunnel_the_proxy_opens(monkeypatch):
    proxy = socket.socket()
    proxy.bind(("127.0.0.1", 0))
    proxy.listen(1)
    asked: list[bytes] = []

    def refuse_the_tunnel() -> None:
        connection, _ = proxy.accept()
        asked.append(connection.recv(4096))
        connection.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        connection.close()

    threading.Thread(target=refuse_the_tunnel, daemon=True).start()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
    try:
        with pytest.raises(ConnectionFailed, match="403"):
            _models(ChatApi("https://marlin.invalid/v1", "key"))
    finally:
        proxy.close()
    assert asked[0].startswith(b"CONNECT marlin.invalid:443 HTTP/1.")


def test_a_server_on_this_machine_is_never_sent_to_a_proxy(server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    assert _models(ChatApi(f"http://localhost:{server.port}/v1", "key")) == [{"marlin-2b": "vlm"}]


def test_a_request_given_up_holds_nothing_up_when_the_process_ends():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # takes the connection and never answers
    program = (
        "import asyncio\nfrom marlin_agent.marlin.transport import ChatApi\n"
        f"api = ChatApi('http://127.0.0.1:{silent.getsockname()[1]}/v1', 'key')\n"
        "async def go():\n"
        "    try:\n        await asyncio.wait_for(api.models(timeout=120), 0.5)\n"
        "    except asyncio.TimeoutError:\n        print('given up')\n"
        "asyncio.run(go())\n")
    try:
        finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    finally:
        silent.close()
    assert finished.returncode == 0 and finished.stdout.strip() == "given up", finished.stderr


needs_openssl = needs(shutil.which("openssl") is not None, "the openssl command (to make a test certificate)",
                      "apt install openssl")


@pytest.fixture
def tls_server(tmp_path):
    """A server over TLS with a certificate for 127.0.0.1 that no authority signed, and that certificate."""
    import ssl

    key, certificate = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(certificate)],
                   check=True, capture_output=True)
    served = _Server()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    served.http.socket = context.wrap_socket(served.http.socket, server_side=True)
    yield served, certificate
    served.close()


@needs_openssl
def test_an_https_server_whose_certificate_no_authority_signed_is_refused(tls_server):
    served, _ = tls_server
    with pytest.raises(ConnectionFailed, match="CERTIFICATE_VERIFY_FAILED"):
        _models(ChatApi(f"https://127.0.0.1:{served.port}/v1", "key"))
    assert served.requests == []  # nothing, the key least of all, was sent


@needs_openssl
def test_an_https_server_the_certificate_store_trusts_is_asked_over_tls(tls_server, monkeypatch):
    import ssl

    served, certificate = tls_server
    monkeypatch.setattr(transport, "tls_context", lambda: ssl.create_default_context(cafile=str(certificate)))
    assert _models(ChatApi(f"https://127.0.0.1:{served.port}/v1", "key"), times=2) == [{"marlin-2b": "vlm"}] * 2
    assert served.connections == 1 and served.requests[0][1]["Authorization"] == "Bearer key"
