"""Keep URL fetches away from the machine's own network when a caller, not the user, chose the URL.

An agent driving the MCP server can name any URL. Fetched blindly, ``http://127.0.0.1:8080/admin``
or ``http://169.254.169.254/`` would make this process a way into services that trust the local
network. So, unless the operator allows it, such a fetch is checked twice:

- before any work, the URL's host is resolved and refused when any address it has is loopback,
  private, link-local, multicast, reserved or unspecified;
- while yt-dlp works, every connection it makes (page, redirects, media, subtitles) goes through a
  small local proxy that resolves the destination itself, refuses those addresses, and connects to
  the address it checked, so neither a redirect nor a DNS answer that changes meanwhile gets through.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from socketserver import StreamRequestHandler, ThreadingTCPServer
from urllib.parse import urlsplit

from marlin_agent.errors import PathNotAllowed

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOW_HINT = ("Only public addresses may be fetched for a caller. If this server should reach footage on your "
              "own network, set [mcp] allow_private_urls = true in its config.")
_HEAD_LIMIT = 64 * 1024
_TIMEOUT = 30.0


def internal(address: Address) -> bool:
    """Whether ``address`` belongs to this machine or its networks rather than the public internet."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (address.is_loopback or address.is_private or address.is_link_local or address.is_multicast
            or address.is_reserved or address.is_unspecified or not address.is_global)


def resolve(host: str, port: int) -> list[Address]:
    """The addresses ``host`` has now; none when it does not resolve (the fetch then fails on its own)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]


def checked_addresses(host: str, port: int, forbidden: Callable[[Address], bool] = internal) -> list[Address]:
    """The addresses of ``host``; refused when any of them is forbidden (one bad answer is enough)."""
    addresses = resolve(host, port)
    bad = [a for a in addresses if forbidden(a)]
    if bad:
        raise PathNotAllowed(f"{host} resolves to {bad[0]}, an address on this machine or its private network",
                             hint=ALLOW_HINT)
    return addresses


def check_url(url: str, forbidden: Callable[[Address], bool] = internal) -> None:
    """Refuse ``url`` before any request when its host is an internal address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PathNotAllowed(f"not an http(s) URL: {url}")
    checked_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), forbidden)


class _Relay(StreamRequestHandler):
    """One client connection: CONNECT tunnels (https) and absolute-form requests (plain http)."""

    server: GuardProxy

    def handle(self) -> None:
        head = self._head()
        if head is None:
            return
        request_line, *headers = head.split(b"\r\n")
        try:
            method, target, version = request_line.decode("latin-1").split(" ", 2)
        except ValueError:
            return self._refuse(400, "malformed request")
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = self._connect(host.strip("[]"), int(port or 443))
            if upstream is None:
                return
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            self._pipe(upstream, b"")
            return
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:
            return self._refuse(400, "only absolute http URLs and CONNECT go through this proxy")
        upstream = self._connect(parts.hostname, parts.port or 80)
        if upstream is None:
            return
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = [h for h in headers if h and not h.lower().startswith((b"proxy-", b"connection:", b"keep-alive:"))]
        forwarded = b"\r\n".join([f"{method} {path} {version}".encode("latin-1"), *kept, b"Connection: close",
                                  b"", b""])
        self._pipe(upstream, forwarded)

    def _head(self) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.connection.recv(4096)
            if not chunk or len(data) > _HEAD_LIMIT:
                return None
            data += chunk
        head, _, self._rest = data.partition(b"\r\n\r\n")
        return head

    def _connect(self, host: str, port: int) -> socket.socket | None:
        try:
            addresses = checked_addresses(host, port, self.server.forbidden)
        except PathNotAllowed as exc:
            self.server.refused.append(exc.message)
            self._refuse(403, exc.message)
            return None
        for address in addresses:  # the checked address itself: no second lookup to be fooled by
            try:
                return socket.create_connection((str(address), port), timeout=_TIMEOUT)
            except OSError:
                continue
        self._refuse(502, f"cannot resolve or connect to {host}:{port}")
        return None

    def _refuse(self, status: int, reason: str) -> None:
        body = reason.encode("utf-8", "replace")
        self.wfile.write(f"HTTP/1.1 {status} Refused\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                         .encode("latin-1") + body)
        self.wfile.flush()

    def _pipe(self, upstream: socket.socket, first: bytes) -> None:
        """Relay both ways until either side closes."""
        client = self.connection

        def client_to_upstream() -> None:
            try:
                upstream.sendall(first + self._rest)
                while data := client.recv(65536):
                    upstream.sendall(data)
            except OSError:
                pass
            finally:
                try:
                    upstream.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

        sender = threading.Thread(target=client_to_upstream, daemon=True)
        sender.start()
        try:
            while data := upstream.recv(65536):
                client.sendall(data)
        except OSError:
            pass
        finally:
            upstream.close()


class GuardProxy(ThreadingTCPServer):
    """A loopback proxy that connects only to addresses ``forbidden`` lets through; use as a context."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, forbidden: Callable[[Address], bool] = internal) -> None:
        super().__init__(("127.0.0.1", 0), _Relay)
        self.forbidden = forbidden
        self.refused: list[str] = []  # why connections were refused, for the error a fetch ends with
        self.url = f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> GuardProxy:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.shutdown()
        self.server_close()
