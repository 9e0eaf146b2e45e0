#!/usr/bin/python3
"""Raw HTTP/2 frames for the tests (t/integ/9*-http2*.t): sends what a
case says, valid or not, and prints what the server answered, one event
per line:

    STATUS <stream> <code>          a response head
    DATA <stream> <bytes>           body bytes of a stream (summed)
    END <stream>                    its END_STREAM
    RST <stream> <error name>       RST_STREAM
    GOAWAY <last stream> <error>    GOAWAY
    CLOSED                          the server closed the connection
    TIMEOUT                         nothing more within the time limit

Usage: h2raw.py [--tls] [--host H] PORT CASE [ARG]
Cases are the functions named case_*; each sends its frames and then,
where it makes sense, a valid request on the next stream, so that a test
sees whether the connection survived a stream error.
"""

import socket
import ssl
import sys
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame,
                              GoAwayFrame, HeadersFrame, PingFrame,
                              PriorityFrame, RstStreamFrame, SettingsFrame,
                              WindowUpdateFrame)

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
ERRORS = ['NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR',
          'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT', 'STREAM_CLOSED',
          'FRAME_SIZE_ERROR', 'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR',
          'CONNECT_ERROR', 'ENHANCE_YOUR_CALM', 'INADEQUATE_SECURITY',
          'HTTP_1_1_REQUIRED']


def err_name(code):
    return ERRORS[code] if code < len(ERRORS) else str(code)


class Conn:
    def __init__(self, port, tls, host):
        s = socket.create_connection((host, port), timeout=10)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(['h2'])
            s = ctx.wrap_socket(s, server_hostname='localhost')
        self.s = s
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.buf = b''
        self.data = {}
        self.body = {}
        self.out = []
        self.closed = False
        self.no_window = False
        self.no_ack = False
        self.show_body = False

    def send(self, *frames):
        """The frames in one write (a server reads them together)."""
        try:
            self.s.sendall(b''.join(f if isinstance(f, bytes)
                                    else f.serialize() for f in frames))
        except OSError:
            self.closed = True

    def start(self, settings=None):
        self.send(PREFACE, SettingsFrame(0, settings=settings or {}))

    def headers(self, sid, fields, end=True, raw=False):
        block = self.enc.encode(fields) if not raw else fields
        f = HeadersFrame(sid, block)
        f.flags.add('END_HEADERS')
        if end:
            f.flags.add('END_STREAM')
        return f

    def get(self, sid, path='/index.html', extra=(), end=True):
        return self.headers(sid, [(':method', 'GET'), (':scheme', 'http'),
                                  (':authority', 'localhost'),
                                  (':path', path)] + list(extra), end)

    def emit(self, line):
        print(line, flush=True)
        self.out.append(line)

    def frames(self):
        """The complete frames in the buffer, taken out of it."""
        while len(self.buf) >= 9:
            f, length = Frame.parse_frame_header(self.buf[:9])
            if len(self.buf) < 9 + length:
                return
            f.parse_body(memoryview(self.buf[9:9 + length]))
            self.buf = self.buf[9 + length:]
            yield f

    def read(self, until, timeout=5.0):
        """Reads frames, printing events, until until(line) is true for
        an event, the connection closes, or the time is up."""
        end = time.time() + timeout
        while True:
            for f in self.frames():
                for line in self.event(f):
                    self.emit(line)
                    if until(line):
                        return line
            left = end - time.time()
            if left <= 0:
                self.emit('TIMEOUT')
                return 'TIMEOUT'
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                self.emit('TIMEOUT')
                return 'TIMEOUT'
            except (ConnectionResetError, ssl.SSLError, OSError):
                chunk = b''
            if not chunk:
                self.closed = True
                self.emit('CLOSED')
                return 'CLOSED'
            self.buf += chunk

    def event(self, f):
        if isinstance(f, SettingsFrame):
            if 'ACK' not in f.flags and not self.no_ack:
                self.send(SettingsFrame(0, flags=['ACK']))
            return []
        if isinstance(f, PingFrame):
            return []
        if isinstance(f, HeadersFrame):
            lines = []
            for k, v in self.dec.decode(f.data):
                if k == ':status':
                    lines.append('STATUS %d %s' % (f.stream_id, v))
            if 'END_STREAM' in f.flags:
                lines.append('END %d' % f.stream_id)
            return lines
        if isinstance(f, DataFrame):
            self.data[f.stream_id] = self.data.get(f.stream_id, 0) \
                + len(f.data)
            b = self.body.get(f.stream_id, b'')
            if len(b) < 4096:
                self.body[f.stream_id] = b + bytes(f.data[:4096 - len(b)])
            if f.flow_controlled_length and not self.no_window:
                self.send(WindowUpdateFrame(0, f.flow_controlled_length),
                          WindowUpdateFrame(f.stream_id,
                                            f.flow_controlled_length))
            if 'END_STREAM' in f.flags:
                lines = ['DATA %d %d' % (f.stream_id, self.data[f.stream_id])]
                if self.show_body:
                    lines.append('BODY %d %r' % (f.stream_id,
                                                 self.body[f.stream_id]))
                return lines + ['END %d' % f.stream_id]
            return []
        if isinstance(f, RstStreamFrame):
            return ['RST %d %s' % (f.stream_id, err_name(f.error_code))]
        if isinstance(f, GoAwayFrame):
            return ['GOAWAY %d %s' % (f.last_stream_id,
                                      err_name(f.error_code))]
        return []


