"""Live footage and alert receivers on loopback, for the `watch` tests and bench (test instruments only).

- ``keyframed``: a synthetic video encoded again with a keyframe every second, as cameras send.
- ``LiveHls``: an HTTP server that publishes a video as a live HLS playlist, a segment at a time
  in real time (a sliding window, no end marker), and answers 404 once it has "gone offline".
- ``publish_rtsp``: FFmpeg (the binary imageio-ffmpeg carries) sending a video in real time to an
  RTSP address, as a camera configured to push does.
- ``WebhookReceiver``: an HTTP server that records every JSON body POSTed to it (and can fail the
  first requests, to exercise retries).
- ``Mosquitto``: Debian's MQTT broker on a free loopback port, with a subscriber that records messages.
"""

from __future__ import annotations

import json
import math
import shutil
import socket
import subprocess
import threading
import time
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import av


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keyframed(video: Path, target: Path, every: float = 1.0) -> Path:
    """``video`` encoded again (H.264, no sound) with a keyframe every ``every`` seconds."""
    with av.open(str(video)) as source, av.open(str(target), "w") as sink:
        picture = source.streams.video[0]
        rate = Fraction(picture.average_rate or 10).limit_denominator(1001)
        out = sink.add_stream("libx264", rate=rate)
        out.width, out.height, out.pix_fmt = picture.width, picture.height, "yuv420p"
        gop = max(1, round(float(rate) * every))
        out.options = {"preset": "ultrafast", "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0",
                       "bf": "0"}
        for n, frame in enumerate(source.decode(picture)):
            frame.pts, frame.time_base = n, 1 / rate
            for packet in out.encode(frame):
                sink.mux(packet)
        for packet in out.encode():
            sink.mux(packet)
    return target


def hls_segments(video: Path, folder: Path, seconds: float = 1.0) -> list[tuple[str, float]]:
    """``video`` (keyframed) cut into MPEG-TS segments of ``seconds`` in ``folder``: (name, duration) each."""
    folder.mkdir(parents=True, exist_ok=True)
    playlist = folder / "vod.m3u8"
    with av.open(str(video)) as source, av.open(str(playlist), "w", format="hls",
                                                options={"hls_time": str(seconds), "hls_list_size": "0",
                                                         "hls_segment_filename": str(folder / "seg%05d.ts")}) as sink:
        picture = source.streams.video[0]
        out = sink.add_stream_from_template(picture)
        for packet in source.demux(picture):
            if packet.dts is None:
                continue
            packet.stream = out
            sink.mux(packet)
    segments, duration = [], None
    for line in playlist.read_text().splitlines():
        if line.startswith("#EXTINF:"):
            duration = float(line.split(":", 1)[1].rstrip(","))
        elif line and not line.startswith("#"):
            segments.append((line, duration or seconds))
    return segments


