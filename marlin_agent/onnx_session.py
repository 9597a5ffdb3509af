"""ONNX Runtime sessions for the small text models, opened fast and run at the length of the text.

Two costs dominate a short command that touches a model: building the session (ONNX Runtime
optimises the graph on every load: about a second for the entailment model) and running it at
a fixed length (an export fixed at 160 tokens spends 160 tokens on a 20-token pair). So:

- an export whose token inputs have a fixed length gets that dimension freed (the graph computes
  its shapes at run time; only the declared inputs and outputs pin it), and
- the optimised graph is written once into the cache and later loaded as it is, with the
  optimiser off. The cache file is keyed by the source file (path, size, mtime), the runtime's
  version and the machine, and written atomically, so a changed model or runtime never loads a
  stale graph.

The length change edits three nested protobuf messages by hand (ModelProto → GraphProto →
ValueInfoProto shapes), so no ONNX package is needed.
"""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path

from marlin_agent.errors import MissingDependency, ModelUnavailable

# Field numbers in onnx.proto (stable since ONNX 1.0).
_MODEL_GRAPH = 7
_MODEL_METADATA = 14  # metadata_props: StringStringEntryProto (key = 1, value = 2)
_GRAPH_INPUT, _GRAPH_OUTPUT, _GRAPH_VALUE_INFO = 11, 12, 13
_VALUE_TYPE = 2
_TYPE_TENSOR = 1
_TENSOR_SHAPE = 2
_SHAPE_DIM = 1
_DIM_VALUE, _DIM_PARAM = 1, 2
_FREED_NAME = b"marlin_sequence"
# Where the freed length is remembered (the runtime shows it as custom metadata), so that text is
# still cut where the export was meant to stop, also when the graph comes from the cache.
LENGTH_KEY = "marlin_fixed_sequence_length"
_OPTIMISED_FORMAT = 1  # bump when what is written to the cache changes


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(data: memoryview):
    """(field number, wire type, raw bytes of the whole field, payload) for each field of a message."""
    at = 0
    while at < len(data):
        start = at
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            payload = value
        elif wire == 1:
            payload, at = data[at: at + 8], at + 8
        elif wire == 2:
            size, at = _varint(data, at)
            payload, at = data[at: at + size], at + size
        elif wire == 5:
            payload, at = data[at: at + 4], at + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, data[start: at], payload


def _message_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | 2) + _encode_varint(len(payload)) + payload


def _rewrite(data: memoryview, edits: dict) -> bytes:
    """The message with each length-delimited field named in ``edits`` replaced by what its function
    returns for the payload (``None`` drops the field); everything else is copied byte for byte."""
    parts: list[bytes | memoryview] = []
    for number, wire, raw, payload in _fields(data):
        if wire == 2 and number in edits:
            new = edits[number](payload)
            if new is not None:
                parts.append(_message_field(number, new))
        else:
            parts.append(raw)
    return b"".join(parts)


def _dims(shape: memoryview) -> list[int | None]:
    """A TensorShapeProto's dimensions: the fixed value, or None for a named/unknown one."""
    found = []
    for number, _, _, payload in _fields(shape):
        if number == _SHAPE_DIM:
            value = None
            for n, wire, _, v in _fields(payload):
                if n == _DIM_VALUE and wire == 0:
                    value = v
            found.append(value)
    return found


def _shape_of(value_info: memoryview) -> memoryview | None:
    for number, _, _, type_proto in _fields(value_info):
        if number == _VALUE_TYPE:
            for n, _, _, tensor in _fields(type_proto):
                if n == _TYPE_TENSOR:
                    for m, _, _, shape in _fields(tensor):
                        if m == _TENSOR_SHAPE:
                            return shape
    return None


def _free_dim(length: int):
    freed = _message_field(_DIM_PARAM, _FREED_NAME)

    def shape(payload: memoryview) -> bytes:
        def dim(d: memoryview) -> bytes:
            values = [v for n, wire, _, v in _fields(d) if n == _DIM_VALUE and wire == 0]
            return freed if values == [length] else bytes(d)

        first = True
        parts = []
        for number, wire, raw, d in _fields(payload):
            if number == _SHAPE_DIM and wire == 2:
                # The first dimension is the batch: never the sequence, even when the two are equal.
                parts.append(bytes(raw) if first else _message_field(_SHAPE_DIM, dim(d)))
                first = False
            else:
                parts.append(bytes(raw))
        return b"".join(parts)

    def value_info(payload: memoryview) -> bytes:
        tensor = lambda p: _rewrite(p, {_TENSOR_SHAPE: shape})  # noqa: E731
        type_proto = lambda p: _rewrite(p, {_TYPE_TENSOR: tensor})  # noqa: E731
        return _rewrite(payload, {_VALUE_TYPE: type_proto})

    return value_info