def ends(sid):
    return lambda l: (l == 'END %d' % sid or l.startswith('RST %d ' % sid)
                      or l.startswith('GOAWAY'))


def goaway(l):
    return l.startswith('GOAWAY')


def read_all(c, n, timeout, stop_on_goaway=True):
    """Reads until n streams have ended (END or RST), or a GOAWAY."""
    done = set()

    def all_done(l):
        p = l.split()
        if p[0] in ('END', 'RST'):
            done.add(int(p[1]))
        return len(done) == n or (stop_on_goaway and goaway(l))
    c.read(all_done, timeout)


def then_ok(c, sid):
    """A valid request on stream sid: the connection still serves."""
    c.send(c.get(sid))
    c.read(ends(sid))


# ---- cases -----------------------------------------------------------------

def case_get(c, arg):
    c.send(c.get(1, arg or '/index.html'))
    c.read(ends(1))


def case_bad_preface(c, arg):
    c.send(b'PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n', SettingsFrame(0))
    c.read(lambda l: False, 3)


def case_closed_stream(c, arg):
    c.send(c.get(1))
    c.read(ends(1))
    c.send(DataFrame(1, b'late', flags=['END_STREAM']))
    c.read(lambda l: l.startswith('RST 1') or goaway(l), 3)
    if not c.closed and not any(goaway(l) for l in c.out):
        then_ok(c, 3)


def bad_headers(c, fields):
    c.send(c.headers(1, [(':method', 'GET'), (':scheme', 'http'),
                         (':authority', 'localhost')] + fields))
    c.read(ends(1))
    if not c.closed and not any(goaway(l) for l in c.out):
        then_ok(c, 3)


def case_pseudo_unknown(c, arg):
    bad_headers(c, [(':path', '/index.html'), (':foo', 'bar')])


def case_pseudo_after(c, arg):
    bad_headers(c, [('accept', '*/*'), (':path', '/index.html')])


def case_pseudo_missing(c, arg):
    bad_headers(c, [])


def case_uppercase(c, arg):
    bad_headers(c, [(':path', '/index.html'), ('Accept', '*/*')])


def case_connection(c, arg):
    bad_headers(c, [(':path', '/index.html'), ('connection', 'keep-alive')])


def case_transfer_encoding(c, arg):
    bad_headers(c, [(':path', '/index.html'),
                    ('transfer-encoding', 'chunked')])


def case_te_gzip(c, arg):
    bad_headers(c, [(':path', '/index.html'), ('te', 'gzip')])


