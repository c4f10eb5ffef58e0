"""tiered: `kdump verify-crc --deep` of a segment in an object store (issue 40), from an S3 API on
loopback (moto's server, started here), as Aiven's plugin stores it in 4 MiB chunks.

Against the same segment read locally: reading it over S3 (plain chunks: the plugin's layout with
no transform) at least at 0.5x the local speed; zstd+AES-GCM chunks at most 30% slower than plain
chunks. All whole processes; the objects are written by tests/tiered_writer.py (the plugin's steps).
moto's server runs in a process of its own, as .ci/run starts it. Reaching a store has a start-up
of its own (s3fs's imports, botocore's S3 model, the first connection: about a second here), so
each side's start-up is measured apart on a one-batch segment and the speed is also compared with
it taken off.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Check, Contender, Ratio, Table, measure

NAME = "tiered"
ABOUT = "verify-crc --deep of a segment over S3 on loopback (plain, zstd+AES chunks) against on disk"

LOCAL = "kdump verify-crc --deep FILE (on disk)"
S3_PLAIN = "kdump verify-crc --deep s3://… (plain chunks)"
S3_SEALED = "kdump verify-crc --deep s3://… (zstd+AES-GCM chunks)"
LOCAL_START = "start-up: the same, a one-batch segment on disk"
S3_START = "start-up: the same, a one-batch segment over S3"
CHUNK = 4 << 20  # the plugin's README's chunk.size


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(port: int) -> subprocess.Popen[bytes]:
    """moto's S3 server on loopback, in a process of its own (its log to nowhere), once it answers."""
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("moto's server did not answer")


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("verify-crc")
    if why is not None and not ctx.skip_kdump:
        return why
    try:
        import moto.server  # noqa: F401
        import s3fs

        from tests.tiered_writer import make_key_pair, upload
    except ImportError as exc:
        return f"needs the test extra (moto[server], s3fs, cryptography): {exc.name}"
    info = ctx.segment("v2-lz4")
    data = Path(info.path).read_bytes()
    work = ctx.scratch() / "tiered"
    shutil.rmtree(work, ignore_errors=True)
    pair = make_key_pair(Path(work.mkdir(parents=True) or work))
    upload(data, work / "plain", chunk_size=CHUNK)
    upload(data, work / "sealed", chunk_size=CHUNK, compression=True, pair=pair)
    small = work / "small.log"
    small.write_bytes(data[: 61 + int.from_bytes(data[8:12], "big")])  # the first batch alone
    upload(small.read_bytes(), work / "start", chunk_size=CHUNK)
    port = _port()
    server = _serve(port)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        fs = s3fs.S3FileSystem(key="bench", secret="bench", client_kwargs={"endpoint_url": endpoint})
        for name in ("plain", "sealed", "start"):
            fs.mkdir(f"bench-{name}")
            fs.put(str(work / name) + "/", f"bench-{name}/", recursive=True)
        env = {**os.environ, "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
               "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
        verify = [*kdump_side.command(), "verify-crc", "--deep", "--no-progress", "-j", "1"]
        table = Table(NAME, info.name, f"{info.name}: {info.bytes / 1e6:,.1f} MB in {CHUNK >> 20} MiB chunks",
                      info.records, info.bytes)  # fmt: skip
        contenders = [
            Contender(LOCAL, "kdump", argv=[*verify, info.path]),
            Contender(S3_PLAIN, "kdump", argv=[*verify, "s3://bench-plain/tiered/"], env=env),
            Contender(
                S3_SEALED,
                "kdump",
                argv=[*verify, "--rsa-key", str(pair.private_pem), "s3://bench-sealed/tiered/"],
                env=env,
            ),
            Contender(LOCAL_START, "kdump", argv=[*verify, str(small)]),
            Contender(S3_START, "kdump", argv=[*verify, "s3://bench-start/tiered/"], env=env),
        ]
        ratios = [
            Ratio(S3_PLAIN, LOCAL, at_most=2.0, source="issue 40: at least 0.5x the local speed"),
            Ratio(S3_SEALED, S3_PLAIN, at_most=1.3, source="issue 40: zstd+AES at most 30% over plain"),
        ]
        measure(table, ctx.keep(contenders), ctx.repeat, ratios)
    finally:
        server.terminate()
        server.wait()
    table.checks.append(_without_start_up(table))
    table.notes.append("moto's S3 server in a process of its own on loopback; whole kdump processes")
    return [table]


def _without_start_up(table: Table) -> Check:
    """Plain chunks over S3 against on disk, each side's start-up (a one-batch segment) taken off."""
    median = {line.label: line.median_s for line in table.lines}
    parts = [median.get(k) for k in (S3_PLAIN, S3_START, LOCAL, LOCAL_START)]
    target = "<= 2x the time, issue 40: at least 0.5x the local speed (start-up taken off)"
    text = "S3 plain chunks vs on disk, each side's start-up taken off"
    if any(p is None for p in parts):
        return Check(text, None, target, None, S3_PLAIN, LOCAL)
    s3, s3_start, local, local_start = (float(p) for p in parts)  # type: ignore[arg-type]
    value = (s3 - s3_start) / max(local - local_start, 1e-3)
    text += f": {s3 - s3_start:.3f} s vs {local - local_start:.3f} s, {value:.2f}x the time"
    return Check(text, value, target, value <= 2.0, S3_PLAIN, LOCAL)
