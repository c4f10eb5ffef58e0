"""Tiered storage: segments as Aiven's plugin stores them (chunked, zstd, AES-GCM) read as the
segments they were, from a directory and from an S3 server on loopback (moto's, over HTTP through
s3fs: nothing mocked below the HTTP line); damage reported in one line each."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_dump.log import aiven
from tests.conftest import FIXTURES
from tests.test_silent_passes import ROOT

pytest.importorskip("cryptography", reason="the encryption extra writes and reads encrypted objects")
from tests.tiered_writer import KeyPair, chunk_sizes_codec, make_key_pair, upload

SHARED_REAL = ROOT.parent / "shared" / "fixtures-real"
REAL = SHARED_REAL / "macsakini-kafka34-zk" / "items-0" / "00000000000000000000.log"  # written by a broker
TRANSFORMS = {
    "none": (False, False),
    "zstd": (True, False),
    "encryption": (False, True),
    "zstd+encryption": (True, True),
}


def kdump(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "kafka_dump", *args], capture_output=True, text=True, check=False,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **(env or {})},
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def segments() -> list[Path]:
    found = [FIXTURES / "mixed-magic.log", FIXTURES / "v2-gzip.log"]
    return [*found, REAL] if REAL.is_file() else found


def _records(out: str) -> list[dict[str, object]]:
    """dump's JSON lines, less the file name (the object's, or the file's)."""
    rows = [json.loads(line) for line in out.splitlines()]
    return [{k: v for k, v in row.items() if k != "file"} for row in rows]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> KeyPair:
    return make_key_pair(tmp_path_factory.mktemp("keys"))