def case_te_trailers(c, arg):
    bad_headers(c, [(':path', '/index.html'), ('te', 'trailers')])


def case_content_length(c, arg):
    c.send(c.headers(1, [(':method', 'POST'), (':scheme', 'http'),
                         (':authority', 'localhost'), (':path', arg or '/'),
                         ('content-length', '10')], end=False),
           DataFrame(1, b'12345', flags=['END_STREAM']))
    c.read(ends(1))
    if not c.closed and not any(goaway(l) for l in c.out):
        then_ok(c, 3)


def case_window_overflow(c, arg):
    c.send(WindowUpdateFrame(0, 0x7fffffff))
    c.read(goaway, 3)


def case_settings_push(c, arg):
    c.send(SettingsFrame(0, settings={SettingsFrame.ENABLE_PUSH: 2}))
    c.read(goaway, 3)


def case_settings_window(c, arg):
    c.send(SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE:
                                      0x80000000}))
    c.read(goaway, 3)


def case_streams(c, arg, path='/index.html'):
    """arg requests for path at once on one connection."""
    n = int(arg or 10)
    for i in range(n):
        c.send(c.get(1 + 2 * i, path))
    last = 1 + 2 * (n - 1)
    read_all(c, n, 10)


# ---- attacks: each ends with what the server did about it -------------------

def flood(c, frames, n):
    """n frames as fast as the socket takes them, the server's answers
    read meanwhile (so that its ACKs do not fill our socket)."""
    batch = b''.join(f.serialize() for f in frames)
    sent = 0
    c.s.setblocking(False)
    try:
        while sent < n and not c.closed:
            try:
                c.s.sendall(batch)
            except (BlockingIOError, ssl.SSLWantWriteError):
                pass
            except OSError:
                break
            sent += len(frames)
            try:
                chunk = c.s.recv(65536)
                if chunk == b'':
                    break
                c.buf += chunk
            except (BlockingIOError, ssl.SSLWantReadError):
                pass
            except OSError:
                break
    finally:
        c.s.setblocking(True)
    c.read(lambda l: goaway(l), 5)


def case_ping_flood(c, n=None):
    flood(c, [PingFrame(0, b'12345678')], int(n or 5000))


def case_settings_flood(c, n=None):
    flood(c, [SettingsFrame(0)], int(n or 5000))


def case_priority_flood(c, n=None):
    flood(c, [PriorityFrame(1, depends_on=0, stream_weight=16)],
          int(n or 5000))


def case_empty_data_flood(c, n=None):
    c.send(c.headers(1, [(':method', 'POST'), (':scheme', 'http'),
                         (':authority', 'localhost'), (':path', '/'),
                         ('content-length', '1')], end=False))
    flood(c, [DataFrame(1, b'')], int(n or 5000))


def case_rapid_reset(c, n=None, path='/index.html'):
    """HEADERS then RST_STREAM at once, n times (CVE-2023-44487)."""
    frames = []
    try:
        for i in range(int(n or 5000)):
            frames += [c.get(1 + 2 * i, path), RstStreamFrame(1 + 2 * i, 8)]
            if len(frames) >= 200:
                c.send(*frames)
                frames = []
        c.send(*frames)
    except OSError:
        pass
    c.read(goaway, 5)


def case_reset_some(c, n=None, path='/index.html', delay=None):
    """n requests, reset after delay seconds (under the flood limits):
    their work is to be cancelled; then a valid request."""
    n = int(n or 20)
    for i in range(n):
        c.send(c.get(1 + 2 * i, path))
    if delay:
        c.read(lambda l: False, float(delay))
    for i in range(n):
        c.send(RstStreamFrame(1 + 2 * i, 8))
    then_ok(c, 1 + 2 * n)


def case_continuation_flood(c, n=None):
    """HEADERS without END_HEADERS and CONTINUATION frames that never end
    the block (CVE-2024-28182)."""
    block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'),
                          (':authority', 'localhost'), (':path', '/')])
    f = HeadersFrame(1, block)
    c.send(f)
    junk = c.enc.encode([('x-junk', 'j' * 100)])
    try:
        for i in range(int(n or 1000)):
            c.send(ContinuationFrame(1, junk))
    except OSError:
        pass
    if not c.closed:
        c.read(goaway, 5)