class LiveHls:
    """Publishes ``segments`` as a live playlist at ``url``: segment n appears once its time has come."""

    def __init__(self, folder: Path, segments: list[tuple[str, float]], window: int = 4) -> None:
        self.folder, self.segments, self.window = folder, segments, window
        self.started = None
        self.offline = False
        self.requests: list[str] = []
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/live.m3u8"

    def _available(self) -> int:
        elapsed = time.monotonic() - self.started
        total, count = 0.0, 0
        for _, duration in self.segments:
            total += duration
            if total > elapsed + 1e-6:
                break
            count += 1
        return count

    def playlist(self) -> str:
        count = self._available()
        first = max(0, count - self.window)
        target = math.ceil(max(d for _, d in self.segments))
        lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{target}", f"#EXT-X-MEDIA-SEQUENCE:{first}"]
        for name, duration in self.segments[first:count]:
            lines += [f"#EXTINF:{duration:.3f},", name]
        return "\n".join(lines) + "\n"

    @property
    def finished(self) -> bool:
        return self._available() >= len(self.segments)

    def _handler(self):
        live = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                live.requests.append(self.path)
                if live.offline or live.started is None:
                    self.send_error(404)
                    return
                if self.path.startswith("/live.m3u8"):
                    body, kind = live.playlist().encode(), "application/vnd.apple.mpegurl"
                else:
                    path = live.folder / Path(self.path.lstrip("/")).name
                    if not path.is_file():
                        self.send_error(404)
                        return
                    body, kind = path.read_bytes(), "video/mp2t"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def __enter__(self) -> LiveHls:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def go_live(self) -> None:
        self.started = time.monotonic()

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def ffmpeg() -> str:
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def publish_rtsp(video: Path, url: str) -> subprocess.Popen:
    """FFmpeg sending ``video`` at its own pace to ``url`` over RTSP/TCP; it retries nothing."""
    return subprocess.Popen([ffmpeg(), "-hide_banner", "-loglevel", "error", "-re", "-i", str(video), "-c", "copy",
                             "-f", "rtsp", "-rtsp_transport", "tcp", url],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class WebhookReceiver:
    """Records the JSON bodies POSTed to ``url`` (with their headers); ``fail_first`` requests get a 503.
    ``port`` puts it where a target already points (a receiver that was down and comes back)."""

    def __init__(self, fail_first: int = 0, port: int = 0) -> None:
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.paths: list[str] = []
        self.failures_left = fail_first
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if receiver.failures_left > 0:
                    receiver.failures_left -= 1
                    self.send_error(503)
                    return
                receiver.bodies.append(json.loads(body))
                receiver.paths.append(self.path)
                receiver.headers.append(dict(self.headers))
                self.send_response(204)
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def __enter__(self) -> WebhookReceiver:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def mosquitto_binary() -> str | None:
    return shutil.which("mosquitto") or next((p for p in ("/usr/sbin/mosquitto",) if Path(p).exists()), None)


class Mosquitto:
    """Debian's mosquitto on a loopback port (anonymous, no persistence), and a subscriber to ``topic``."""

    def __init__(self, folder: Path, topic: str = "#", port: int = 0) -> None:
        self.port = port or free_port()  # a port given: a broker back where its clients still point
        self.topic = topic
        self.messages: list[tuple[str, dict, int, bool]] = []  # topic, payload, QoS, retained
        self.config = folder / "mosquitto.conf"
        self.config.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        self.process = None
        self.client = None

    def __enter__(self) -> Mosquitto:
        import paho.mqtt.client as mqtt

        binary = mosquitto_binary()
        if binary is None:
            raise RuntimeError("mosquitto is not installed (apt-get install mosquitto)")
        self.process = subprocess.Popen([binary, "-c", str(self.config)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="marlin-test-subscriber")
        self.client.on_connect = lambda client, *_: client.subscribe(self.topic, qos=1)
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.on_message = lambda client, userdata, message: self.messages.append(
            (message.topic, json.loads(message.payload), message.qos, bool(message.retain)))
        self.client.connect("127.0.0.1", self.port)
        self.client.loop_start()
        subscribed.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            self.client.loop_stop()
            self.client.disconnect()
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)


class RtspRelay:
    """A small RTSP server on loopback, as a camera or a media server is to a client that pulls: a sender
    publishes to ``url`` (ANNOUNCE, SETUP, RECORD; RTP interleaved over TCP, as ``publish_rtsp`` does) and
    each player (DESCRIBE, SETUP, PLAY) gets its packets. When the sender goes, players are dropped and
    ``url`` answers 404 until one publishes again: a camera that went away."""

    def __init__(self, path: str = "camera") -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"rtsp://127.0.0.1:{self.server.getsockname()[1]}/{path}"
        self.sdp: bytes | None = None
        self.players: list[tuple[socket.socket, dict[int, int]]] = []  # socket, stream index -> first channel
        self.lock = threading.Lock()
        self.closed = False

    def __enter__(self) -> RtspRelay:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.closed = True
        self.server.close()
        with self.lock:
            for player, _ in self.players:
                _hang_up(player)

    def _accept(self) -> None:
        while not self.closed:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    @staticmethod
    def _read_exact(connection: socket.socket, count: int) -> bytes:
        data = b""
        while len(data) < count:
            piece = connection.recv(count - len(data))
            if not piece:
                raise ConnectionError("closed")
            data += piece
        return data

    def _request(self, connection: socket.socket, first: bytes) -> tuple[str, dict[str, str], bytes]:
        head = first
        while b"\r\n\r\n" not in head:
            head += self._read_exact(connection, 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = self._read_exact(connection, int(headers.get("content-length", 0)))
        return lines[0], headers, body

    @staticmethod
    def _reply(connection: socket.socket, headers: dict[str, str], status: str = "200 OK",
               extra: dict[str, str] | None = None, body: bytes = b"") -> None:
        lines = [f"RTSP/1.0 {status}", f"CSeq: {headers.get('cseq', '0')}", *[f"{k}: {v}" for k, v in
                                                                             (extra or {}).items()]]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def _serve(self, connection: socket.socket) -> None:
        publishing, channels = False, {}
        try:
            while True:
                first = self._read_exact(connection, 1)
                if first == b"$":  # an interleaved RTP/RTCP packet from the sender
                    channel, size = self._read_exact(connection, 1)[0], int.from_bytes(self._read_exact(connection, 2))
                    self._forward(channel, self._read_exact(connection, size))
                    continue
                line, headers, body = self._request(connection, first)
                method = line.split()[0]
                publishing = publishing or method == "ANNOUNCE"
                if not self._answer(connection, method, line, headers, body, channels):
                    break
        except (ConnectionError, OSError, ValueError, IndexError):
            pass
        finally:
            if publishing:  # the camera went away: so does its stream
                self.sdp = None
                with self.lock:
                    for player, _ in self.players:
                        _hang_up(player)
                    self.players.clear()
            _hang_up(connection)

    def _answer(self, connection: socket.socket, method: str, line: str, headers: dict[str, str], body: bytes,
                channels: dict[int, int]) -> bool:
        """Reply to one RTSP request; False once the client tears the session down."""
        session = {"Session": "4242"}
        if method == "OPTIONS":
            self._reply(connection, headers, extra={
                "Public": "OPTIONS, DESCRIBE, ANNOUNCE, SETUP, PLAY, RECORD, TEARDOWN, GET_PARAMETER"})
        elif method == "ANNOUNCE":
            self.sdp = body
            self._reply(connection, headers)
        elif method == "DESCRIBE":
            if self.sdp is None:
                self._reply(connection, headers, "404 Not Found")
            else:
                self._reply(connection, headers, extra={"Content-Base": self.url + "/",
                                                        "Content-Type": "application/sdp"}, body=self.sdp)
        elif method == "SETUP":
            transport = headers.get("transport", "")
            index = int(line.split()[1].rsplit("=", 1)[-1]) if "streamid=" in line else len(channels)
            first_channel = int(transport.split("interleaved=")[1].split("-")[0]) if "interleaved=" in \
                transport else 2 * index
            channels[index] = first_channel
            self._reply(connection, headers, extra={**session, "Transport": transport})
        elif method == "PLAY":
            self._reply(connection, headers, extra=session)
            with self.lock:
                self.players.append((connection, dict(channels)))
        else:  # RECORD, GET_PARAMETER (a keep-alive), TEARDOWN
            self._reply(connection, headers, extra=session)
        return method != "TEARDOWN"

    def _forward(self, channel: int, payload: bytes) -> None:
        with self.lock:
            for player, channels in list(self.players):
                first = channels.get(channel // 2)
                if first is None:
                    continue
                try:
                    player.sendall(b"$" + bytes([first + channel % 2]) + len(payload).to_bytes(2) + payload)
                except OSError:
                    self.players.remove((player, channels))


def _hang_up(connection: socket.socket) -> None:
    """Close a connection another thread may be reading: shut down first, so that the reader wakes and the
    peer sees the end at once."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    connection.close()