def test_the_chunk_size_codec_agrees_with_the_plugins_vector() -> None:
    """``ChunkIndexSerializationTest``'s variable index: the plugin's own bytes decode to its sizes."""
    vector = (
        '{"version":"1","chunkIndex":{"type":"variable","originalChunkSize":100,"originalFileSize":250,'
        '"transformedChunks":"KLUv/SAPeQAAAAAAAwAAAAoBAAoAAAAe"},"segmentIndexes":{},"compression":true}'
    )
    m = aiven.parse_manifest(vector.encode(), "m", 60)
    assert [(c.number, c.start, c.size, c.stored_at, c.stored_size) for c in m.chunks] == [
        (0, 0, 100, 0, 10), (1, 100, 100, 10, 20), (2, 200, 50, 30, 30),
    ]  # fmt: skip
    assert chunk_sizes_codec([10, 20, 30]).hex() == "000000030000000a01000a0000001e"


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("segment", segments(), ids=lambda p: p.parent.name + "/" + p.name)
def test_an_object_reads_as_the_segment_it_holds(
    tmp_path: Path, pair: KeyPair, transform: str, segment: Path
) -> None:
    compression, encryption = TRANSFORMS[transform]
    data = segment.read_bytes()
    log = upload(data, tmp_path / "bucket", chunk_size=max(64, len(data) // 7), compression=compression,
                 pair=pair if encryption else None)  # fmt: skip
    assert log.read_bytes() != data or transform == "none"
    keys = ["--rsa-key", f"{pair.key_id}={pair.private_pem}"]
    on_file = kdump("dump", "--format", "json", str(segment))
    for where in (str(log), str(tmp_path / "bucket")):  # the object, and the prefix walked
        code, out, err = kdump("dump", "--format", "json", *keys, where)
        assert (code, _records(out)) == (on_file[0], _records(on_file[1])), err
    code, out, _ = kdump("verify-crc", "--format", "json", *keys, str(log))
    file_code, file_out, _ = kdump("verify-crc", "--format", "json", str(segment))
    summary = {k: v for k, v in json.loads(out.splitlines()[-1]).items() if k not in ("file", "indexFiles")}
    expected = {
        k: v for k, v in json.loads(file_out.splitlines()[-1]).items() if k not in ("file", "indexFiles")
    }
    assert (code, summary) == (file_code, expected)


def test_a_flipped_bit_in_an_encrypted_chunk_is_a_problem_and_reading_goes_on(
    tmp_path: Path, pair: KeyPair
) -> None:
    data = (FIXTURES / "mixed-magic.log").read_bytes()
    log = upload(data, tmp_path, chunk_size=256, compression=True, pair=pair)
    manifest = aiven.parse_manifest(Path(aiven.manifest_path(str(log))).read_bytes(), "m", log.stat().st_size)
    second = manifest.chunks[1]
    damaged = bytearray(log.read_bytes())
    damaged[second.stored_at + 20] ^= 0x04
    log.write_bytes(bytes(damaged))
    code, out, err = kdump("verify-crc", "--format", "json", "--rsa-key", str(pair.private_pem), str(log))
    assert code == 1, err
    problems = [json.loads(line) for line in out.splitlines() if json.loads(line)["type"] == "problem"]
    chunk = [p for p in problems if p["check"] == "chunk"]
    assert len(chunk) == 1 and chunk[0]["position"] == 256 and chunk[0]["length"] == 256
    assert (
        f"chunk 1 (object bytes {second.stored_at}..{second.stored_at + second.stored_size})"
        in chunk[0]["reason"]
    )
    assert "AES-GCM authentication" in chunk[0]["reason"]
    summary = json.loads(out.splitlines()[-1])
    assert summary["batches"] > 0  # the chunks around it were read


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("wrong key", "does not unwrap with key pair 'static-key-id'"),
        ("no key", "give its private key with --rsa-key static-key-id=PEM"),
        ("truncated object", "maps"),
        ("manifest claims 2 GiB", "originalFileSize"),
        ("manifest not JSON", "is not JSON"),
        (
            "missing manifest",
            "manifest (00000000000000000000-7pRrW-X_Q4Ox5b2Ep6Clgg.rsm-manifest) is missing",
        ),
    ],
)
def test_damage_is_one_line_that_names_the_object(
    tmp_path: Path, pair: KeyPair, damage: str, says: str
) -> None:
    log = upload((FIXTURES / "v2-gzip.log").read_bytes(), tmp_path, chunk_size=100, pair=pair)
    manifest = Path(aiven.manifest_path(str(log)))
    key = str(pair.private_pem)
    if damage == "wrong key":
        key = str(make_key_pair(tmp_path / "..", "other").private_pem)
    elif damage == "truncated object":
        log.write_bytes(log.read_bytes()[:-5])
    elif damage == "manifest claims 2 GiB":
        doc = json.loads(manifest.read_text())
        doc["chunkIndex"]["originalFileSize"] = 2**31
        manifest.write_text(json.dumps(doc))
    elif damage == "manifest not JSON":
        manifest.write_text("{not json")
    elif damage == "missing manifest":
        manifest.unlink()
    args = [] if damage == "no key" else ["--rsa-key", f"static-key-id={key}"]
    for command in ("dump", "verify-crc"):
        code, out, err = kdump(command, *args, str(log))
        lines = (
            err.strip().splitlines()
            if command == "dump"
            else [ln for ln in out.splitlines() if "error" in ln]
        )
        assert code == 2 and says in "\n".join(lines) and log.name[:-4] in "\n".join(lines), (
            command,
            out,
            err,
        )
        assert len(err.strip().splitlines()) <= 1, err


def test_a_missing_key_file_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = kdump("dump", "--rsa-key", str(tmp_path / "nope.pem"), str(FIXTURES / "v2-gzip.log"))
    assert code == 2 and "no such key file" in err


