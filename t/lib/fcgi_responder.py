#!/usr/bin/env python3
"""A small FastCGI responder for the FastCGI tests (t/integ/101-fastcgi.t).

    fcgi_responder.py PORT|unix:PATH NAME

Listens on 127.0.0.1:PORT (or the unix socket PATH), takes one request
at a time per connection, keeps the connection after a request whose
BEGIN_REQUEST had FCGI_KEEP_CONN (else closes it, as the specification
says), and answers
by the GN_SCRIPT param, else SCRIPT_NAME:

  /echo         200: every param as "NAME=VALUE" lines, sorted, then
                "stdin=LENGTH:MD5" of the STDIN it read
  /size/N       N bytes of a pattern (byte i is "0123456789"[i % 10]),
                no Content-Length, in STDOUT records of varied sizes
  /length/N     the same with "Content-Length: N"
  /short        "Content-Length: 100" and 10 bytes, then the end
  /long         "Content-Length: 5" and 10 bytes
  /split        a head and a body sent one byte per STDOUT record,
                each record padded
  /stderr       "STDERR-MARK NAME" on STDERR, then a 200
  /status/NNN   "Status: NNN" with a short body
  /location     "Location: /elsewhere", no Status
  /id           "NAME\n"
  /stats        "conns=C requests=R open=O\n"
  /garbage      bytes that are no FastCGI record
  /nohead       STDOUT that is no CGI head, then the end
  /noout        END_REQUEST with no STDOUT at all
  /overloaded   END_REQUEST with protocolStatus FCGI_OVERLOADED
  /cut          a head and half a body, then the connection closed
  /silent       reads the request, never answers
  /delay/MS/X   waits MS ms, then answers /X
  /stdintime    "stdin_ms=T len=L md5=M": the ms from the end of PARAMS
                to the end of STDIN, its length and MD5

Exits on SIGTERM, or after 15 minutes. Standard library only.
"""

import asyncio
import hashlib
import os
import signal
import struct
import sys
import time

PATTERN = b"0123456789"
BEGIN, END, PARAMS, STDIN, STDOUT, STDERR = 1, 3, 4, 5, 6, 7


