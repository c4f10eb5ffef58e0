"""Pure functions over bytes: the wire formats, codecs, varints and checksums.

The decoder's hot loops (``decode_v2_records``, ``decode_legacy_inner``, ``decode_legacy_run``) have
two twins with one interface (``twins.DecoderTwin``): the compiled ``_speedups`` when it was built
and loads, else the pure-Python reference ``_pure``. ``KDUMP_PURE=1`` forces the pure one. The
choice is made once, here, and ``ACTIVE_TWIN`` names it. (The JSON writer's twins belong to the
render layer and are chosen in ``render/jsonl.py``.)

Another pair of twins follows the same shape, in a block of its own below: a ``Protocol`` in
``twins.py``, the pure module, the compiled module (its own ``.c`` file, ``.pyi`` stub and line in
``setup.py``), and a variable of the Protocol's type bound to one of them, so that mypy checks both.
"""

from __future__ import annotations

from kafka_dump.format import _pure
from kafka_dump.format.twins import DecoderTwin, pure_requested

# The decoder: _speedups.c, else _pure.py.
decoder: DecoderTwin = _pure
ACTIVE_TWIN = "pure-python"
if not pure_requested():
    try:
        from kafka_dump.format import _speedups
    except ImportError:
        pass
    else:
        decoder = _speedups
        ACTIVE_TWIN = "compiled"

decode_v2_records = decoder.decode_v2_records
decode_legacy_inner = decoder.decode_legacy_inner
decode_legacy_run = decoder.decode_legacy_run

__all__ = ["ACTIVE_TWIN", "decode_legacy_inner", "decode_legacy_run", "decode_v2_records", "decoder"]
