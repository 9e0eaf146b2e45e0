#!/usr/bin/env python3
"""A small HTTP/1.1 backend for the proxy tests (t/integ/100-proxy.t).

    backend.py PORT NAME [CERT KEY]

Listens on 127.0.0.1:PORT (over TLS with CERT and KEY), keeps connections alive as HTTP/1.1 allows,
reads request bodies by Content-Length or chunked, and answers by path:

  .../echo...        200, the request as seen: its request line, its
                     fields (one per line, as received), and its body
  /size/N            N bytes (a pattern: byte i is "0123456789"[i % 10]),
                     with Content-Length
  /chunked/N         the same N bytes, chunked in pieces of up to 1000
  /close/N           the same N bytes, no length: ends with the close
  /text/N, /textchunked/N
                     as /size/N and /chunked/N, as text/plain
  /coded/N           as /text/N, with "Content-Encoding: x-test"
  /notransform/N     as /text/N, with "Cache-Control: no-transform"
  /tagged/N          as /text/N, with 'ETag: "t1"' and "Accept-Ranges: bytes"
  /id                "NAME\n" (which backend answered)
  /status/NNN        NNN with a short body
  /delay/MS/rest     waits MS ms, then answers /rest
  /cut/N             promises 2N bytes, sends N, closes
  /extra             promises 5 bytes, sends 10
  /garble            a response head that is not one
  /silent            reads the request, never answers
  /drop              reads the request, closes without answering
  /redirect/PATH     302 to http://HOST/PATH, HOST its Host field
  /stats             "conns=C requests=R open=O\n": connections accepted
                     and requests read since the start, connections
                     open now
  /ws                with "Upgrade: websocket": 101 and the RFC 6455
                     handshake, a first text frame "hello from NAME",
                     then every frame echoed back until a close frame
  /ws101             a 101 nobody asked for
  /tls               "reused=0|1 sni=NAME": whether this TLS connection
                     resumed a session, and the name the client sent
  /hopresp           200 with "Connection: keep-alive, X-Private", an
                     X-Private field (hop-by-hop by that) and X-Public
  /bodytime          "body_ms=T len=L md5=M chunked=0|1": the ms from
                     the end of the request head to the end of its body,
                     the body's length and MD5, whether it came chunked

Exits on SIGTERM, or after 15 minutes. Standard library only.
"""

import asyncio
import base64
import hashlib
import resource
import signal
import ssl
import sys
import time

PATTERN = b"0123456789"