def fixed_sequence_length(model: bytes | memoryview) -> int | None:
    """The length a text model's token inputs are pinned to (``[batch, N]`` inputs), or None when free."""
    data = memoryview(model)
    for number, _, _, graph in _fields(data):
        if number != _MODEL_GRAPH:
            continue
        lengths = set()
        for n, _, _, value_info in _fields(graph):
            if n == _GRAPH_INPUT:
                shape = _shape_of(value_info)
                dims = _dims(shape) if shape is not None else []
                if len(dims) == 2:
                    lengths.add(dims[1])
        lengths.discard(None)
        return lengths.pop() if len(lengths) == 1 else None
    return None


def free_sequence_length(model: bytes | memoryview) -> bytes:
    """The model with its token inputs (and outputs of that length) free along the sequence axis.

    Declared intermediate shapes (``value_info``) are dropped: they are hints the runtime infers
    again, and a stale one would pin the length. A model that is already free comes back as it is."""
    data = memoryview(model)
    length = fixed_sequence_length(data)
    if length is None:
        return bytes(data)
    free = _free_dim(length)
    graph = lambda p: _rewrite(p, {_GRAPH_INPUT: free, _GRAPH_OUTPUT: free, _GRAPH_VALUE_INFO: lambda _: None})  # noqa: E731
    remembered = _message_field(1, LENGTH_KEY.encode()) + _message_field(2, str(length).encode())
    return _rewrite(data, {_MODEL_GRAPH: graph}) + _message_field(_MODEL_METADATA, remembered)


def original_length(session) -> int | None:
    """The sequence length a session's export was fixed at before it was freed, if it was."""
    value = session.get_modelmeta().custom_metadata_map.get(LENGTH_KEY)
    return int(value) if value and value.isdigit() else None


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # not a file we wrote: left as it is


def _options(threads: int):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    # ONNX Runtime's own warnings (a saved optimised graph "may be hardware specific") are for
    # whoever exports models; the cache key already pins the machine and the runtime.
    options.log_severity_level = 3
    return options


def _in_memory(model: bytes, threads: int, what: str, model_file: Path):
    """A session over ``model`` optimised in memory only (nothing written)."""
    import onnxruntime

    try:
        return onnxruntime.InferenceSession(model, _options(threads), providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime raises its own untyped errors
        raise ModelUnavailable(f"ONNX Runtime cannot load the {what} at {model_file}: {exc}") from None


def _cache_key(model_file: Path, onnxruntime_version: str) -> str:
    stat = model_file.stat()
    parts = [str(model_file.resolve()), str(stat.st_size), str(stat.st_mtime_ns), onnxruntime_version,
             platform.machine(), str(_OPTIMISED_FORMAT)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def open_session(model_file: Path, cache: Path | None, *, threads: int = 2, what: str = "model"):
    """An ONNX Runtime CPU session for ``model_file`` with a free sequence length, from the cached
    optimised graph when there is one (``cache``: a folder to keep it in; None keeps nothing)."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise MissingDependency(f"The {what}", "library") from exc
    options = _options(threads)
    optimised = cache / f"{model_file.stem}-{_cache_key(model_file, onnxruntime.__version__)}.onnx" if cache else None
    if optimised is not None and optimised.is_file():
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return onnxruntime.InferenceSession(str(optimised), options, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - a damaged cache file is rebuilt from the model below
            optimised.unlink(missing_ok=True)
            options = _options(threads)
    try:
        model = free_sequence_length(model_file.read_bytes())
    except (OSError, ValueError, IndexError) as exc:
        raise ModelUnavailable(f"cannot read the {what} at {model_file}: {exc}") from None
    partial = None
    if optimised is not None:
        try:
            optimised.parent.mkdir(parents=True, exist_ok=True)
            partial = optimised.with_name(f"{optimised.name}.{os.getpid()}.tmp")
            # Extended, not all: the saved graph then holds no layout tuned to one CPU's instructions.
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            options.optimized_model_filepath = str(partial)
        except OSError:
            partial = None  # a read-only cache: optimise in memory, every time
    if partial is None:
        return _in_memory(model, threads, what, model_file)
    try:
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - ONNX Runtime raises its own untyped errors
        # Saving the optimised graph may be what failed (a full disk, a file in its way): nothing half-written
        # is kept, and the model is optimised in memory this time (a model that cannot load says so there).
        _remove(partial)
        return _in_memory(model, threads, what, model_file)
    if partial is not None and partial.is_file():
        try:
            os.replace(partial, optimised)
        except OSError:
            partial.unlink(missing_ok=True)
    return session
