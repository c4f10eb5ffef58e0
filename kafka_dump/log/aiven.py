"""Segments as Aiven's tiered-storage plugin stores them: a ``.log`` object cut into chunks, each
compressed (zstd) and/or encrypted (AES-256-GCM) on its own, described by a ``.rsm-manifest``.

The manifest maps the segment's bytes to the object's: a ``fixed`` chunk index (every transformed
chunk the same size but the last) or a ``variable`` one (each chunk's size, in a zstd-compressed,
base64 list). The data key is wrapped with RSA-OAEP over SHA3-512 (BouncyCastle's
``OAEPWithSHA3-512AndMGF1Padding``: SHA3-512 for the hash and for MGF1, an empty label), by the key
pair whose id leads the manifest's ``dataKey``. Read from the plugin's source
(Aiven-Open/tiered-storage-for-apache-kafka 8fb15816): ``SegmentManifestV1``, the chunk indexes,
``ChunkSizesBinaryCodec``, ``AesEncryptionProvider``, ``RsaEncryptionProvider``.

``restore`` writes the segment's own bytes to a file chunk by chunk: memory holds two groups of
stored chunks (``AHEAD_BYTES``: one restored, the next fetched) and one chunk restored, and no size
from the manifest sizes anything before it is checked against the object and the limits (``MAX_CHUNK``, ``MAX_CHUNKS``). A
chunk that fails (its tag, its frame, its size) becomes a problem that names the object, the chunk
and its bytes, and its span of the segment is left as zeros so that reading goes on after it.

The walk only asks this module for names (``manifest_path``, ``base_offset``): what restoring needs
(json, base64, hashlib, zstandard, cryptography) is imported by ``restore``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, NamedTuple

from kafka_dump.errors import NotASegmentError
from kafka_dump.model import Check, Problem, ProblemKind

MANIFEST = ".rsm-manifest"
INDEXES = ".indexes"
IV, TAG = 12, 16  # AES-GCM, per chunk: the IV ahead of the ciphertext, the tag after it
MAX_CHUNK = 256 << 20  # a chunk larger than this is a problem, not an allocation
MAX_CHUNKS = 1 << 20  # chunks a manifest may map (1 GiB in 1 KiB chunks): its index is held whole
MAX_MANIFEST = 16 << 20
MAX_SIZES = 10 << 20  # the variable index's list, decompressed (the plugin's own bound)
INSTALL = "pip install 'kdump[encryption]'"

ReadRange = Callable[[int, int], bytes]  # (start, end) -> the object's bytes start..end
ReadRanges = Callable[[list[tuple[int, int]]], list[bytes]]  # several at once (in flight together)
Seen = Callable[[int, int, str], None]  # (bytes restored, bytes in all, "3 of 17 chunks"): a progress bar
AHEAD_BYTES = 32 << 20  # stored chunks fetched together: memory holds two groups, and one chunk restored
REQUEST_BYTES = 16 << 20  # chunks that lie end to end, asked for in one range request


class Chunk(NamedTuple):
    """Chunk ``number``: its bytes in the segment (``start``, ``size``) and in the object."""

    number: int
    start: int
    size: int
    stored_at: int
    stored_size: int


class Manifest(NamedTuple):
    """What a ``.rsm-manifest`` says, checked: the chunks, the transforms, the key, the indexes."""

    chunks: list[Chunk]
    file_size: int
    compression: bool
    data_key: str | None  # "keyId:base64" (None: not encrypted)
    aad: bytes
    indexes: dict[str, tuple[int, int] | None]  # name -> (position, size) in the .indexes object
    metadata: dict[str, Any]  # remoteLogSegmentMetadata (informative)


_OBJECT_NAME = re.compile(r"^\d{20,}-[A-Za-z0-9_-]{22}\.log$")  # {offset:020}-{segmentId}.log


def plugin_named(name: str) -> bool:
    """A ``.log`` named as the plugin names its objects: its manifest belongs beside it."""
    return _OBJECT_NAME.match(name) is not None


def manifest_path(log: str) -> str:
    """The manifest beside a ``.log`` object (``…-<segmentId>.log`` -> ``…-<segmentId>.rsm-manifest``)."""
    return log[: -len(".log")] + MANIFEST


def parse_manifest(data: bytes, name: str, object_size: int) -> Manifest:
    """The manifest's content, every size checked against the object's (``object_size``)."""
    import base64
    import binascii
    import json

    def bad(why: str) -> NotASegmentError:
        return NotASegmentError(f"the manifest {why}", file=name)

    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad(f"is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("version") != "1":
        raise bad("is not a version 1 manifest of the tiered-storage plugin")
    index = doc.get("chunkIndex")
    if not isinstance(index, dict):
        raise bad("has no chunkIndex")
    chunk_size = _int(index, "originalChunkSize", bad)
    file_size = _int(index, "originalFileSize", bad)
    if chunk_size <= 0 and file_size > 0:
        raise bad(f"says chunks of {chunk_size} bytes")
    n = -(-file_size // chunk_size) if file_size else 0
    if n > MAX_CHUNKS:
        raise bad(
            f"maps {n:,} chunks ({file_size:,} bytes in chunks of {chunk_size:,}), more than {MAX_CHUNKS:,}"
        )
    if index.get("type") == "fixed":
        stored = _int(index, "transformedChunkSize", bad)
        final = _int(index, "finalTransformedChunkSize", bad)
        sizes = None if n == 0 else (stored, final)
    elif index.get("type") == "variable":
        listed = _chunk_sizes(index.get("transformedChunks"), bad)
        if len(listed) != n:
            raise bad(
                f"lists {len(listed):,} chunks where {file_size:,} bytes in chunks of {chunk_size:,} make {n:,}"
            )
        sizes = None
    else:
        raise bad(f"has a chunk index of an unknown type ({index.get('type')!r})")
    chunks: list[Chunk] = []
    at = 0
    for i in range(n):
        size = chunk_size if i < n - 1 else file_size - chunk_size * (n - 1)
        stored_size = listed[i] if sizes is None else (sizes[0] if i < n - 1 else sizes[1])
        if stored_size < 0:
            raise bad(f"gives chunk {i} a size of {stored_size} bytes")
        chunks.append(Chunk(i, i * chunk_size, size, at, stored_size))
        at += stored_size
    if at != object_size:
        raise bad(f"maps {at:,} bytes of chunks onto an object of {object_size:,} bytes")
    encryption = doc.get("encryption")
    data_key, aad = None, b""
    if encryption is not None:
        if not isinstance(encryption, dict) or not isinstance(encryption.get("dataKey"), str):
            raise bad("has an encryption entry without a dataKey")
        data_key = encryption["dataKey"]
        try:
            aad = base64.b64decode(encryption.get("aad") or "", validate=True)
        except (binascii.Error, TypeError):
            raise bad("has an aad that is not base64") from None
    indexes: dict[str, tuple[int, int] | None] = {}
    for key, entry in (doc.get("segmentIndexes") or {}).items():
        indexes[key] = None if entry is None else (_int(entry, "position", bad), _int(entry, "size", bad))
    metadata = doc.get("remoteLogSegmentMetadata")
    return Manifest(chunks, file_size, bool(doc.get("compression")), data_key, aad, indexes,
                    metadata if isinstance(metadata, dict) else {})  # fmt: skip


def _int(obj: Any, key: str, bad: Callable[[str], NotASegmentError]) -> int:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
        raise bad(f"has no whole {key} in 0..2^31-1 ({value!r})")
    return value


def _chunk_sizes(text: object, bad: Callable[[str], NotASegmentError]) -> list[int]:
    """The variable index's sizes: base64 of a zstd frame of ``ChunkSizesBinaryCodec``'s bytes
    (big-endian: count; for two or more, the base, the bytes a value, count-1 values less the base,
    and the last value whole)."""
    import base64
    import binascii
    import struct

    import zstandard

    try:
        frame = base64.b64decode(str(text), validate=True)
        data = zstandard.ZstdDecompressor().decompress(frame, max_output_size=MAX_SIZES)
    except (binascii.Error, zstandard.ZstdError) as exc:
        raise bad(f"has transformedChunks that do not decode ({exc})") from None
    if len(data) < 4:
        raise bad("has transformedChunks shorter than their count")
    (count,) = struct.unpack_from(">i", data)
    if count < 0 or count > len(data):
        raise bad(f"has transformedChunks that claim {count} chunks")
    if count == 0:
        return []
    if count == 1:
        if len(data) != 8:
            raise bad("has transformedChunks of the wrong length")
        return [struct.unpack_from(">i", data, 4)[0]]
    if len(data) < 9:
        raise bad("has transformedChunks shorter than their header")
    (base,) = struct.unpack_from(">i", data, 4)
    width = data[8]
    if not 1 <= width <= 4 or len(data) != 9 + (count - 1) * width + 4:
        raise bad("has transformedChunks of the wrong length")
    values = [
        base + int.from_bytes(data[9 + i * width : 9 + (i + 1) * width], "big") for i in range(count - 1)
    ]
    return [*values, struct.unpack_from(">i", data, len(data) - 4)[0]]


class Keys:
    """The RSA private keys given (``--rsa-key [ID=]PEM``), by key id ("" for one given without an id)."""

    def __init__(self, given: Mapping[str, str] | None = None) -> None:
        self.pem_files = dict(given or {})
        self._loaded: dict[str, tuple[int, int, int]] = {}  # id -> (n, d, modulus bytes)

    def unwrap(self, data_key: str, name: str) -> bytes:
        """The segment's AES key, from the manifest's ``dataKey`` ("keyId:base64 of the RSA ciphertext")."""
        import base64
        import binascii

        key_id, sep, wrapped = data_key.rpartition(":")
        if not sep:
            raise NotASegmentError("the manifest's dataKey has no key id (keyId:base64)", file=name)
        if key_id not in self.pem_files and "" not in self.pem_files:
            given = ", ".join(sorted(k for k in self.pem_files if k)) or "none"
            raise NotASegmentError(
                f"the segment is encrypted with key pair {key_id!r}: give its private key with "
                f"--rsa-key {key_id}=PEM (given: {given})", file=name,
            )  # fmt: skip
        n, d, k = self._key(key_id if key_id in self.pem_files else "", name)
        try:
            c = int.from_bytes(base64.b64decode(wrapped, validate=True), "big")
        except binascii.Error:
            raise NotASegmentError("the manifest's dataKey is not base64", file=name) from None
        # A wrapped value past the modulus is a wrong key too (a smaller one): the same words for both.
        key = _oaep_sha3_512(pow(c, d, n).to_bytes(k, "big")) if c < n else None
        if key is None or len(key) != 32:
            raise NotASegmentError(
                f"the dataKey does not unwrap with key pair {key_id!r}: wrong key?", file=name
            )
        return key

    def _key(self, key_id: str, name: str) -> tuple[int, int, int]:
        if key_id not in self._loaded:
            path = self.pem_files[key_id]
            try:
                from cryptography.hazmat.primitives import serialization
                from cryptography.hazmat.primitives.asymmetric import rsa
            except ImportError:
                raise NotASegmentError(
                    f"decrypting needs the encryption extra: {INSTALL}", file=name
                ) from None
            try:
                key = serialization.load_pem_private_key(_as_pkcs8_pem(path), password=None)
            except (OSError, ValueError, TypeError) as exc:
                raise NotASegmentError(f"cannot read the RSA private key ({exc})", file=path) from None
            if not isinstance(key, rsa.RSAPrivateKey):
                raise NotASegmentError("not an RSA private key", file=path)
            numbers = key.private_numbers()
            n = numbers.public_numbers.n
            self._loaded[key_id] = (n, numbers.d, (n.bit_length() + 7) // 8)
        return self._loaded[key_id]


def _as_pkcs8_pem(path: str) -> bytes:
    """The key file as a ``PRIVATE KEY`` PEM: the plugin reads any PEM label, its body PKCS#8."""
    with open(path, "rb") as f:
        text = f.read(1 << 20)
    lines = [ln.strip() for ln in text.splitlines()]
    body = b"".join(ln for ln in lines if ln and not ln.startswith(b"-----"))
    return b"-----BEGIN PRIVATE KEY-----\n" + body + b"\n-----END PRIVATE KEY-----\n"