def pattern(n):
    return (PATTERN * (n // 10 + 1))[:n]


def record(rtype, content=b"", pad=None, rid=1):
    if pad is None:
        pad = (8 - len(content) % 8) % 8
    return (struct.pack(">BBHHBB", 1, rtype, rid, len(content), pad, 0)
            + content + b"\0" * pad)


def stream(rtype, data, sizes=(65535,)):
    """data in records of the sizes given, in turn, then none."""
    out, i, k = [], 0, 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        out.append(record(rtype, data[i:i + n]))
        i += n
        k += 1
    return b"".join(out)


def end_request(app=0, proto=0):
    return record(END, struct.pack(">IB3x", app, proto))


def params_of(data):
    params, i = {}, 0

    def length():
        nonlocal i
        if data[i] < 128:
            i += 1
            return data[i - 1]
        v = struct.unpack(">I", data[i:i + 4])[0] & 0x7fffffff
        i += 4
        return v

    while i < len(data):
        nl = length()
        vl = length()
        name = data[i:i + nl]
        i += nl
        params[name.decode("latin-1")] = data[i:i + vl].decode("latin-1")
        i += vl
    return params


class Responder:
    def __init__(self, name):
        self.name = name
        self.conns = 0
        self.requests = 0
        self.open = 0

    async def read_record(self, reader):
        head = await reader.readexactly(8)
        _, rtype, rid, clen, pad, _ = struct.unpack(">BBHHBB", head)
        content = await reader.readexactly(clen)
        await reader.readexactly(pad)
        return rtype, rid, content

    async def read_request(self, reader):
        keep, params, stdin = False, b"", b""
        start = time.monotonic()
        params_done = stdin_done = False
        while not (params_done and stdin_done):
            rtype, rid, content = await self.read_record(reader)
            if rtype == BEGIN:
                keep = bool(content[2] & 1)
            elif rtype == PARAMS:
                if content:
                    params += content
                else:
                    params_done = True
                    start = time.monotonic()
            elif rtype == STDIN:
                if content:
                    stdin += content
                else:
                    stdin_done = True
        self.stdin_ms = int((time.monotonic() - start) * 1000)
        return keep, params_of(params), stdin

    def respond(self, script, params, stdin):
        """(bytes to send, then close?) for a request."""
        body = None
        if script == "/echo":
            lines = ["%s=%s" % (k, params[k]) for k in sorted(params)]
            lines.append("stdin=%d:%s" % (len(stdin),
                                          hashlib.md5(stdin).hexdigest()))
            body = ("\n".join(lines) + "\n").encode("latin-1")
            return (stream(STDOUT, b"Content-Type: text/plain\r\n\r\n"
                           + body) + record(STDOUT) + end_request(), False)
        if script.startswith("/size/"):
            data = pattern(int(script[6:]))
            return (stream(STDOUT, b"Content-Type: text/plain\r\n\r\n")
                    + stream(STDOUT, data, (1000, 65535, 7, 30000))
                    + record(STDOUT) + end_request(), False)
        if script.startswith("/length/"):
            n = int(script[8:])
            return (stream(STDOUT, b"Content-Length: %d\r\n\r\n" % n
                           + pattern(n)) + record(STDOUT) + end_request(),
                    False)
        if script == "/short":
            return (stream(STDOUT, b"Content-Length: 100\r\n\r\n"
                           + pattern(10)) + record(STDOUT) + end_request(),
                    False)
        if script == "/long":
            return (stream(STDOUT, b"Content-Length: 5\r\n\r\n"
                           + pattern(10)) + record(STDOUT) + end_request(),
                    False)
        if script == "/split":
            data = b"Status: 201\r\nX-Split: yes\r\n\r\n" + pattern(50)
            return (b"".join(record(STDOUT, data[i:i + 1], pad=7)
                             for i in range(len(data)))
                    + record(STDOUT) + end_request(), False)
        if script == "/stderr":
            return (record(STDERR, b"STDERR-MARK " + self.name.encode())
                    + record(STDERR)
                    + stream(STDOUT, b"Content-Type: text/plain\r\n\r\nok\n")
                    + record(STDOUT) + end_request(), False)
        if script.startswith("/status/"):
            return (stream(STDOUT, b"Status: %s Whatever\r\n"
                           b"Content-Type: text/plain\r\n\r\nstatus\n"
                           % script[8:].encode())
                    + record(STDOUT) + end_request(), False)
        if script == "/location":
            return (stream(STDOUT, b"Location: /elsewhere\r\n\r\n")
                    + record(STDOUT) + end_request(), False)
        if script == "/stdintime":
            body = ("stdin_ms=%d len=%d md5=%s\n"
                    % (self.stdin_ms, len(stdin),
                       hashlib.md5(stdin).hexdigest())).encode()
        if script == "/id":
            body = (self.name + "\n").encode()
        if script == "/stats":
            body = ("conns=%d requests=%d open=%d\n"
                    % (self.conns, self.requests, self.open)).encode()
        if body is not None:
            return (stream(STDOUT, b"Content-Type: text/plain\r\n\r\n"
                           + body) + record(STDOUT) + end_request(), False)
        if script == "/garbage":
            return (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", True)
        if script == "/nohead":
            return (stream(STDOUT, b"<html>no head here\n\n")
                    + record(STDOUT) + end_request(), False)
        if script == "/noout":
            return (end_request(), False)
        if script == "/overloaded":
            return (end_request(0, 2), False)
        if script == "/cut":
            return (stream(STDOUT, b"Content-Type: text/plain\r\n\r\n"
                           + pattern(5000)), True)
        return (stream(STDOUT, b"Status: 404\r\n\r\nno such script\n")
                + record(STDOUT) + end_request(), False)

    async def serve(self, reader, writer):
        self.conns += 1
        self.open += 1
        try:
            while True:
                try:
                    keep, params, stdin = await self.read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests += 1
                script = params.get("GN_SCRIPT",
                                    params.get("SCRIPT_NAME", ""))
                if script == "/silent":
                    await reader.read()
                    return
                if script.startswith("/delay/"):
                    _, _, ms, rest = script.split("/", 3)
                    await asyncio.sleep(int(ms) / 1000)
                    script = "/" + rest
                out, close = self.respond(script, params, stdin)
                writer.write(out)
                await writer.drain()
                if close or not keep:
                    return
        finally:
            self.open -= 1
            try:
                writer.close()
            except Exception:
                pass


async def main():
    where, name = sys.argv[1], sys.argv[2]
    responder = Responder(name)
    if where.startswith("unix:"):
        server = await asyncio.start_unix_server(responder.serve, where[5:])
        os.chmod(where[5:], 0o666)
    else:
        server = await asyncio.start_server(responder.serve, "127.0.0.1",
                                            int(where))
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    loop.call_later(900, lambda: stop.done() or stop.set_result(None))
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main())
