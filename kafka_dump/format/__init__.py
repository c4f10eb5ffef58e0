"""Pure functions over bytes: the wire formats, codecs, varints and checksums.

The hot loops have two twins each, with one interface per pair (``twins.py``): a compiled module
when it was built and loads, else its pure-Python reference. ``KDUMP_PURE=1`` forces the pure ones.
The choice is made once, here:

* the decoder (``decode_v2_records``, ``decode_legacy_inner``, ``decode_legacy_wrapper``,
  ``decode_legacy_run``):
  ``_speedups.c``, else ``_pure.py``; ``ACTIVE_TWIN`` names the choice;
* the validating record walk (``walk_v2_records``, for ``verify-crc --deep``): ``_walk.c``, else
  ``_walk_pure.py``; ``WALK_TWIN`` names it;
* the statistics walk (``gather_v2_records``, ``gather_legacy_inner``, for ``stats``; re-exported
  by ``gather.py`` with its histogram layout): ``_gather.c``, else ``_gather_pure.py``, and only
  when both have the same histogram layout; ``GATHER_TWIN`` names it;
* the encoder's record loops (``encode_v2_records``, ``encode_v2_entry``, ``encode_legacy_messages``
  and their sizes), which ``encode.py`` builds ``encode_entry`` on: ``_encoder.c``, else
  ``_pure_encoder.py``; ``ENCODER_TWIN`` names it.

(The JSON writer's twins belong to the render layer and are chosen in ``render/jsonl.py``.)
Another pair follows the same shape, in a block of its own below: a ``Protocol`` in ``twins.py``,
the pure module, the compiled module (its own ``.c`` file, ``.pyi`` stub and line in ``setup.py``),
and a variable of the Protocol's type bound to one of them, so that mypy checks both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_dump.format import _gather_layout, _walk_pure
from kafka_dump.format.twins import DecoderTwin, EncoderTwin, GatherTwin, WalkTwin, pure_requested

# The decoder: _speedups.c, else _pure.py (imported only then: `kdump --version` names the twin and
# should not pay for the pure one's modules).
_decoder: DecoderTwin | None = None
ACTIVE_TWIN = "pure-python"
if not pure_requested():
    try:
        from kafka_dump.format import _speedups
    except ImportError:
        pass
    else:
        _decoder = _speedups
        ACTIVE_TWIN = "compiled"
if _decoder is None:
    from kafka_dump.format import _pure

    _decoder = _pure
decoder: DecoderTwin = _decoder

decode_v2_records = decoder.decode_v2_records
decode_legacy_inner = decoder.decode_legacy_inner
decode_legacy_run = decoder.decode_legacy_run
decode_legacy_wrapper = decoder.decode_legacy_wrapper

# The validating record walk: _walk.c, else _walk_pure.py.
walker: WalkTwin = _walk_pure
WALK_TWIN = "pure-python"
if not pure_requested():
    try:
        from kafka_dump.format import _walk
    except ImportError:
        pass
    else:
        walker = _walk
        WALK_TWIN = "compiled"
walk_v2_records = walker.walk_v2_records

# The statistics walk: _gather.c, else _gather_pure.py (and the pure one if their buckets differ);
# the pure one imported only then, as the decoder's.
_gatherer: GatherTwin | None = None
GATHER_TWIN = "pure-python"
if not pure_requested():
    try:
        from kafka_dump.format import _gather
    except ImportError:
        pass
    else:
        if (_gather.NBUCKETS, _gather.SLOTS) == (_gather_layout.NBUCKETS, _gather_layout.SLOTS):
            _gatherer = _gather
            GATHER_TWIN = "compiled"
if _gatherer is None:
    from kafka_dump.format import _gather_pure

    _gatherer = _gather_pure
gatherer: GatherTwin = _gatherer
gather_v2_records = gatherer.gather_v2_records
gather_legacy_inner = gatherer.gather_legacy_inner

# The encoder's record loops: _encoder.c, else _pure_encoder.py.
_encoder_twin: EncoderTwin | None = None
ENCODER_TWIN = "pure-python"
if not pure_requested():
    try:
        from kafka_dump.format import _encoder
    except ImportError:
        pass
    else:
        _encoder_twin = _encoder
        ENCODER_TWIN = "compiled"
if _encoder_twin is None:
    from kafka_dump.format import _pure_encoder

    _encoder_twin = _pure_encoder
encoder: EncoderTwin = _encoder_twin

encode_v2_records = encoder.encode_v2_records
encode_v2_entry = encoder.encode_v2_entry
v2_records_size = encoder.v2_records_size
encode_legacy_messages = encoder.encode_legacy_messages
legacy_messages_size = encoder.legacy_messages_size

# After the twins, which the encoders look up through this module; imported on first use, so that a
# command that writes nothing (and `kdump --version`) does not load the encoders' modules.
if TYPE_CHECKING:
    from kafka_dump.format.encode import encode_entry, encode_refusals, entry_size, new_batch

_ENCODE_NAMES = frozenset({"encode_entry", "encode_refusals", "entry_size", "new_batch"})


if not TYPE_CHECKING:  # hidden from mypy, which would otherwise let any name pass as this module's

    def __getattr__(name: str) -> Any:
        if name in _ENCODE_NAMES:
            from kafka_dump.format import encode

            return getattr(encode, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ACTIVE_TWIN",
    "ENCODER_TWIN",
    "GATHER_TWIN",
    "WALK_TWIN",
    "decode_legacy_inner",
    "decode_legacy_run",
    "decode_legacy_wrapper",
    "decode_v2_records",
    "decoder",
    "encode_entry",
    "encode_legacy_messages",
    "encode_refusals",
    "encode_v2_entry",
    "encode_v2_records",
    "encoder",
    "entry_size",
    "gather_legacy_inner",
    "gather_v2_records",
    "gatherer",
    "legacy_messages_size",
    "new_batch",
    "v2_records_size",
    "walk_v2_records",
    "walker",
]