# --- over S3, from a server on loopback ------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """An S3 API on loopback: ``KDUMP_TEST_S3_ENDPOINT`` (.ci/run starts moto's server), else moto's
    server started here; the environment that points boto (s3fs) at it."""
    pytest.importorskip("s3fs", reason="the remote extra reads s3://")
    endpoint = os.environ.get("KDUMP_TEST_S3_ENDPOINT")
    server = None
    if endpoint is None:
        moto_server = pytest.importorskip("moto.server", reason="moto[server] serves the S3 API")
        port = _free_port()
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        endpoint = f"http://127.0.0.1:{port}"
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    try:
        yield env
    finally:
        if server is not None:
            server.stop()


def _put(env: dict[str, str], bucket: str, local: Path) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(key="test", secret="test", client_kwargs={"endpoint_url": env["AWS_ENDPOINT_URL"]})
    if not fs.exists(bucket):
        fs.mkdir(bucket)
    fs.put(str(local) + "/", f"{bucket}/", recursive=True)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_over_s3_an_object_reads_as_the_segment(
    tmp_path: Path, pair: KeyPair, s3: dict[str, str], transform: str
) -> None:
    compression, encryption = TRANSFORMS[transform]
    segment = segments()[-1]
    data = segment.read_bytes()
    local = tmp_path / "up"
    log = upload(data, local, chunk_size=max(64, len(data) // 5), compression=compression,
                 pair=pair if encryption else None)  # fmt: skip
    bucket = f"kdump-{os.getpid()}-{transform.replace('+', '-')}"  # CI's two suites share the server
    _put(s3, bucket, local)
    key = log.relative_to(local).as_posix()
    keys = ["--rsa-key", str(pair.private_pem)]
    on_file = kdump("dump", "--format", "json", str(segment))
    for url in (f"s3://{bucket}/{key}", f"s3://{bucket}/tiered"):
        code, out, err = kdump("dump", "--format", "json", *keys, url, env=s3)
        assert (code, _records(out)) == (on_file[0], _records(on_file[1])), err
    code, out, err = kdump("ls", "--by", "segment", "--format", "json", *keys, f"s3://{bucket}", env=s3)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["file"] for r in rows if r["type"] == "segment"] == [f"s3://{bucket}/{key}"], err
    code, out, err = kdump("verify-crc", *keys, f"s3://{bucket}/{key}", env=s3)
    assert code == kdump("verify-crc", str(segment))[0], (out, err)


def test_a_plain_segment_in_a_bucket_reads_as_on_disk(tmp_path: Path, s3: dict[str, str]) -> None:
    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    shutil.copy(FIXTURES / "v2-gzip.log", part / "00000000000000000000.log")
    bucket = f"kdump-{os.getpid()}-plain"
    _put(s3, bucket, tmp_path / "logs")
    for command in ("dump", "stats", "verify-crc"):
        local = kdump(command, "--format", "json", str(part))
        remote = kdump(command, "--format", "json", f"s3://{bucket}", env=s3)
        assert remote[0] == local[0] and _records(remote[1]) == _records(local[1]), (command, remote)
    code, _, err = kdump("dump", f"s3://{bucket}/nothing-here", env=s3)
    assert code == 2 and f"s3://{bucket}/nothing-here: no such object or prefix" in err


def test_a_broken_object_in_a_prefix_is_one_problem_and_the_others_are_read(
    tmp_path: Path, pair: KeyPair
) -> None:
    data = (FIXTURES / "v2-gzip.log").read_bytes()
    good = upload(data, tmp_path, partition=0, chunk_size=100, pair=pair)
    bad = upload(data, tmp_path, partition=1, chunk_size=100, pair=pair)
    Path(aiven.manifest_path(str(bad))).write_text("{not json")
    code, out, err = kdump("dump", "--format", "json", "--rsa-key", str(pair.private_pem), str(tmp_path))
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1, err
    assert {r["file"] for r in rows if r["type"] == "batch"} == {str(good)}
    assert [r["file"] for r in rows if r["type"] == "problem"] == [str(bad)]
    code, out, _ = kdump("verify-crc", "--format", "json", "--rsa-key", str(pair.private_pem), str(tmp_path))
    errors = {json.loads(line)["file"]: json.loads(line)["error"] for line in out.splitlines()}
    assert code == 1 and errors[str(good)] is None and "is not JSON" in str(errors[str(bad)])


@pytest.mark.parametrize("encrypted", [False, True])
def test_the_indexes_object_is_checked_as_the_indexes_beside_a_segment(
    tmp_path: Path, pair: KeyPair, encrypted: bool
) -> None:
    part = FIXTURES / "txn-aborted"
    log = part / "00000000000000000000.log"
    indexes = {"offset": log.with_suffix(".index").read_bytes(), "timestamp": log.with_suffix(".timeindex").read_bytes(),
               "transaction": log.with_suffix(".txnindex").read_bytes()}  # fmt: skip
    obj = upload(log.read_bytes(), tmp_path, chunk_size=200, compression=True, pair=pair if encrypted else None,
                 indexes=indexes)  # fmt: skip
    keys = ["--rsa-key", str(pair.private_pem)]
    _, out, _ = kdump("verify-crc", "--format", "json", *keys, str(obj))
    _, local, _ = kdump("verify-crc", "--format", "json", str(log))
    summary, expected = json.loads(out.splitlines()[-1]), json.loads(local.splitlines()[-1])
    assert summary["indexFiles"] == expected["indexFiles"] == 3
    assert {k: v for k, v in summary.items() if k != "file"} == {
        k: v for k, v in expected.items() if k != "file"
    }
    if encrypted:  # a changed byte in the stored offset index: a problem of the .indexes object
        stored = Path(str(obj)[: -len(".log")] + ".indexes")
        damaged = bytearray(stored.read_bytes())
        damaged[15] ^= 1
        stored.write_bytes(bytes(damaged))
        code, out, _ = kdump("verify-crc", "--format", "json", *keys, str(obj))
        problems = [json.loads(line) for line in out.splitlines() if '"type":"problem"' in line]
        assert code == 1 and [p["file"] for p in problems] == [str(stored)]
        assert "index fails its AES-GCM authentication" in problems[0]["reason"]


def test_a_manifest_that_disagrees_with_its_segment_is_a_problem(tmp_path: Path) -> None:
    log = upload((FIXTURES / "v2-gzip.log").read_bytes(), tmp_path, chunk_size=100, end_offset=5)
    code, out, _ = kdump("verify-crc", "--format", "json", str(log))
    problems = [json.loads(line) for line in out.splitlines() if '"type":"problem"' in line]
    assert code == 1 and [p["check"] for p in problems] == ["manifest"]
    assert "endOffset 5 where the segment's last batch ends at" in problems[0]["reason"]


# --- __remote_log_metadata against the store --------------------------------------------------------

TOPIC_UUID = "AAAAAAAAAAAAAAAAAAAAAQ"  # the topic id of tiered_writer's keys


def _rlmm_record(api_key: int, fields: dict[str, object]) -> bytes:
    """A __remote_log_metadata value: the frame (version 1, apiKey, version 0), then the message."""
    from kafka_dump.wire.kmessage import schema
    from kafka_dump.wire.kschemas import RLMM_TYPES

    return bytes([1, api_key, 0]) + schema(RLMM_TYPES[api_key]).write(fields, 0)


def _segment_added(seg: str, start: int, end: int, partition: int = 3) -> bytes:
    tip = {"name": "orders", "id": TOPIC_UUID, "partition": partition}
    return _rlmm_record(0, {
        "remoteLogSegmentId": {"topicIdPartition": tip, "id": seg}, "startOffset": start, "endOffset": end,
        "brokerId": 1, "maxTimestampMs": 5, "eventTimestampMs": 6,
        "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}], "segmentSizeInBytes": 577,
        "customMetadata": None, "remoteLogSegmentState": 0, "txnIndexEmpty": True,
    })  # fmt: skip


def _segment_moved(seg: str, state: int) -> bytes:
    tip = {"name": "orders", "id": TOPIC_UUID, "partition": 3}
    return _rlmm_record(1, {"remoteLogSegmentId": {"topicIdPartition": tip, "id": seg}, "brokerId": 1,
                            "eventTimestampMs": 7, "customMetadata": None, "remoteLogSegmentState": state})  # fmt: skip


def test_state_replays_remote_log_metadata_and_checks_it_against_the_store(tmp_path: Path) -> None:
    from tests.batches import v2_batch

    ok, lost, stuck, deleted, stray = (f"{c * 21}{n}" for c, n in zip("ABCDE", "QgwAQ", strict=True))
    values = [
        _segment_added(ok, 0, 9), _segment_moved(ok, 1),  # copied: its objects are there
        _segment_added(lost, 10, 19), _segment_moved(lost, 1),  # copied, its .log gone: data loss
        _segment_added(stuck, 20, 29),  # never finished
        _segment_added(deleted, 30, 39), _segment_moved(deleted, 1), _segment_moved(deleted, 3),  # deleted...
    ]  # fmt: skip
    part = tmp_path / "logs" / "__remote_log_metadata-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(v2_batch([(None, v, []) for v in values]))
    bucket = tmp_path / "bucket"
    data = (FIXTURES / "v2-gzip.log").read_bytes()
    for seg, start in ((ok, 0), (lost, 10), (deleted, 30), (stray, 40)):  # ...but its objects are left
        log = upload(data, bucket, start_offset=start, chunk_size=200)
        for f in log.parent.glob(f"{start:020d}-*"):
            f.rename(f.with_name(f.name.replace(log.name.split("-", 1)[1][:22], seg)))
    next(bucket.rglob(f"*{lost}.log")).unlink()
    code, out, err = kdump("state", "--format", "json", str(part))
    rows = [json.loads(line) for line in out.splitlines()]
    states = {r["segmentId"]: r["state"] for r in rows if r["type"] == "remote-segment"}
    assert code == 0, err
    assert states == {ok: "COPY_SEGMENT_FINISHED", lost: "COPY_SEGMENT_FINISHED", stuck: "COPY_SEGMENT_STARTED",
                      deleted: "DELETE_SEGMENT_FINISHED"}  # fmt: skip
    code, out, err = kdump("state", "--format", "json", "--store", str(bucket), str(part))
    rows = [json.loads(line) for line in out.splitlines()]
    found = sorted((r["finding"], r["segmentId"]) for r in rows if r["type"] == "remote-finding")
    assert code == 1, err
    assert found == sorted(
        [("missing", lost), ("stuck", stuck), *[("orphan", deleted)] * 3, *[("orphan", stray)] * 3]
    )
    verdict = rows[-1]
    assert verdict["type"] == "remote-verdict" and not verdict["ok"] and verdict["missing"] == 1
    missing = next(r for r in rows if r.get("finding") == "missing")
    assert missing["why"] == "no .log object" and missing["where"] == "orders-3 offsets 10..19"
    code, out, _ = kdump("state", "--store", str(bucket), str(part))
    assert code == 1 and "MISSING" in out and "NOT OK" in out


# --- one partition across disk and store ----------------------------------------------------------


def _batch(first: int, last: int) -> bytes:
    from tests.batches import default_records, v2_batch

    return v2_batch(default_records(last - first + 1, seed=first), base_offset=first)


# The made partition of both tests below: local 25..44, remote 0..9, 15..24, 25..34 (both) and 40..49.
ACROSS = [
    ("span", "remote", 0, 9), ("gap", None, 10, 14), ("span", "remote", 15, 24), ("span", "both", 25, 34),
    ("span", "local", 35, 44), ("overlap", None, 40, 44), ("span", "remote", 40, 49),
]  # fmt: skip


def _shape(rows: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    """The span, gap and overlap rows of ``ls --remote``/``--tiered`` JSON, less the summary."""
    return [(r["type"], r.get("where"), r["firstOffset"], r["lastOffset"]) for r in rows[:-1]]


def test_ls_remote_shows_one_line_of_offsets_across_disk_and_store(
    tmp_path: Path, s3: dict[str, str]
) -> None:
    part = tmp_path / "data" / "orders-3"
    part.mkdir(parents=True)
    for first, last in ((25, 34), (35, 44)):
        (part / f"{first:020d}.log").write_bytes(_batch(first, last))
    local = tmp_path / "up"
    for first, last in ((0, 9), (15, 24), (25, 34), (40, 49)):  # 10..14 on neither side; 40..44 twice
        upload(_batch(first, last), local, topic="orders", partition=3, start_offset=first, chunk_size=100)
    upload(
        _batch(0, 9), local, topic="orders", partition=4, start_offset=0, chunk_size=100
    )  # another partition
    bucket = f"kdump-{os.getpid()}-across"
    _put(s3, bucket, local)
    for where, env in ((str(local), None), (f"s3://{bucket}/tiered/", s3)):
        code, out, err = kdump("ls", "--format", "json", "--remote", where, str(part), env=env)
        rows = [json.loads(line) for line in out.splitlines()]
        assert code == 1, err  # a gap, an overlap
        assert _shape(rows) == ACROSS, _shape(rows)
        assert rows[-1] == {"type": "tiered", "localStart": 25, "localEnd": 44, "localSegments": 2,
                            "remoteStart": 0, "remoteEnd": 49, "remoteSegments": 4, "gaps": 1, "overlaps": 1,
                            "remoteFrom": where}  # fmt: skip
    code, out, _ = kdump("ls", "--remote", str(local), str(part))
    assert (
        code == 1
        and "GAP     10..14  (5 offsets on neither side)" in out
        and "remote: 0..49 in 4 segments" in out
    )


# --- on a Dask cluster ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_scheduler() -> Iterator[str]:
    """A Dask LocalCluster (workers as threads of this process, which imports kafka_dump)."""
    distributed = pytest.importorskip("distributed", reason="the dask extra runs --dask")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0", protocol="tcp://", host="127.0.0.1")  # fmt: skip
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def test_dask_gives_what_a_local_run_gives(tmp_path: Path, pair: KeyPair, dask_scheduler: str) -> None:
    data = (FIXTURES / "mixed-magic.log").read_bytes()
    for p in range(3):
        upload(data, tmp_path / "bucket", partition=p, chunk_size=300, compression=True, pair=pair)
    damaged = bytearray(data)
    damaged[40] ^= 0x20
    upload(bytes(damaged), tmp_path / "bucket", partition=3, chunk_size=300)
    keys = ["--rsa-key", str(pair.private_pem)]
    for command, extra in (("verify-crc", ["-j", "1"]), ("ls", ["--by", "segment"])):
        local = kdump(command, "--format", "json", *extra, *keys, str(tmp_path / "bucket"))
        on_dask = kdump(
            command, "--format", "json", *extra, *keys, "--dask", dask_scheduler, str(tmp_path / "bucket")
        )
        assert on_dask == local and local[0] == (1 if command == "verify-crc" else 0), (
            command,
            on_dask,
            local,
        )
    code, _, err = kdump("verify-crc", "--dask", "tcp://127.0.0.1:1", str(FIXTURES / "v2-gzip.log"))
    assert code == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in err


def _fails(item: int) -> int:
    if item == 1:
        raise TypeError("Source.__new__() takes from 4 to 9 positional arguments but 10 were given")
    return item


def test_a_task_the_cluster_cannot_run_is_one_line_not_a_traceback(dask_scheduler: str) -> None:
    from kafka_dump.analysis.cluster import on_dask
    from kafka_dump.errors import KafkaDumpError, NotASegmentError

    results = on_dask(dask_scheduler, _fails, [0, 1, 2])
    assert next(results) == 0
    with pytest.raises(KafkaDumpError) as raised:
        next(results)
    assert str(raised.value) == (
        f"the Dask cluster at {dask_scheduler} could not run a task (TypeError: Source.__new__() takes from 4 to 9"
        " positional arguments but 10 were given); its workers need the kdump and Python of this machine"
    )
    with pytest.raises(NotASegmentError):  # a task's own error passes as it is
        list(on_dask(dask_scheduler, _not_a_segment, [0]))


def _not_a_segment(item: int) -> int:
    from kafka_dump.errors import NotASegmentError

    raise NotASegmentError("no such object", file="s3://b/x.log")


def test_without_the_extras_a_url_or_a_key_is_one_line_that_names_the_install(
    tmp_path: Path, pair: KeyPair
) -> None:
    """The remote and encryption extras are imported only where used; a missing one is named."""
    blocked = tmp_path / "blocked"
    for name in ("fsspec", "cryptography"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text(f"raise ImportError('{name} is not installed here')\n")
    env = {"PYTHONPATH": f"{blocked}{os.pathsep}{ROOT}"}
    code, _, err = kdump("dump", "s3://bucket/prefix/", env=env)
    assert code == 2 and err.strip() == (
        "kdump: error: s3://bucket/prefix: reading an object store needs the remote extra: pip install 'kdump[remote]'"
    ), err
    log = upload((FIXTURES / "v2-gzip.log").read_bytes(), tmp_path / "bucket", chunk_size=100, pair=pair)
    code, _, err = kdump("dump", "--rsa-key", str(pair.private_pem), str(log), env=env)
    assert code == 2 and "decrypting needs the encryption extra: pip install 'kdump[encryption]'" in err, err
    assert kdump("dump", str(FIXTURES / "v2-gzip.log"), env=env)[0] == 0  # a local segment needs neither


def test_a_chunk_larger_than_the_limit_is_a_problem_not_an_allocation(tmp_path: Path) -> None:
    log = upload((FIXTURES / "v2-gzip.log").read_bytes(), tmp_path, chunk_size=100)
    manifest = Path(aiven.manifest_path(str(log)))
    doc = json.loads(manifest.read_text())
    size = log.stat().st_size
    doc["chunkIndex"] = {"type": "fixed", "originalChunkSize": 2**31 - 1, "originalFileSize": 2**31 - 1,
                         "transformedChunkSize": size, "finalTransformedChunkSize": size}  # fmt: skip
    manifest.write_text(json.dumps(doc))
    code, out, _ = kdump("verify-crc", "--format", "json", str(log))
    problems = [json.loads(line) for line in out.splitlines() if '"type":"problem"' in line]
    assert (
        code == 1
        and problems[0]["check"] == "chunk"
        and "more than the 268,435,456 read at once" in problems[0]["reason"]
    )


def test_no_local_copy_is_left_behind_by_workers(tmp_path: Path) -> None:
    data = (FIXTURES / "v2-gzip.log").read_bytes()
    for p in range(4):
        upload(data, tmp_path / "bucket", partition=p, chunk_size=100, compression=True)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    for args in (
        ["dump", "-j", "2", "--format", "json"],
        ["ls", "-j", "2"],
        ["verify-crc", "-j", "2"],
        ["stats"],
    ):
        code, _, err = kdump(*args, str(tmp_path / "bucket"), env={"TMPDIR": str(scratch)})
        assert code == 0, (args, err)
        assert list(scratch.iterdir()) == [], args


def test_a_manifest_of_billions_of_chunks_is_refused_before_its_index_is_built(tmp_path: Path) -> None:
    log = upload((FIXTURES / "v2-gzip.log").read_bytes(), tmp_path, chunk_size=100)
    manifest = Path(aiven.manifest_path(str(log)))
    doc = json.loads(manifest.read_text())
    doc["chunkIndex"] = {"type": "fixed", "originalChunkSize": 1, "originalFileSize": 2**31 - 1,
                         "transformedChunkSize": 0, "finalTransformedChunkSize": 0}  # fmt: skip
    manifest.write_text(json.dumps(doc))
    code, out, _ = kdump("verify-crc", "--format", "json", str(log))
    assert code == 2 and "maps 2,147,483,647 chunks" in json.loads(out.splitlines()[-1])["error"]


def test_diff_takes_a_url(tmp_path: Path) -> None:
    part = tmp_path / "t-0"
    part.mkdir()
    shutil.copy(FIXTURES / "v2-gzip.log", part / "00000000000000000000.log")
    code, out, err = kdump("diff", f"file://{part}", str(part))
    assert code == 0 and "identical over the common range" in out, err
    code, _, err = kdump("diff", f"file://{tmp_path}/nothing", str(part))
    assert code == 2 and f"file://{tmp_path}/nothing: no such object or prefix" in err


def test_ls_tiered_takes_the_remote_side_from_remote_log_metadata(tmp_path: Path) -> None:
    from tests.batches import v2_batch

    data = tmp_path / "data"
    part = data / "orders-3"
    part.mkdir(parents=True)
    for first, last in ((25, 34), (35, 44)):
        (part / f"{first:020d}.log").write_bytes(_batch(first, last))
    ids = iter(f"{c * 21}{n}" for c, n in zip("ABCDEFGH", "QgwAQgwA", strict=True))
    values = []
    for first, last in ((0, 9), (15, 24), (25, 34), (40, 49)):  # copied: Kafka serves them
        seg = next(ids)
        values += [_segment_added(seg, first, last), _segment_moved(seg, 1)]
    stuck, deleted, other = next(ids), next(ids), next(ids)
    values += [_segment_added(stuck, 50, 59)]  # never finished: not served
    values += [_segment_added(deleted, 60, 69), _segment_moved(deleted, 1), _segment_moved(deleted, 3)]
    values += [_segment_added(other, 0, 99, partition=4), _segment_moved(other, 1)]  # another partition
    meta = data / "__remote_log_metadata-7"
    meta.mkdir()
    (meta / "00000000000000000000.log").write_bytes(v2_batch([(None, v, []) for v in values]))
    code, out, err = kdump("ls", "--format", "json", "--tiered", str(part))
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1, err  # a gap, an overlap
    assert _shape(rows) == ACROSS, _shape(rows)
    assert rows[0]["segment"] == "A" * 21 + "Q" and rows[0]["bytes"] == 577
    assert rows[-1]["remoteSegments"] == 4 and rows[-1]["remoteFrom"] == "__remote_log_metadata"
    elsewhere = tmp_path / "data-2"  # JBOD: the metadata's partition in another log dir
    elsewhere.mkdir()
    meta.rename(elsewhere / meta.name)
    code, out, err = kdump("ls", "--tiered", str(part))
    assert code == 2 and out == "" and "__remote_log_metadata partition" in err and "--metadata" in err
    assert "Traceback" not in err
    code, out, err = kdump("ls", "--metadata", str(tmp_path), str(part))
    assert code == 1, err
    assert "GAP     10..14  (5 offsets on neither side)" in out and "remote: 0..49 in 4 segments" in out
    code, _, err = kdump("ls", "--tiered", "--remote", str(tmp_path), str(part))
    assert code == 2 and "give one" in err