def case_hpack_bomb(c, n=None):
    """One 4000-byte field put in the dynamic table, then referenced by
    its one-byte index n times in the same head: a small header block
    that decodes to n * 4 KB."""
    e = hpack.Encoder()
    first = e.encode([(':method', 'GET'), (':scheme', 'http'),
                      (':authority', 'localhost'), (':path', '/index.html'),
                      ('x-bomb', 'A' * 4000)])
    block = first + b'\xbe' * int(n or 2000)      # index 62: x-bomb
    c.enc = e                                     # the table it built
    f = HeadersFrame(1, block[:16000], flags=['END_STREAM'])
    c.send(f)
    rest = block[16000:]
    while rest:
        cf = ContinuationFrame(1, rest[:16000])
        rest = rest[16000:]
        if not rest:
            cf.flags.add('END_HEADERS')
        c.send(cf)
    if 'END_HEADERS' not in f.flags and len(block) <= 16000:
        c.send(ContinuationFrame(1, b'', flags=['END_HEADERS']))
    c.read(ends(1))
    if not c.closed and not any(goaway(l) for l in c.out):
        then_ok(c, 3)


def case_zero_window(c, path='/big.txt', wait=None):
    """A window of 0 that is never opened: the response waits, and the
    server's send timeout ends it."""
    c.no_window = True
    c.send(SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}))
    c.send(c.get(1, path))
    end = time.time() + float(wait or 10)
    while time.time() < end:
        l = c.read(lambda l: l.startswith('RST') or goaway(l)
                   or l == 'CLOSED', end - time.time())
        if l in ('CLOSED', 'TIMEOUT'):
            break


def case_idle(c, wait=None, path='/index.html'):
    """One request, then nothing: the keep-alive timeout's (or a
    drain's) GOAWAY, then the close."""
    c.send(c.get(1, path))
    c.read(ends(1))
    c.read(lambda l: l == 'CLOSED', float(wait or 10))


def case_headers_stall(c, wait=None):
    """A head that never ends (no END_HEADERS, no CONTINUATION)."""
    block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'),
                          (':authority', 'localhost'), (':path', '/')])
    c.no_ack = True              # nothing may come between the frames
    c.send(HeadersFrame(1, block))
    c.read(lambda l: l == 'CLOSED', float(wait or 10))


def case_fairness(c, big='/big.bin', small='/index.html', n=None):
    """One big response, then n small ones on the same connection: in
    which order they end (the small ones must not wait for the big)."""
    n = int(n or 20)
    c.send(SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE:
                                      1 << 24}),
           WindowUpdateFrame(0, 1 << 24))
    c.send(c.get(1, big))
    for i in range(n):
        c.send(c.get(3 + 2 * i, small))
    read_all(c, n + 1, 60)


def case_post_stream(c, path='/', size=None, sid=1, conn_w=65535):
    """A body of size bytes without Content-Length, sent as the server's
    windows allow; then the answer."""
    size = int(size or 100000)
    c.send(c.headers(sid, [(':method', 'POST'), (':scheme', 'http'),
                           (':authority', 'localhost'), (':path', path)],
                     end=False))
    stream_w = 65535
    sent = 0
    chunk = b'p' * 16384
    while sent < size and not c.closed:
        n = min(16384, size - sent, conn_w, stream_w)
        if n <= 0:
            # wait for WINDOW_UPDATEs (or the answer)
            c.s.settimeout(5)
            try:
                data = c.s.recv(65536)
            except OSError:
                data = b''
            if not data:
                c.emit('CLOSED')
                return
            c.buf += data
            for f in c.frames():
                if isinstance(f, WindowUpdateFrame):
                    if f.stream_id == 0:
                        conn_w += f.window_increment
                    elif f.stream_id == sid:
                        stream_w += f.window_increment
                    continue
                for line in c.event(f):
                    c.emit(line)
                    if line.startswith(('STATUS %d' % sid, 'RST %d' % sid,
                                        'GOAWAY')):
                        c.read(ends(sid), 5)
                        return
            continue
        last = sent + n == size
        c.send(DataFrame(sid, chunk[:n],
                         flags=['END_STREAM'] if last else []))
        sent += n
        conn_w -= n
        stream_w -= n
    c.emit('SENT %d' % sent)
    c.read(ends(sid), 10)