def _mgf1(seed: bytes, length: int) -> bytes:
    import hashlib

    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.sha3_512(seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return out[:length]


def _oaep_sha3_512(em: bytes) -> bytes | None:
    """EME-OAEP decoding (RFC 8017 7.1.2) with SHA3-512 for the hash and MGF1, an empty label; None
    when the block is not one. Not constant-time: an offline reader of the user's own data."""
    import hashlib

    h = 64
    if len(em) < 2 * h + 2 or em[0] != 0:
        return None
    masked_seed, masked_db = em[1 : 1 + h], em[1 + h :]
    seed = bytes(a ^ b for a, b in zip(masked_seed, _mgf1(masked_db, h), strict=True))
    db = bytes(a ^ b for a, b in zip(masked_db, _mgf1(seed, len(masked_db)), strict=True))
    if db[:h] != hashlib.sha3_512(b"").digest():
        return None
    rest = db[h:].lstrip(b"\x00")
    return rest[1:] if rest[:1] == b"\x01" else None


class Restored(NamedTuple):
    """What restoring met: the problems, and the offsets the manifest's remoteLogSegmentMetadata
    gives the segment (None where it gives none), for the check against its batches."""

    problems: list[Problem]
    start_offset: int | None
    end_offset: int | None


class Indexes(NamedTuple):
    """The ``.indexes`` object beside a ``.log`` one: its name, size, how to read it, and the stem
    of the local files its indexes are written to (``<stem>.index``, ``.timeindex``, ``.txnindex``)."""

    name: str
    size: int
    read: ReadRange
    stem: str


# The indexes of the .indexes object that kdump checks, by the manifest's names, and their local suffixes.
_INDEX_FILES = (("offset", ".index"), ("timestamp", ".timeindex"), ("transaction", ".txnindex"))


def restore(
    name: str,
    read: ReadRanges,
    object_size: int,
    manifest: bytes,
    manifest_name: str,
    keys: Keys,
    out: IO[bytes],
    indexes: Indexes | None = None,
    seen: Seen | None = None,
) -> Restored:
    """Write the segment a ``.log`` object holds to ``out``, chunk by chunk, and the indexes of its
    ``.indexes`` object beside the copy (each stored on its own, encrypted as the chunks are, never
    compressed); the problems of what could not be restored (a chunk's span left as zeros)."""
    m = parse_manifest(manifest, manifest_name, object_size)
    decrypt = None
    bad_tag: tuple[type[Exception], ...] = ()
    if m.data_key is not None:
        try:
            from cryptography.exceptions import InvalidTag
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise NotASegmentError(f"decrypting needs the encryption extra: {INSTALL}", file=name) from None
        aes = AESGCM(keys.unwrap(m.data_key, manifest_name))
        bad_tag = (InvalidTag,)

        def decrypt(stored: bytes) -> bytes:
            return aes.decrypt(stored[:IV], stored[IV:], m.aad or None)

    import zstandard

    inflate = zstandard.ZstdDecompressor()
    problems: list[Problem] = []
    done, chunks = 0, len(m.chunks)
    if seen is not None:
        seen(0, m.file_size, f"0 of {chunks:,} chunks")
    for c, stored in _fetched(m.chunks, read):
        why = None
        data = b""
        if stored is None:
            why = f"is {max(c.stored_size, c.size):,} bytes, more than the {MAX_CHUNK:,} read at once"
        else:
            data = stored
            try:
                if decrypt is not None:
                    data = decrypt(data)
                if m.compression:
                    claimed = zstandard.get_frame_parameters(data).content_size
                    if claimed > c.size and claimed != zstandard.CONTENTSIZE_UNKNOWN:
                        raise zstandard.ZstdError(f"its frame claims {claimed:,} bytes")
                    data = inflate.decompress(data, max_output_size=c.size)
            except bad_tag:
                why = "fails its AES-GCM authentication (a changed byte, or another key)"
            except zstandard.ZstdError as exc:
                why = f"does not decompress ({exc})"
            if why is None and len(data) != c.size:
                why = f"holds {len(data):,} bytes where the manifest says {c.size:,}"
        if why is not None:
            reason = f"chunk {c.number} (object bytes {c.stored_at}..{c.stored_at + c.stored_size}) {why}"
            problems.append(Problem(name, c.start, c.size, ProblemKind.CORRUPT, reason, None, Check.CHUNK))
            out.seek(c.size, os.SEEK_CUR)  # a hole: zeros, on disk only
        else:
            out.write(data)
        if seen is not None:
            done += c.size
            seen(done, m.file_size, f"{c.number + 1:,} of {chunks:,} chunks")
    out.truncate(m.file_size)
    if indexes is not None:
        problems += _restore_indexes(m, indexes, decrypt, bad_tag)
    start, end = m.metadata.get("startOffset"), m.metadata.get("endOffset")
    return Restored(
        problems, start if isinstance(start, int) else None, end if isinstance(end, int) else None
    )


def _fetched(chunks: list[Chunk], read: ReadRanges) -> Iterator[tuple[Chunk, bytes | None]]:
    """Each chunk with its stored bytes (None for one too large to read), in groups of up to
    ``AHEAD_BYTES``: the next group is fetched (on a thread) while this one is restored, and the
    chunks of a group that lie end to end are asked for in requests of up to ``REQUEST_BYTES``."""
    groups = _groups(chunks)
    if not groups:
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="kdump-chunks") as ahead:
        pending = ahead.submit(_read_group, groups[0], read)
        for i, group in enumerate(groups):
            got = pending.result()
            if i + 1 < len(groups):
                pending = ahead.submit(_read_group, groups[i + 1], read)
            yield from zip(group, got, strict=True)


