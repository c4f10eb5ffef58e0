"""The wire layout is declared once: its offsets agree with kafka-python's, and _layout.h is current."""

from __future__ import annotations

import re

from kafka.record.default_records import DefaultRecordBase
from kafka.record.legacy_records import LegacyRecordBase

from kafka_dump.wire import layout as L
from tools import gen_layout_h


def test_generated_c_header_is_current() -> None:
    """Edit layout.py, then run ``python -m tools.gen_layout_h`` and commit _layout.h."""
    assert gen_layout_h.HEADER_PATH.read_text() == gen_layout_h.render()
    assert gen_layout_h.main(["--check"]) == 0


def test_v2_header_agrees_with_kafka_python() -> None:
    assert L.V2_HEADER.format == DefaultRecordBase.HEADER_STRUCT.format
    assert L.V2_CRC_OFFSET == DefaultRecordBase.CRC_OFFSET
    assert L.V2_ATTRIBUTES_OFFSET == DefaultRecordBase.ATTRIBUTES_OFFSET
    assert L.LOG_OVERHEAD == DefaultRecordBase.AFTER_LEN_OFFSET
    assert L.COMPRESSION_MASK == DefaultRecordBase.CODEC_MASK
    assert L.TIMESTAMP_TYPE_BIT == DefaultRecordBase.TIMESTAMP_TYPE_MASK
    assert L.TRANSACTIONAL_BIT == DefaultRecordBase.TRANSACTIONAL_MASK
    assert L.CONTROL_BIT == DefaultRecordBase.CONTROL_MASK
    assert L.NO_SEQUENCE == DefaultRecordBase.NO_SEQUENCE
    assert L.INT32_MAX == DefaultRecordBase.MAX_INT


def test_legacy_header_agrees_with_kafka_python() -> None:
    assert L.LEGACY_HEADER.format == LegacyRecordBase.HEADER_STRUCT_V0.format
    assert L.LEGACY_V1_LAYOUT.struct.format == LegacyRecordBase.HEADER_STRUCT_V1.format
    assert L.LOG_OVERHEAD == LegacyRecordBase.LOG_OVERHEAD
    assert L.LEGACY_CRC_OFFSET == LegacyRecordBase.CRC_OFFSET
    assert L.MAGIC_OFFSET == LegacyRecordBase.MAGIC_OFFSET
    assert L.LEGACY_HEADER_SIZE == LegacyRecordBase.KEY_OFFSET_V0
    assert L.LEGACY_V1_LAYOUT.size == LegacyRecordBase.KEY_OFFSET_V1
    assert (L.LEGACY_V0_MIN_SIZE, L.LEGACY_V1_MIN_SIZE) == (
        LegacyRecordBase.RECORD_OVERHEAD_V0,
        LegacyRecordBase.RECORD_OVERHEAD_V1,
    )


def test_offsets_follow_from_the_fields() -> None:
    for layout in L.LAYOUTS:
        at = 0
        for field in layout.fields:
            assert layout.offsets[field.name] == at, (layout.prefix, field.name)
            at += layout.lengths[field.name]
        assert at == layout.size == layout.struct.size
    assert L.LEGACY_V1_LAYOUT.fields[: len(L.LEGACY_LAYOUT.fields)] == L.LEGACY_LAYOUT.fields


def test_c_header_names_every_field_once() -> None:
    """Each field gives one _OFFSET and one _LENGTH define; no name is defined twice."""
    names = re.findall(r"^#define (\w+) ", gen_layout_h.render(), re.MULTILINE)
    assert len(names) == len(set(names))
    assert "V2_LAST_OFFSET_DELTA_OFFSET" in names
    assert "LEGACY_V1_TIMESTAMP_OFFSET" in names
    fields = sum(len(layout.own_fields) for layout in L.LAYOUTS)
    assert len([n for n in names if n.endswith("_OFFSET") and n != "MAGIC_OFFSET"]) == fields
