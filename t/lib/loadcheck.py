#!/usr/bin/env python3
"""Many concurrent HTTP/1.1 clients, every body checked (t/integ/100-proxy.t).

    loadcheck.py PORT PREFIX CLIENTS REQUESTS

Opens CLIENTS connections to 127.0.0.1:PORT at once (as many as the
descriptor limit allows: the soft limit is raised to the hard one
first), and on each sends REQUESTS keep-alive requests one after the
other for PREFIX + "size/N", N different for every request (1 to 4000),
reading each response whole (by Content-Length or chunked) and checking
that its body is the backend's pattern of N bytes (byte i is
"0123456789"[i % 10], t/lib/backend.py). Prints one line:

    clients=C ok=K bad=B errors=E

(bad: a wrong status or body; errors: a connection that failed) and
exits 0. Gives up after 120 s. Standard library only.
"""

import asyncio
import resource
import sys

PATTERN = b"0123456789"


def pattern(n):
    return (PATTERN * (n // 10 + 1))[:n]


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    length, chunked = None, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = value.strip().lower() == b"chunked"
    if chunked:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, body
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    return status, await reader.readexactly(length or 0)


async def client(k, port, prefix, requests, counts, start):
    await start.wait()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        counts["errors"] += 1
        return
    try:
        for i in range(requests):
            n = 1 + (k * 7919 + i * 104729) % 4000
            writer.write(b"GET %ssize/%d HTTP/1.1\r\nHost: localhost\r\n\r\n"
                         % (prefix.encode(), n))
            status, body = await read_response(reader)
            if status == 200 and body == pattern(n):
                counts["ok"] += 1
            else:
                counts["bad"] += 1
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
        counts["errors"] += 1
    finally:
        writer.close()


async def main():
    port, prefix = int(sys.argv[1]), sys.argv[2]
    clients, requests = int(sys.argv[3]), int(sys.argv[4])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    clients = min(clients, soft - 64)
    counts = {"ok": 0, "bad": 0, "errors": 0}
    start = asyncio.Event()
    tasks = [asyncio.create_task(client(k, port, prefix, requests, counts,
                                        start))
             for k in range(clients)]
    start.set()
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), 120)
    except asyncio.TimeoutError:
        counts["errors"] += sum(1 for t in tasks if not t.done())
    print("clients=%d ok=%d bad=%d errors=%d"
          % (clients, counts["ok"], counts["bad"], counts["errors"]))


if __name__ == "__main__":
    asyncio.run(main())