def pattern(n):
    return (PATTERN * (n // 10 + 1))[:n]


def ws_frame(data, opcode=1):
    """A server's WebSocket frame (unmasked, FIN set)."""
    n = len(data)
    if n < 126:
        head = bytes([0x80 | opcode, n])
    elif n < 65536:
        head = bytes([0x80 | opcode, 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 127]) + n.to_bytes(8, "big")
    return head + data


class Backend:
    def __init__(self, name):
        self.name = name
        self.conns = 0
        self.requests = 0
        self.open = 0
        self.sni = {}

    async def read_request(self, reader):
        head = await reader.readuntil(b"\r\n\r\n")
        start = time.monotonic()
        lines = head[:-4].split(b"\r\n")
        method, target, _ = lines[0].split(b" ", 2)
        fields = []
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            fields.append((name.strip(), value.strip()))
        body = b""
        length = None
        chunked = False
        for name, value in fields:
            if name.lower() == b"content-length":
                length = int(value)
            if name.lower() == b"transfer-encoding":
                chunked = value.lower() == b"chunked"
        if chunked:
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0],
                           16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    break
                body += await reader.readexactly(size)
                await reader.readexactly(2)
        elif length:
            body = await reader.readexactly(length)
        self.body_ms = int((time.monotonic() - start) * 1000)
        self.body_chunked = int(chunked)
        return method, target, fields, body, head

    @staticmethod
    def response(status, body, fields=(), length=True):
        out = b"HTTP/1.1 %d X\r\n" % status
        for name, value in fields:
            out += name + b": " + value + b"\r\n"
        if length:
            out += b"Content-Length: %d\r\n" % len(body)
        return out + b"\r\n" + body

    async def answer(self, method, target, fields, body, head, writer,
                     reader):
        """Writes the answer; returns False when the connection ends."""
        path = target.split(b"?")[0].decode()
        parts = path.split("/")
        host = b""
        for name, value in fields:
            if name.lower() == b"host":
                host = value
        bodiless = method == b"HEAD"

        def send(data):
            if bodiless:
                data = data.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n"
            writer.write(data)

        if path.startswith("/delay/"):
            await asyncio.sleep(int(parts[2]) / 1000)
            target = ("/" + "/".join(parts[3:])).encode()
            return await self.answer(method, target, fields, body, head,
                                     writer, reader)
        if path == "/hopresp":
            send(self.response(200, b"hop\n",
                               [(b"Connection", b"keep-alive, X-Private"),
                                (b"X-Private", b"secret"),
                                (b"X-Public", b"ok")]))
        elif path == "/bodytime":
            send(self.response(200, b"body_ms=%d len=%d md5=%s chunked=%d\n"
                               % (self.body_ms, len(body),
                                  hashlib.md5(body).hexdigest().encode(),
                                  self.body_chunked)))
        elif "/echo" in path:
            send(self.response(200, head + body,
                               [(b"Content-Type", b"text/plain")]))
        elif path.startswith("/size/"):
            send(self.response(200, pattern(int(parts[2]))))
        elif path.startswith("/text/"):
            send(self.response(200, pattern(int(parts[2])),
                               [(b"Content-Type", b"text/plain")]))
        elif path.startswith("/coded/"):
            send(self.response(200, pattern(int(parts[2])),
                               [(b"Content-Type", b"text/plain"),
                                (b"Content-Encoding", b"x-test")]))
        elif path.startswith("/tagged/"):
            send(self.response(200, pattern(int(parts[2])),
                               [(b"Content-Type", b"text/plain"),
                                (b"ETag", b'"t1"'),
                                (b"Accept-Ranges", b"bytes")]))
        elif path.startswith("/notransform/"):
            send(self.response(200, pattern(int(parts[2])),
                               [(b"Content-Type", b"text/plain"),
                                (b"Cache-Control", b"no-transform")]))
        elif path.startswith("/chunked/") or path.startswith("/textchunked/"):
            data = pattern(int(parts[2]))
            out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
            if path.startswith("/text"):
                out += b"Content-Type: text/plain\r\n"
            out += b"\r\n"
            for i in range(0, len(data), 1000):
                piece = data[i:i + 1000]
                out += b"%x\r\n" % len(piece) + piece + b"\r\n"
            send(out + b"0\r\n\r\n")
        elif path.startswith("/close/"):
            send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
                 + pattern(int(parts[2])))
            return False
        elif path == "/id":
            send(self.response(200, self.name.encode() + b"\n"))
        elif path.startswith("/status/"):
            send(self.response(int(parts[2]), b"status " + parts[2].encode()
                               + b" from " + self.name.encode() + b"\n"))
        elif path.startswith("/cut/"):
            n = int(parts[2])
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                         % (2 * n) + pattern(n))
            return False
        elif path == "/extra":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
                         b"0123456789")
        elif path == "/garble":
            writer.write(b"this is no HTTP response\r\n\r\n")
            return False
        elif path == "/silent":
            await asyncio.sleep(3600)
        elif path == "/drop":
            return False
        elif path.startswith("/redirect/"):
            send(self.response(302, b"", [(b"Location", b"http://" + host
                                           + b"/" + "/".join(parts[2:])
                                           .encode())]))
        elif path == "/stats":
            send(self.response(200, b"conns=%d requests=%d open=%d\n"
                               % (self.conns, self.requests, self.open)))
        elif path == "/ws":
            key = b""
            upgrade = b""
            for name, value in fields:
                if name.lower() == b"sec-websocket-key":
                    key = value
                if name.lower() == b"upgrade":
                    upgrade = value
            if upgrade.lower() != b"websocket":
                send(self.response(400, b"no upgrade asked for\n"))
                return True
            accept = base64.b64encode(hashlib.sha1(
                key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            writer.write(b"HTTP/1.1 101 Switching Protocols\r\n"
                         b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: " + accept + b"\r\n"
                         b"X-Backend: " + self.name.encode() + b"\r\n\r\n"
                         + ws_frame(b"hello from " + self.name.encode()))
            await self.ws_echo(reader, writer)
            return False
        elif path == "/tls":
            ssl_obj = writer.get_extra_info("ssl_object")
            send(self.response(200, b"reused=%d sni=%s\n" % (
                int(bool(ssl_obj and ssl_obj.session_reused)),
                self.sni.get(id(ssl_obj), "-").encode())))
        elif path == "/ws101":
            writer.write(b"HTTP/1.1 101 Switching Protocols\r\n"
                         b"Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            return False
        else:
            send(self.response(404, b"no such path\n"))
        return True

    @staticmethod
    async def ws_echo(reader, writer):
        """Echoes every frame's payload back, unmasked, until a close."""
        while True:
            try:
                b0, b1 = await reader.readexactly(2)
                n = b1 & 0x7f
                if n == 126:
                    n = int.from_bytes(await reader.readexactly(2), "big")
                elif n == 127:
                    n = int.from_bytes(await reader.readexactly(8), "big")
                mask = await reader.readexactly(4) if b1 & 0x80 else b"\0" * 4
                data = bytearray(await reader.readexactly(n))
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            for i in range(n):
                data[i] ^= mask[i % 4]
            if b0 & 0x0f == 8:
                writer.write(ws_frame(bytes(data), 8))
                await writer.drain()
                return
            writer.write(ws_frame(bytes(data), b0 & 0x0f))
            await writer.drain()

    async def serve(self, reader, writer):
        self.conns += 1
        self.open += 1
        try:
            while True:
                try:
                    req = await self.read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError,
                        ValueError):
                    break
                self.requests += 1
                if not await self.answer(*req, writer, reader):
                    break
                await writer.drain()
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            self.open -= 1
            writer.close()


async def main():
    port, name = int(sys.argv[1]), sys.argv[2]
    backend = Backend(name)
    ctx = None
    if len(sys.argv) > 4:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])

        def sni(sslobj, server_name, _ctx):
            backend.sni[id(sslobj)] = server_name or "-"
        ctx.sni_callback = sni
    # many proxied clients at once: as many descriptors as allowed, a
    # backlog that holds a burst of connects
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = await asyncio.start_server(backend.serve, "127.0.0.1", port,
                                        reuse_address=True, ssl=ctx,
                                        backlog=4096)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    # a test that died without stopping it: gone in 15 minutes anyway
    loop.call_later(900, lambda: stop.done() or stop.set_result(None))
    print("ready", flush=True)
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main())