def case_window_leak(c, n=None, path='/index.html', then='/'):
    """n requests with a 60000-byte body their handler never reads, then
    a body of 200000 bytes: the connection's window must have come back
    (1 MiB is 17 such bodies)."""
    n = int(n or 20)
    body = b'w' * 60000
    for i in range(n):
        sid = 1 + 2 * i
        c.send(c.headers(sid, [(':method', 'GET'), (':scheme', 'http'),
                               (':authority', 'localhost'), (':path', path),
                               ('content-length', '60000')], end=False))
        c.send(DataFrame(sid, body[:16384]), DataFrame(sid, body[16384:32768]),
               DataFrame(sid, body[32768:49152]),
               DataFrame(sid, body[49152:], flags=['END_STREAM']))
        c.read(ends(sid), 10)
    # what the server gave back: WINDOW_UPDATEs were read (and dropped) by
    # read(); start the next body from the window the server announced
    case_post_stream(c, then, 200000, 1 + 2 * n, 1 << 20)


def case_many_then_goaway(c, n=None, path='/index.html'):
    """n requests in one write (to a server whose keepalive_requests is
    smaller): those past its GOAWAY are refused, not run."""
    n = int(n or 5)
    c.send(*[c.get(1 + 2 * i, '%s?s=%d' % (path, 1 + 2 * i))
             for i in range(n)])
    read_all(c, n, 10, False)


def case_small_window(c, n=None, path='/big.txt'):
    """n downloads at once with a 16 KiB window that the client opens as
    it reads."""
    n = int(n or 3)
    c.send(SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE:
                                      16384}))
    c.send(*[c.get(1 + 2 * i, path) for i in range(n)])
    read_all(c, n, 20, False)
    c.read(lambda l: l == 'CLOSED', 5)


def case_cookies(c, path='/'):
    """Cookie crumbs in three fields (RFC 9113 8.2.3)."""
    c.show_body = True
    c.send(c.get(1, path, [('cookie', 'a=1'), ('accept', '*/*'),
                           ('cookie', 'b=2'), ('cookie', 'c=3')]))
    c.read(ends(1))


def case_host_differs(c, path='/index.html'):
    c.send(c.get(1, path, [('host', 'other.example')]))
    c.read(ends(1))
    then_ok(c, 3)


def case_expect(c, path='/'):
    """Expect: 100-continue: the body goes only after the 100."""
    c.show_body = True
    c.send(c.headers(1, [(':method', 'POST'), (':scheme', 'http'),
                         (':authority', 'localhost'), (':path', path),
                         ('content-length', '5'),
                         ('expect', '100-continue')], end=False))
    l = c.read(lambda l: l.startswith(('STATUS 1', 'RST 1', 'GOAWAY')), 5)
    if l == 'STATUS 1 100':
        c.send(DataFrame(1, b'hello', flags=['END_STREAM']))
        c.read(ends(1))


def main():
    args = sys.argv[1:]
    tls = False
    host = '127.0.0.1'
    settings = None
    while args and args[0].startswith('--'):
        opt = args.pop(0)
        if opt == '--tls':
            tls = True
        elif opt == '--host':
            host = args.pop(0)
    port, case = int(args[0]), args[1].replace('-', '_')
    c = Conn(port, tls, host)
    if case != 'bad_preface':
        c.start(settings)
    globals()['case_' + case](c, *(args[2:] or [None]))
    c.s.close()


if __name__ == '__main__':
    main()
