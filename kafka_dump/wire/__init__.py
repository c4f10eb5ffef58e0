"""Pure functions over bytes: the wire formats, codecs, varints and checksums.

The hot loops have two twins each, with one interface per pair (``twins.py``): a compiled module
when it was built and loads, else its pure-Python reference. ``KDUMP_PURE=1`` forces the pure ones.
The choice is made once, here: the decoder's when this package is imported, each other pair's when
one of its names is first read (so a command loads the pairs it uses, and ``kdump --version`` only
the decoder's, whose twin it names):

* the decoder (``decode_v2_records``, ``decode_legacy_inner``, ``decode_legacy_wrapper``,
  ``decode_legacy_run``):
  ``_speedups.c``, else ``_pure.py``; ``ACTIVE_TWIN`` names the choice;
* the validating walks (``walk_v2_records``, ``walk_entries``, for ``verify-crc``): ``_walk.c``, else
  ``_walk_pure.py``; ``WALK_TWIN`` names it;
* the statistics walk (``gather_v2_records``, ``gather_legacy_inner``, for ``stats``; re-exported
  by ``gather.py`` with its histogram layout): ``_gather.c``, else ``_gather_pure.py``, and only
  when both have the same histogram layout; ``GATHER_TWIN`` names it;
* the encoder's record loops (``encode_v2_records``, ``encode_v2_entry``, ``encode_legacy_messages``
  and their sizes), which ``encode.py`` builds ``encode_entry`` on: ``_encoder.c``, else
  ``_pure_encoder.py``; ``ENCODER_TWIN`` names it.

(The JSON writer's twins belong to the render layer and are chosen in ``render/jsonl.py``.)
Another pair follows the same shape: a ``Protocol`` in ``twins.py``, the pure module, the compiled
module (its own ``.c`` file, ``.pyi`` stub and line in ``setup.py``), and a function below that
returns one of them as the Protocol's type (so that mypy checks both), with its names in ``_PAIRS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_dump.wire.twins import DecoderTwin, EncoderTwin, GatherTwin, WalkTwin, pure_requested

# The decoder: _speedups.c, else _pure.py (imported only then: `kdump --version` names the twin and
# should not pay for the pure one's modules).
_decoder: DecoderTwin | None = None
ACTIVE_TWIN = "pure-python"
if not pure_requested():
    try:
        from kafka_dump.native import _speedups
    except ImportError:
        pass
    else:
        _decoder = _speedups
        ACTIVE_TWIN = "compiled"
if _decoder is None:
    from kafka_dump.wire import _pure

    _decoder = _pure
decoder: DecoderTwin = _decoder

decode_v2_records = decoder.decode_v2_records
decode_legacy_inner = decoder.decode_legacy_inner
decode_legacy_run = decoder.decode_legacy_run
decode_legacy_wrapper = decoder.decode_legacy_wrapper

# The other twins (the validating walks, the statistics walk, the encoder's record loops) are chosen
# on first use of one of their names (``__getattr__`` below, which then binds every name of the pair
# here): a command loads only the pairs its work takes, and `kdump --version` none of them.


def _walker_twin() -> tuple[WalkTwin, str]:
    """The validating walks: _walk.c, else _walk_pure.py (imported only then, like the decoder's)."""
    if not pure_requested():
        try:
            from kafka_dump.native import _walk
        except ImportError:
            pass
        else:
            return _walk, "compiled"
    from kafka_dump.wire import _walk_pure

    return _walk_pure, "pure-python"


def _gatherer_twin() -> tuple[GatherTwin, str]:
    """The statistics walk: _gather.c, else _gather_pure.py (and the pure one if their buckets differ)."""
    from kafka_dump.wire import _gather_layout

    if not pure_requested():
        try:
            from kafka_dump.native import _gather
        except ImportError:
            pass
        else:
            if (_gather.NBUCKETS, _gather.SLOTS) == (_gather_layout.NBUCKETS, _gather_layout.SLOTS):
                return _gather, "compiled"
    from kafka_dump.wire import _gather_pure

    return _gather_pure, "pure-python"


def _encoder_twin() -> tuple[EncoderTwin, str]:
    """The encoder's record loops: _encoder.c, else _pure_encoder.py."""
    if not pure_requested():
        try:
            from kafka_dump.native import _encoder
        except ImportError:
            pass
        else:
            return _encoder, "compiled"
    from kafka_dump.wire import _pure_encoder

    return _pure_encoder, "pure-python"


def _walker_names() -> dict[str, Any]:
    twin, name = _walker_twin()
    return {"walker": twin, "WALK_TWIN": name, "walk_v2_records": twin.walk_v2_records,
            "walk_entries": twin.walk_entries}  # fmt: skip


def _gatherer_names() -> dict[str, Any]:
    twin, name = _gatherer_twin()
    return {"gatherer": twin, "GATHER_TWIN": name, "gather_v2_records": twin.gather_v2_records,
            "gather_legacy_inner": twin.gather_legacy_inner}  # fmt: skip


def _encoder_names() -> dict[str, Any]:
    twin, name = _encoder_twin()
    return {"encoder": twin, "ENCODER_TWIN": name, "encode_v2_records": twin.encode_v2_records,
            "encode_v2_entry": twin.encode_v2_entry, "v2_records_size": twin.v2_records_size,
            "encode_legacy_messages": twin.encode_legacy_messages,
            "legacy_messages_size": twin.legacy_messages_size, "v1_inner_to_v2": twin.v1_inner_to_v2}  # fmt: skip


# Each name a pair binds -> the function that chooses the pair.
_PAIRS: dict[str, Callable[[], dict[str, Any]]] = {
    **dict.fromkeys(("walker", "WALK_TWIN", "walk_v2_records", "walk_entries"), _walker_names),
    **dict.fromkeys(("gatherer", "GATHER_TWIN", "gather_v2_records", "gather_legacy_inner"), _gatherer_names),
    **dict.fromkeys(
        ("encoder", "ENCODER_TWIN", "encode_v2_records", "encode_v2_entry", "v2_records_size",
         "encode_legacy_messages", "legacy_messages_size", "v1_inner_to_v2"),
        _encoder_names,
    ),
}  # fmt: skip

if TYPE_CHECKING:  # what __getattr__ binds, as mypy should see it
    walker, WALK_TWIN = _walker_twin()
    walk_v2_records = walker.walk_v2_records
    walk_entries = walker.walk_entries
    gatherer, GATHER_TWIN = _gatherer_twin()
    gather_v2_records = gatherer.gather_v2_records
    gather_legacy_inner = gatherer.gather_legacy_inner
    encoder, ENCODER_TWIN = _encoder_twin()
    encode_v2_records = encoder.encode_v2_records
    encode_v2_entry = encoder.encode_v2_entry
    v2_records_size = encoder.v2_records_size
    encode_legacy_messages = encoder.encode_legacy_messages
    legacy_messages_size = encoder.legacy_messages_size
    v1_inner_to_v2 = encoder.v1_inner_to_v2

# After the twins, which the encoders look up through this module; imported on first use, so that a
# command that writes nothing (and `kdump --version`) does not load the encoders' modules.
if TYPE_CHECKING:
    from kafka_dump.wire.encode import encode_entry, encode_refusals, entry_size, new_batch

_ENCODE_NAMES = frozenset({"encode_entry", "encode_refusals", "entry_size", "new_batch"})


if not TYPE_CHECKING:  # hidden from mypy, which would otherwise let any name pass as this module's

    def __getattr__(name: str) -> Any:
        pair = _PAIRS.get(name)
        if pair is not None:
            names = pair()
            globals().update(names)  # bound once: later reads are plain module attributes
            return names[name]
        if name in _ENCODE_NAMES:
            from kafka_dump.wire import encode

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
    "v1_inner_to_v2",
    "v2_records_size",
    "walk_entries",
    "walk_v2_records",
    "walker",
]
