"""Record a live stream into closed segments, each ready to index the moment it closes.

Any input FFmpeg opens works (RTSP, RTMP, HLS ``.m3u8``, HTTP, SRT...). Packets are copied, never
re-encoded, into Matroska files cut at the first keyframe after ``segment_seconds``: a segment
starts with a picture that decodes, and a file cut short by a crash still plays up to its last
packet. A file is written as ``NAME.mkv.part`` and renamed when closed, so a closed segment is never
mistaken for one being written; a leftover part is recovered at the next start.

A dropped stream (an error, its end, or ``timeout`` seconds of silence) is reopened with a growing
wait up to ``reconnect_max``; the time not recorded is reported as a gap, never skipped silently.
A live HLS playlist reopened starts a few segments back from its live edge: what was recorded
already is recognised by its timestamps (HLS keeps them running) and not recorded twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import av

from marlin_agent.media.sources import VIDEO_EXTENSIONS

PART = ".part"
SUFFIX = ".mkv"
_MIN_SECONDS = 1.0  # a shorter tail is not worth a Marlin call (and may hold no whole frame)
_ORIGIN_TAG = "MARLIN_STREAM_ORIGIN"
_ENDED = "the stream ended"
_REPLAY_WINDOW = 120.0  # timestamps this far below the last recorded ones mean the encoder restarted


@dataclass(frozen=True)
class Segment:
    path: Path
    wall_start: float  # epoch seconds of its first frame
    duration: float
    stream_end: float | None = None  # where it ended in the stream's own timestamps (seconds)


@dataclass(frozen=True)
class Outage:
    """The stream was not recorded from ``since`` until ``until`` (epoch seconds)."""

    since: float
    until: float
    reason: str


def segment_name(wall_start: float) -> str:
    return datetime.fromtimestamp(wall_start, timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ") + SUFFIX


def wall_start_of(path: Path) -> float | None:
    """The epoch time a segment's name records, or None for a file this module did not name."""
    name = path.name.removesuffix(PART).removesuffix(SUFFIX)
    try:
        return datetime.strptime(name, "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def open_options(url: str, wait: float) -> tuple[str, dict[str, str], bool]:
    """The address FFmpeg opens, its demuxer options, and whether it waits for a sender.

    RTSP goes over TCP (what NVRs use: no lost packets behind NAT or Wi-Fi). ``rtsp://HOST:PORT/PATH?listen``
    (FFmpeg's spelling for its listening protocols) makes this side the server a camera or encoder
    pushes to; it waits ``wait`` seconds at a time for one."""
    if not url.startswith(("rtsp://", "rtsps://")):
        return url, {}, False
    address, _, query = url.partition("?")
    if "listen" in query.split("&"):
        return address, {"rtsp_transport": "tcp", "listen_timeout": str(max(1, round(wait)))}, True
    return url, {"rtsp_transport": "tcp"}, False


def is_stream(text: str) -> bool:
    """Whether a watch source is a live stream (any URL FFmpeg opens) rather than a folder."""
    return "://" in text and not text.startswith("file://")


class _Writer:
    """One segment being written: packets copied with their times moved to start at zero."""

    def __init__(self, folder: Path, inputs: list, first, wall_start: float) -> None:
        self.final = folder / segment_name(wall_start)
        self.part = self.final.with_name(self.final.name + PART)
        self.wall_start = wall_start
        self.origin = float(first.pts * first.time_base)  # the segment's 0 s, in the stream's seconds
        self.last = self.origin
        self.sink = av.open(str(self.part), "w", format="matroska")
        # Where the segment starts in the stream's own timestamps, for a part recovered after a kill.
        self.sink.metadata[_ORIGIN_TAG] = f"{self.origin:.6f}"
        self.outputs = {}
        for stream in inputs:
            self.outputs[stream.index] = self.sink.add_stream_from_template(stream)

    def seconds(self, packet) -> float:
        return float(packet.pts * packet.time_base) - self.origin

    def mux(self, packet) -> None:
        out = self.outputs.get(packet.stream.index)
        if out is None or packet.pts is None:
            return
        base = packet.time_base
        shift = round(self.origin / base)
        pts, dts = packet.pts - shift, (packet.dts if packet.dts is not None else packet.pts) - shift
        if pts < 0 or dts < 0:  # sound from just before the cut: it belongs to the previous segment
            return
        end = self.origin + float((pts + (packet.duration or 0)) * base)
        packet.pts, packet.dts, packet.stream = pts, dts, out
        self.sink.mux(packet)
        self.last = max(self.last, end)

    def close(self) -> Segment | None:
        """Finish the file and give it its final name; None (and no file) when it holds under a second."""
        try:
            self.sink.close()
        except av.FFmpegError:
            pass
        duration = self.last - self.origin
        if duration < _MIN_SECONDS:
            self.part.unlink(missing_ok=True)
            return None
        self.part.rename(self.final)
        return Segment(self.final, self.wall_start, duration, self.last)


class StreamRecorder:
    """Records ``url`` into ``folder`` until ``stop`` is set; run it in a thread of its own.

    ``on_segment`` gets each closed segment, ``on_outage`` each stretch that was not recorded
    (``last_end``: where an earlier run's recording stopped, so the time the watch was down counts).
    """

    def __init__(self, url: str, folder: Path, segment_seconds: float, *, timeout: float, reconnect_max: float,
                 opens: str | None = None,
                 on_segment: Callable[[Segment], None], on_outage: Callable[[Outage], None],
                 on_error: Callable[[str], None] = lambda message: None, last_end: float | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        # ``url`` is what the user wrote (secrets as ${NAME}), for messages; ``opens`` has them filled in.
        self.url, self.opens, self.folder, self.segment_seconds = url, opens or url, folder, segment_seconds
        self.timeout, self.reconnect_max = timeout, reconnect_max
        self.on_segment, self.on_outage, self.on_error = on_segment, on_outage, on_error
        self.last_end = last_end
        self.stream_end: float | None = None  # the last recorded timestamp, to skip what a reopened HLS replays
        self._why = "the watch was not running"  # what an outage before the first packet was
        self.clock = clock
        self.stop = threading.Event()
        folder.mkdir(parents=True, exist_ok=True)

    def recover(self) -> list[Segment]:
        """Parts left by a run that was killed: closed up to their last packet (a part that does not
        read is deleted). The caller decides which closed segments it has not judged yet."""
        recovered = []
        for part in sorted(self.folder.glob("*" + SUFFIX + PART)):
            wall = wall_start_of(part)
            duration, origin = readable_seconds(part), stream_origin(part)
            if wall is None or duration < _MIN_SECONDS:
                part.unlink(missing_ok=True)
                continue
            final = part.with_name(part.name.removesuffix(PART))
            part.rename(final)
            end = origin + duration if origin is not None else None
            recovered.append(Segment(final, wall, duration, end))
            self.last_end = max(self.last_end or 0.0, wall + duration)
            if end is not None:
                self.stream_end = max(self.stream_end or end, end)
        return recovered

    def segments(self) -> list[Path]:
        return sorted(p for p in self.folder.iterdir() if p.suffix.lower() in VIDEO_EXTENSIONS)

    def last_written(self) -> float | None:
        """When this stream's recordings were last written to (a killed run's part included), by the real
        clock: when an earlier run's recording stopped."""
        times = []
        for path in self.folder.iterdir():
            try:
                times.append(path.stat().st_mtime)
            except OSError:  # gone between the listing and now (retention)
                continue
        return max(times, default=None)

    def run(self) -> None:
        wait, failing = 1.0, False
        address, options, listening = open_options(self.opens, self.timeout)
        while not self.stop.is_set():
            try:
                source = av.open(address, options=options, timeout=(self.timeout + 5, self.timeout))
            except (av.FFmpegError, OSError) as exc:
                if not failing:  # said once per outage, not on every try
                    failing = True
                    self.on_error(f"waiting for a sender at {self.url}" if listening else
                                  f"could not open {self.url}: {exc}; trying again (at most every "
                                  f"{self.reconnect_max:g} s)")
                if not listening:  # a listener is back at once: a sender may be trying right now
                    self.stop.wait(wait)
                    wait = min(wait * 2, self.reconnect_max)
                continue
            fixed_length = source.duration is not None
            try:
                reason, recorded = self._record(source)
            finally:
                try:
                    source.close()
                except av.FFmpegError:
                    pass
            if self.stop.is_set():
                break
            if recorded and reason == _ENDED and fixed_length:
                # A file served over the network (or a finished HLS playlist) has a length; opened again
                # it would start over, and everything in it would be judged (and alerted) twice.
                self.on_error(f"{self.url} ended, and it has a fixed length: a recording, not a live stream; "
                              "it is not opened again")
                break
            if recorded:
                failing, wait = False, 1.0
                self._why = reason
                self.on_error(f"{self.url}: {reason}; reopening it")
            else:  # it opened but sent nothing usable (a live playlist with no segment yet): wait as for a failure
                if not failing:
                    failing = True
                    self.on_error(f"{self.url}: {reason}; trying again (at most every {self.reconnect_max:g} s)")
                self.stop.wait(wait)
                wait = min(wait * 2, self.reconnect_max)

    def _record(self, source) -> tuple[str, bool]:
        """Copy packets into segments until the stream ends or fails, or ``stop``: why it ended, and
        whether anything was recorded."""
        pictures = source.streams.video
        if not pictures:
            return "it has no picture (yet)", False
        streams = [pictures[0], *source.streams.audio[:1]]
        replays = "hls" in (source.format.name or "").split(",")
        writer: _Writer | None = None
        session: tuple[float, float] | None = None  # (stream seconds, wall clock) of the first packet
        reason = _ENDED
        try:
            for packet in source.demux(streams):
                if self.stop.is_set():
                    reason = "stopped"
                    break
                if packet.pts is None or packet.size == 0:
                    continue
                seconds = float(packet.pts * packet.time_base)
                if replays and self.stream_end is not None and \
                        self.stream_end - _REPLAY_WINDOW < seconds <= self.stream_end + 1e-3:
                    continue  # recorded before this reopening
                if session is None:
                    session = (seconds, self.clock())
                    self._reconnected(session[1])
                cut = packet.stream is streams[0] and packet.is_keyframe and (
                    writer is None or writer.seconds(packet) >= self.segment_seconds)
                if cut:
                    self._close(writer)
                    writer = _Writer(self.folder, streams, packet, session[1] + seconds - session[0])
                if writer is not None:
                    writer.mux(packet)
        except (av.FFmpegError, OSError) as exc:
            reason = f"the stream dropped: {exc}"
        finally:
            self._close(writer)
        return reason, session is not None

    def _reconnected(self, now: float) -> None:
        if self.last_end is not None and now - self.last_end > 1.0:
            self.on_outage(Outage(self.last_end, now, self._why))

    def _close(self, writer: _Writer | None) -> None:
        if writer is None:
            return
        segment = writer.close()
        if segment is not None:
            self.last_end = segment.wall_start + segment.duration
            self.stream_end = segment.stream_end
            self.on_segment(segment)


def stream_origin(path: Path) -> float | None:
    """Where a recorded segment starts in its stream's timestamps (None for a file without the tag)."""
    try:
        with av.open(str(path)) as container:
            tags = {key.upper(): value for key, value in container.metadata.items()}
        return float(tags[_ORIGIN_TAG])
    except (av.FFmpegError, OSError, KeyError, ValueError):
        return None


def readable_seconds(path: Path) -> float:
    """How many seconds of picture a (possibly cut-off) file holds: read to its last packet."""
    first = last = None
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            for packet in container.demux(stream):
                if packet.pts is None:
                    continue
                t = float(packet.pts * packet.time_base)
                first = t if first is None else min(first, t)
                last = t if last is None else max(last, t)
    except (av.FFmpegError, OSError, IndexError):
        pass
    return (last - first) if first is not None and last is not None else 0.0