def _groups(chunks: list[Chunk]) -> list[list[Chunk]]:
    """The chunks in groups of up to ``AHEAD_BYTES`` stored; a chunk too large to read alone."""
    groups: list[list[Chunk]] = []
    held = AHEAD_BYTES + 1
    for c in chunks:
        if _too_large(c):
            groups.append([c])
            held = AHEAD_BYTES + 1
        elif held + c.stored_size > AHEAD_BYTES:
            groups.append([c])
            held = c.stored_size
        else:
            groups[-1].append(c)
            held += c.stored_size
    return groups


def _too_large(c: Chunk) -> bool:
    """A chunk larger than is read at once, stored or restored: a problem, never an allocation."""
    return c.stored_size > MAX_CHUNK or c.size > MAX_CHUNK


def _read_group(group: list[Chunk], read: ReadRanges) -> list[bytes | None]:
    """The group's stored chunks (None for one too large to read), chunks that lie end to end
    asked for together, up to ``REQUEST_BYTES`` a request."""
    if len(group) == 1 and _too_large(group[0]):
        return [None]
    spans: list[list[Chunk]] = []
    for c in group:
        last = spans[-1] if spans else None
        if (
            last is not None
            and last[-1].stored_at + last[-1].stored_size == c.stored_at
            and c.stored_at + c.stored_size - last[0].stored_at <= REQUEST_BYTES
        ):
            last.append(c)
        else:
            spans.append([c])
    found = read([(s[0].stored_at, s[-1].stored_at + s[-1].stored_size) for s in spans])
    out: list[bytes | None] = []
    for span, data in zip(spans, found, strict=True):
        if len(span) == 1:
            out.append(data)
            continue
        view = memoryview(data)
        for c in span:
            at = c.stored_at - span[0].stored_at
            out.append(bytes(view[at : at + c.stored_size]))
    return out


