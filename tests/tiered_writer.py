"""Objects laid out as Aiven's tiered-storage plugin writes them, for the tests: written step by step
from the plugin's source (Aiven-Open/tiered-storage-for-apache-kafka 8fb15816), independently of
kdump's reader (``kafka_dump/log/aiven.py``).

``KafkaRemoteStorageManager`` cuts the segment into ``chunk.size`` chunks; each is compressed with
zstd (content size in the frame) when compression is on, then encrypted with AES-256-GCM (a fresh
12-byte IV ahead, the 16-byte tag after, the segment's AAD) when encryption is on; the chunks are
laid end to end. The chunk index is ``fixed`` unless compression is on (``variable``: the sizes in
``ChunkSizesBinaryCodec``'s bytes, zstd, base64). The indexes go into ``.indexes``, each on its own,
never compressed. The data key is wrapped with RSA-OAEP, SHA3-512 for the hash and MGF1, no label.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import zstandard

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Uuid(0, 1).toString(): base64url, no padding
SEGMENT_ID = "7pRrW-X_Q4Ox5b2Ep6Clgg"  # an id with both of base64url's extra characters


@dataclass
class KeyPair:
    key_id: str
    private_pem: Path
    n: int
    e: int


def make_key_pair(directory: Path, key_id: str = "static-key-id") -> KeyPair:
    """An RSA-2048 key pair, the private key as the plugin's tests write it (PKCS#8, label 'SOME KEY')."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    der = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    body = base64.encodebytes(der).decode()
    pem = directory / f"{key_id}.pem"
    pem.write_text(f"-----BEGIN SOME KEY-----\n{body}-----END SOME KEY-----\n")
    pub = key.public_key().public_numbers()
    return KeyPair(key_id, pem, pub.n, pub.e)


def _mgf1(seed: bytes, length: int) -> bytes:
    out = b""
    for i in range(-(-length // 64)):
        out += hashlib.sha3_512(seed + struct.pack(">I", i)).digest()
    return out[:length]


def wrap(pair: KeyPair, key: bytes) -> str:
    """``keyId:base64(RSA-OAEP-SHA3-512(key))``, as RsaEncryptionProvider's BouncyCastle cipher makes it."""
    k = (pair.n.bit_length() + 7) // 8
    l_hash = hashlib.sha3_512(b"").digest()
    db = l_hash + b"\x00" * (k - len(key) - 2 * 64 - 2) + b"\x01" + key
    seed = os.urandom(64)
    masked_db = bytes(a ^ b for a, b in zip(db, _mgf1(seed, len(db)), strict=True))
    masked_seed = bytes(a ^ b for a, b in zip(seed, _mgf1(masked_db, 64), strict=True))
    em = b"\x00" + masked_seed + masked_db
    c = pow(int.from_bytes(em, "big"), pair.e, pair.n).to_bytes(k, "big")
    return f"{pair.key_id}:{base64.b64encode(c).decode()}"


def chunk_sizes_codec(values: list[int]) -> bytes:
    """ChunkSizesBinaryCodec: big-endian count; for 2+, the base (min but the last), the bytes a value,
    each but the last less the base, then the last value whole."""
    if not values:
        return struct.pack(">i", 0)
    if len(values) == 1:
        return struct.pack(">ii", 1, values[0])
    head = values[:-1]
    base = min(head)
    width = max(
        1 if d <= 0xFF else 2 if d <= 0xFFFF else 3 if d <= 0xFFFFFF else 4 for d in (v - base for v in head)
    )
    body = b"".join((v - base).to_bytes(width, "big") for v in head)
    return struct.pack(">iiB", len(values), base, width) + body + struct.pack(">i", values[-1])


def last_offset(segment: bytes) -> int:
    """The last offset of a segment's entries, by their framing: a v0/v1 entry's offset (a wrapper's
    is its last inner message's), a v2 batch's baseOffset plus lastOffsetDelta."""
    last, at = 0, 0
    while at + 17 <= len(segment):
        offset, size = struct.unpack_from(">qi", segment, at)
        if size <= 0 or at + 12 + size > len(segment):
            break
        magic = segment[at + 16]
        last = offset + struct.unpack_from(">i", segment, at + 23)[0] if magic >= 2 else offset
        at += 12 + size
    return last


def upload(
    segment: bytes,
    root: Path,
    *,
    topic: str = "orders",
    partition: int = 3,
    start_offset: int = 0,
    end_offset: int | None = None,
    chunk_size: int = 1000,
    compression: bool = False,
    pair: KeyPair | None = None,
    indexes: dict[str, bytes] | None = None,
    prefix: str = "tiered/",
) -> Path:
    """Write the three objects of one segment under ``root`` as FileSystemStorage does (the key is
    the path); the ``.log`` object's path. ``end_offset``: the metadata's, by default the segment's
    last offset (as the broker gives it)."""
    if end_offset is None:
        end_offset = last_offset(segment)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = aad = b""
    if pair is not None:
        key, aad = os.urandom(32), os.urandom(32)

    def encrypt(data: bytes) -> bytes:
        iv = os.urandom(12)
        return iv + AESGCM(key).encrypt(iv, data, aad)

    stored: list[bytes] = []
    for at in range(0, len(segment), chunk_size):
        chunk = segment[at : at + chunk_size]
        if compression:
            chunk = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(chunk)
        if pair is not None:
            chunk = encrypt(chunk)
        stored.append(chunk)
    sizes = [len(c) for c in stored]
    if compression:
        frame = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(chunk_sizes_codec(sizes))
        index: dict[str, object] = {"type": "variable", "originalChunkSize": chunk_size,
                                    "originalFileSize": len(segment),
                                    "transformedChunks": base64.b64encode(frame).decode()}  # fmt: skip
    else:
        index = {"type": "fixed", "originalChunkSize": chunk_size, "originalFileSize": len(segment),
                 "transformedChunkSize": sizes[0] if sizes else 0,
                 "finalTransformedChunkSize": sizes[-1] if sizes else 0}  # fmt: skip
    names = ("offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction")
    given = indexes or {}
    blob = b""
    placed: dict[str, object] = {}
    for name in names:
        if name not in given and name == "transaction":
            placed[name] = None
            continue
        data = given.get(name, b"")
        data = encrypt(data) if pair is not None and data else data
        placed[name] = {"position": len(blob), "size": len(data)}
        blob += data
    manifest: dict[str, object] = {"version": "1", "chunkIndex": index, "segmentIndexes": placed,
                                   "compression": compression}  # fmt: skip
    if pair is not None:
        manifest["encryption"] = {"dataKey": wrap(pair, key), "aad": base64.b64encode(aad).decode()}
    manifest["remoteLogSegmentMetadata"] = {
        "remoteLogSegmentId": {"topicIdPartition": {"topicId": TOPIC_ID,
                                                    "topicPartition": {"topic": topic, "partition": partition}},
                               "id": SEGMENT_ID},
        "startOffset": start_offset, "endOffset": end_offset, "maxTimestampMs": 0, "brokerId": 1,
        "eventTimestampMs": 0, "segmentLeaderEpochs": {"0": start_offset},
    }  # fmt: skip
    main = root / f"{prefix}{topic}-{TOPIC_ID}" / str(partition) / f"{start_offset:020d}-{SEGMENT_ID}"
    main.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{main}.log").write_bytes(b"".join(stored))
    Path(f"{main}.indexes").write_bytes(blob)
    Path(f"{main}.rsm-manifest").write_text(json.dumps(manifest, separators=(",", ":")))
    return Path(f"{main}.log")
