"""safetensors files: through the `safetensors` package when it is installed, else this module's own writer
and reader of the documented format (https://github.com/huggingface/safetensors#format):
8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}, "__metadata__": {...}}
padded with spaces to a multiple of 8, then the raw little-endian tensor bytes, each tensor's [begin, end) relative
to the end of the header. Written with sorted keys and no timestamps, so equal tensors give equal bytes."""

import json
import struct
import sys

import torch

try:  # The package where present; the fallback below writes and reads the same format.
    import safetensors.torch as _st
except ImportError:  # pragma: no cover - depends on the machine
    _st = None

DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool,
}
NAMES = {dtype: name for name, dtype in DTYPES.items()}
MAX_HEADER_BYTES = 100 * 1024 * 1024


class SafetensorsError(Exception):
    """A file that is not a well-formed safetensors file; the message names the file and the fault."""


def backend_name():
    return "safetensors" if _st is not None else "builtin"


def _raw_bytes(tensor):
    t = tensor.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: same bits as int16
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def serialize(tensors, metadata=None):
    """{name: tensor} -> bytes of a safetensors file (the built-in writer)."""
    if sys.byteorder != "little":
        raise SafetensorsError("the built-in safetensors writer needs a little-endian machine")
    header = {}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        tensor = tensors[name]
        if tensor.dtype not in NAMES:
            raise SafetensorsError(f"{name}: dtype {tensor.dtype} cannot be stored")
        data = _raw_bytes(tensor)
        header[name] = {"dtype": NAMES[tensor.dtype], "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in sorted(metadata.items())}
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def deserialize(blob, where="<bytes>"):
    """Bytes of a safetensors file -> ({name: tensor}, metadata); SafetensorsError on anything malformed."""
    if len(blob) < 8:
        raise SafetensorsError(f"{where}: {len(blob)} bytes, too short for a safetensors file (8-byte header length)")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER_BYTES or 8 + n > len(blob):
        raise SafetensorsError(f"{where}: header length {n} does not fit the file's {len(blob)} bytes (truncated or not safetensors)")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorsError(f"{where}: header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{where}: header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    data = memoryview(blob)[8 + n:]
    spans = []
    tensors = {}
    for name, info in header.items():
        try:
            dtype = DTYPES[info["dtype"]]
            shape = [int(d) for d in info["shape"]]
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise SafetensorsError(f"{where}: tensor {name!r} has a malformed entry {info!r}") from None
        count = 1
        for d in shape:
            count *= d
        size = count * torch.empty((), dtype=dtype).element_size()
        if not 0 <= begin <= end <= len(data) or end - begin != size:
            raise SafetensorsError(f"{where}: tensor {name!r} data_offsets [{begin}, {end}] do not hold {info['dtype']}"
                                   f"{shape} within {len(data)} data bytes")
        spans.append((begin, end, name))
        raw = bytearray(data[begin:end])
        flat = torch.frombuffer(raw, dtype=dtype) if size else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(shape)
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise SafetensorsError(f"{where}: tensor {name!r} starts at {begin}, expected {position} (gap or overlap)")
        position = end
    if position != len(data):
        raise SafetensorsError(f"{where}: tensors cover {position} of {len(data)} data bytes")
    return tensors, metadata


def save_bytes(tensors, metadata=None):
    if _st is not None:
        return _st.save({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, metadata=metadata)
    return serialize(tensors, metadata)


def load_file(path):
    """{name: tensor} from a safetensors file; SafetensorsError (naming the file) when it cannot be read."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as exc:
        raise SafetensorsError(f"{path}: cannot read ({exc.strerror})") from None
    if _st is not None:
        try:
            return _st.load(blob)
        except Exception as exc:  # the package raises its own error types
            raise SafetensorsError(f"{path}: not a valid safetensors file ({exc})") from None
    return deserialize(blob, path)[0]