def _restore_indexes(
    m: Manifest, ix: Indexes, decrypt: Callable[[bytes], bytes] | None, bad_tag: tuple[type[Exception], ...]
) -> list[Problem]:
    """Write the offset, time and transaction indexes to ``<stem>.index`` and so on, for the index
    check to read beside the segment; a span the object does not hold, or one that fails its tag, is
    a problem of the ``.indexes`` object."""
    problems: list[Problem] = []
    for key, suffix in _INDEX_FILES:
        entry = m.indexes.get(key)
        if entry is None:
            continue
        at, size = entry
        why = None
        if at + size > ix.size:
            why = f"lies at bytes {at}..{at + size}, past the object's {ix.size:,} bytes"
        elif size > MAX_CHUNK:
            why = f"is {size:,} bytes, more than the {MAX_CHUNK:,} read at once"
        else:
            data = ix.read(at, at + size) if size else b""
            try:
                if decrypt is not None and data:
                    data = decrypt(data)
            except bad_tag:
                why = "fails its AES-GCM authentication (a changed byte, or another key)"
        if why is not None:
            reason = f"the {key} index {why}"
            problems.append(Problem(ix.name, at, size, ProblemKind.CORRUPT, reason, None, Check.CHUNK))
            continue
        with open(ix.stem + suffix, "wb") as f:
            f.write(data)
    return problems


def base_offset(name: str) -> int | None:
    """The start offset in an object's name (``00000000000000000023-<segmentId>.log`` -> 23)."""
    base = os.path.basename(name)
    digits = base.split("-", 1)[0]
    return int(digits) if len(digits) >= 20 and digits.isdigit() else None
