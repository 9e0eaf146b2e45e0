#!/usr/bin/python3
"""tlsraw.py -- a minimal, deliberately misbehaving TLS 1.3 client for tests.

Written from RFC 8446 so that the integration tests can send records a
normal client never sends (fragmented, padded or zero-length handshake
records, odd KeyUpdates, a late ChangeCipherSpec, oversized records, bad
MACs...) and see what the server answers.  It never verifies certificates.

Usage: /usr/bin/python3 t/lib/tlsraw.py --port N [options] ACTION...
(Debian's python3-cryptography is the only non-stdlib module it needs.)

Output: one JSON object per line on stdout, one per event:
  {"ev":"sent","what":...}                 something was written
  {"ev":"hello_retry_request","group":..,"cookie":0|1}
  {"ev":"server_hello","version":"1.3","cipher":"0x1301","group":"x25519"}
                         (for < 1.3 also "downgrade" when the random says so)
  {"ev":"handshake","version":"1.3","cipher":..,"group":..,"hrr":0|1,
   "tickets":N,"alpn":..}                  client Finished sent
  {"ev":"alert","level":1|2,"desc":N,"name":..,"encrypted":0|1}
  {"ev":"data","bytes":N,"text":"first 200 chars"}
  {"ev":"ticket"}                          a NewSessionTicket
  {"ev":"keyupdate","request":0|1}         the server updated its keys
  {"ev":"handshake_msg","type":N,"len":N}  any other handshake message
  {"ev":"record","type":N,"len":N}         a record we could not interpret
  {"ev":"error","msg":..}                  tool-side failure
  and finally one of {"ev":"eof"}, {"ev":"reset"}, {"ev":"timeout","after":S}
  (these three carry "tickets":N too).
Exit status 0 when the tool worked (whatever the server did), 1 when it
could not connect, 2 for usage errors.
"""

import argparse
import codecs
import hashlib
import hmac
import json
import os
import select
import socket
import struct
import sys
import time

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric import ec, x25519, x448
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# content types (RFC 8446 5.1)
CCS, ALERT, HANDSHAKE, APPDATA = 20, 21, 22, 23
# handshake types (4)
CLIENT_HELLO, SERVER_HELLO, NEW_SESSION_TICKET, ENCRYPTED_EXTENSIONS = 1, 2, 4, 8
CERTIFICATE, CERTIFICATE_REQUEST, CERTIFICATE_VERIFY, FINISHED = 11, 13, 15, 20
KEY_UPDATE, MESSAGE_HASH = 24, 254

MAX_PLAIN = 1 << 14
# SHA-256("HelloRetryRequest"): the ServerHello.random of an HRR (4.1.3)
HRR_RANDOM = bytes.fromhex('cf21ad74e59a6111be1d8c021e65b891'
                           'c2a211167abb8c5e079e09e2c8a8339c')

ALERTS = {
    0: 'close_notify', 10: 'unexpected_message', 20: 'bad_record_mac',
    21: 'decryption_failed_RESERVED', 22: 'record_overflow',
    30: 'decompression_failure_RESERVED', 40: 'handshake_failure',
    41: 'no_certificate_RESERVED', 42: 'bad_certificate',
    43: 'unsupported_certificate', 44: 'certificate_revoked',
    45: 'certificate_expired', 46: 'certificate_unknown',
    47: 'illegal_parameter', 48: 'unknown_ca', 49: 'access_denied',
    50: 'decode_error', 51: 'decrypt_error',
    60: 'export_restriction_RESERVED', 70: 'protocol_version',
    71: 'insufficient_security', 80: 'internal_error',
    86: 'inappropriate_fallback', 90: 'user_canceled',
    100: 'no_renegotiation_RESERVED', 109: 'missing_extension',
    110: 'unsupported_extension',
    111: 'certificate_unobtainable_RESERVED', 112: 'unrecognized_name',
    113: 'bad_certificate_status_response',
    114: 'bad_certificate_hash_value_RESERVED', 115: 'unknown_psk_identity',
    116: 'certificate_required', 120: 'no_application_protocol',
}

GROUPS = {'secp256r1': 0x0017, 'secp384r1': 0x0018, 'secp521r1': 0x0019,
          'x25519': 0x001d, 'x448': 0x001e, 'ffdhe2048': 0x0100,
          'ffdhe3072': 0x0101, 'p256': 0x0017, 'p384': 0x0018,
          'p521': 0x0019}
GROUP_NAMES = {v: k for k, v in GROUPS.items() if not k.startswith('p')}
EC_CURVES = {0x0017: ec.SECP256R1, 0x0018: ec.SECP384R1, 0x0019: ec.SECP521R1}

VERSIONS = {'1.3': 0x0304, '1.2': 0x0303, '1.1': 0x0302, '1.0': 0x0301,
            'ssl3': 0x0300}
VERSION_NAMES = {v: k for k, v in VERSIONS.items()}

# TLS 1.3 suites: AEAD, key length, transcript hash
SUITES = {0x1301: (AESGCM, 16, hashlib.sha256),
          0x1302: (AESGCM, 32, hashlib.sha384),
          0x1303: (ChaCha20Poly1305, 32, hashlib.sha256)}
# offered only when --versions lists something below 1.3, so that a
# TLS 1.2 server can actually answer with a ServerHello
LEGACY_SUITES = {0x0303: [0xc02b, 0xc02f, 0xc009, 0xc013],
                 0x0302: [0xc009, 0xc013], 0x0301: [0xc009, 0xc013]}

SIG_ALGS = [0x0403, 0x0804, 0x0401, 0x0807]   # ecdsa p256, pss, pkcs1, ed25519

ACTION_WORDS = {'keyupdate', 'keyupdate-req', 'keyupdate2',
                'keyupdate-bad-len', 'keyupdate-bad-val', 'ccs', 'big-plain',
                'big-cipher', 'bad-mac', 'close', 'shutdown'}


def emit(ev, **kw):
    d = {'ev': ev}
    d.update(kw)
    sys.stdout.write(json.dumps(d) + '\n')
    sys.stdout.flush()


# ---------------------------------------------------------------- encoding

def u8(n):
    return bytes([n])


def u16(n):
    return struct.pack('!H', n)


def vec8(b):
    return u8(len(b)) + b


def vec16(b):
    return u16(len(b)) + b


def ext(etype, data):
    return u16(etype) + vec16(data)


def hs_msg(htype, body):
    return u8(htype) + len(body).to_bytes(3, 'big') + body


def record(ctype, version, payload):
    return struct.pack('!BHH', ctype, version, len(payload)) + payload


def parse_exts(data):
    out, i = {}, 0
    while i + 4 <= len(data):
        t, n = struct.unpack('!HH', data[i:i + 4])
        out[t] = data[i + 4:i + 4 + n]
        i += 4 + n
    return out


# ---------------------------------------------------------- key schedule (7)

def hkdf_extract(h, salt, ikm):
    # an empty HMAC key is the same as Hash.length zero bytes
    return hmac.new(salt, ikm, h).digest()


def hkdf_expand(h, prk, info, n):
    out, t, i = b'', b'', 1
    while len(out) < n:
        t = hmac.new(prk, t + info + u8(i), h).digest()
        out += t
        i += 1
    return out[:n]


def expand_label(h, secret, label, context, n):
    # struct HkdfLabel { uint16 length; opaque label<7..255> = "tls13 "+label;
    #                    opaque context<0..255>; }
    info = u16(n) + vec8(b'tls13 ' + label) + vec8(context)
    return hkdf_expand(h, secret, info, n)


def derive_secret(h, secret, label, transcript):
    return expand_label(h, secret, label, h(transcript).digest(),
                        h().digest_size)


class Protection:
    """One direction's record protection: key, iv, sequence number (5.2-5.3)."""

    def __init__(self, suite, secret):
        self.suite = suite
        self.set(secret)

    def set(self, secret):
        aead, klen, h = SUITES[self.suite]
        self.secret = secret
        self.aead = aead(expand_label(h, secret, b'key', b'', klen))
        self.iv = expand_label(h, secret, b'iv', b'', 12)
        self.seq = 0                          # reset with every new key

    def update(self):
        # application_traffic_secret_N+1 = Expand-Label(N, "traffic upd")
        h = SUITES[self.suite][2]
        self.set(expand_label(h, self.secret, b'traffic upd', b'',
                              h().digest_size))

    def nonce(self):
        # the 64-bit sequence number, left-padded to iv_length, XOR the iv
        seq = self.seq.to_bytes(12, 'big')
        return bytes(a ^ b for a, b in zip(self.iv, seq))

    def seal(self, ctype, content, pad=0):
        # TLSInnerPlaintext = content || type || zeros; the outer header
        # (always type 23, 0x0303) is the additional data
        inner = content + u8(ctype) + bytes(pad)
        hdr = struct.pack('!BHH', APPDATA, 0x0303, len(inner) + 16)
        ct = self.aead.encrypt(self.nonce(), inner, hdr)
        self.seq += 1
        return hdr + ct

    def open(self, hdr, payload):
        inner = self.aead.decrypt(self.nonce(), payload, hdr)
        self.seq += 1
        stripped = inner.rstrip(b'\0')       # the type is the last non-zero
        if not stripped:
            raise ValueError('TLSInnerPlaintext without a content type')
        return stripped[-1], stripped[:-1]


def make_share(gid):
    if gid == 0x001d:
        k = x25519.X25519PrivateKey.generate()
        return k, k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    if gid == 0x001e:
        k = x448.X448PrivateKey.generate()
        return k, k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    if gid in EC_CURVES:
        k = ec.generate_private_key(EC_CURVES[gid]())
        return k, k.public_key().public_bytes(Encoding.X962,
                                              PublicFormat.UncompressedPoint)
    raise ValueError('cannot make a key share for group 0x%04x' % gid)


def shared_secret(gid, priv, peer):
    if gid == 0x001d:
        return priv.exchange(x25519.X25519PublicKey.from_public_bytes(peer))
    if gid == 0x001e:
        return priv.exchange(x448.X448PublicKey.from_public_bytes(peer))
    pub = ec.EllipticCurvePublicKey.from_encoded_point(EC_CURVES[gid](), peer)
    return priv.exchange(ec.ECDH(), pub)


# ------------------------------------------------------------------ client

class Ended(Exception):
    pass


class Client:
    def __init__(self, o, sock):
        self.o = o
        self.sock = sock
        self.rbuf = b''
        self.hsbuf = b''
        self.random = os.urandom(32)
        self.session_id = os.urandom(32)     # middlebox compatibility mode
        self.shares = {}                     # group -> private key
        self.pubs = {}                       # group -> public share
        self.share_groups = list(o.share)    # groups we send shares for
        self.phase = 'raw' if o.hello_hex else 'hello'
        self.rc = self.prev_rc = self.wc = None
        self.hrr = 0
        self.ch1 = self.suite = self.group = self.alpn = None
        self.cookie = None
        self.cert_req = None
        self.ccs_sent = False
        self.tickets = 0
        self.ended = None
        self.collect = None                  # --actions-one-write

    # -- socket

    def end(self, kind, **kw):
        if self.ended is None:
            self.ended = kind
            emit(kind, tickets=self.tickets, **kw)
        raise Ended()

    def send(self, data):
        if self.collect is not None:
            self.collect.append(data)
            return
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            self.end('reset')

    def recv_some(self, deadline):
        t = deadline - time.monotonic()
        if t <= 0:
            return False
        r, _, _ = select.select([self.sock], [], [], t)
        if not r:
            return False
        try:
            d = self.sock.recv(65536)
        except ConnectionResetError:
            self.end('reset')
        if not d:
            if self.rbuf:
                emit('error', msg='eof inside a record (%d bytes buffered)'
                     % len(self.rbuf))
            self.end('eof')
        self.rbuf += d
        return True

    def next_record(self, deadline):
        while True:
            if len(self.rbuf) >= 5:
                n = struct.unpack('!H', self.rbuf[3:5])[0]
                if len(self.rbuf) >= 5 + n:
                    hdr, body = self.rbuf[:5], self.rbuf[5:5 + n]
                    self.rbuf = self.rbuf[5 + n:]
                    return hdr, body
            if not self.recv_some(deadline):
                return None

    def pump(self, seconds, sliding=False, until=None):
        """Read and handle records for `seconds` (from the last record when
        sliding).  True when `until()` became true, False on a timeout."""
        deadline = time.monotonic() + seconds
        while not (until and until()):
            rec = self.next_record(deadline)
            if rec is None:
                return False
            self.dispatch(*rec)
            if sliding:
                deadline = time.monotonic() + seconds
        return True

    # -- sending

    def send_hs(self, msgs, what):
        if self.wc:
            self.send(self.wc.seal(HANDSHAKE, msgs, self.o.record_pad))
        else:
            self.send(record(HANDSHAKE, 0x0303, msgs))
        emit('sent', what=what)

    def send_ccs(self, what='ccs'):
        self.send(record(CCS, 0x0303, b'\x01'))
        self.ccs_sent = True
        emit('sent', what=what)

    def send_hello(self, msg, first):
        o = self.o
        # legacy_record_version may be 0x0301 only in the initial ClientHello
        ver = 0x0301 if first else 0x0303
        n = o.hello_frag or MAX_PLAIN
        recs = []
        for i in range(0, len(msg), n):
            if o.hello_zero:
                # forbidden (5.1: no zero-length handshake fragments)
                recs.append(record(HANDSHAKE, ver, b''))
            recs.append(record(HANDSHAKE, ver, msg[i:i + n]))
        what = 'client_hello' if first else 'client_hello2'
        if first and o.truncate is not None:
            data = b''.join(recs)[:o.truncate]
            self.send(data)
            emit('sent', what=what, bytes=len(data), truncated=1)
            return
        if o.hello_write_each:
            for r in recs:
                self.send(r)
                time.sleep(0.005)
        else:
            self.send(b''.join(recs))
        emit('sent', what=what, bytes=len(msg), records=len(recs))

    def client_hello(self):
        o = self.o
        legacy = min(0x0303, max(o.versions))
        if o.ciphers is not None:
            suites = list(o.ciphers)
        else:
            suites = [0x1301, 0x1302, 0x1303] if 0x0304 in o.versions else []
            for v in sorted(o.versions, reverse=True):
                suites += [s for s in LEGACY_SUITES.get(v, []) if s not in suites]
        if o.fallback_scsv:
            suites.append(0x5600)
        exts = b''
        if o.sni:
            name = o.sni.encode()
            exts += ext(0, vec16(u8(0) + vec16(name)))
        exts += ext(10, vec16(b''.join(u16(g) for g in o.groups)))
        if min(o.versions) < 0x0304:
            exts += ext(11, vec8(b'\x00'))          # ec_point_formats for <=1.2
        exts += ext(13, vec16(b''.join(u16(a) for a in SIG_ALGS)))
        if o.alpn:
            exts += ext(16, vec16(b''.join(vec8(p.encode()) for p in o.alpn)))
        if not o.no_sv:
            exts += ext(43, vec8(b''.join(u16(v) for v in o.versions)))
        if not o.no_psk_modes:
            exts += ext(45, vec8(b'\x01'))           # psk_dhe_ke
        shares = b''
        for g in self.share_groups:
            if g not in self.shares:
                self.shares[g], pub = make_share(g)
                self.pubs[g] = pub
            pub = self.pubs[g]
            if o.bad_share:
                pub = pub[:-1]                       # wrong length for group
            shares += u16(g) + vec16(pub)
        exts += ext(51, vec16(shares))
        if self.cookie is not None:
            exts += ext(44, self.cookie)             # echoed verbatim (4.2.2)

        def body(e):
            return (u16(legacy) + self.random + vec8(self.session_id)
                    + vec16(b''.join(u16(s) for s in suites))
                    + vec8(b'\x00') + vec16(e))
        if o.hello_pad:
            # padding (RFC 7685) last; sized so the whole message ~= SIZE
            need = o.hello_pad - (4 + len(body(exts))) - 4
            need = max(0, min(need, 0xffff - len(exts) - 4))
            exts += ext(21, bytes(need))
        return hs_msg(CLIENT_HELLO, body(exts))

    # -- receiving

    def dispatch(self, hdr, body):
        ctype = hdr[0]
        if ctype == APPDATA and self.rc:
            extra = {}
            try:
                ctype, body = self.rc.open(hdr, body)
            except (InvalidTag, ValueError) as e:
                # the peer may still be using the key before its last
                # change (e.g. an alert encrypted under the handshake key)
                try:
                    if not self.prev_rc:
                        raise e
                    ctype, body = self.prev_rc.open(hdr, body)
                    extra = {'old_key': 1}
                except (InvalidTag, ValueError):
                    emit('error', msg='cannot decrypt a server record '
                         '(%d bytes): %s' % (len(body), type(e).__name__))
                    return
            self.content(ctype, body, 1, extra)
        else:
            self.content(ctype, body, 0, {})

    def content(self, ctype, body, enc, extra):
        if ctype == ALERT:
            if len(body) < 2 or len(body) % 2:
                emit('record', type=ctype, len=len(body), encrypted=enc)
            for i in range(0, len(body) - 1, 2):
                emit('alert', level=body[i], desc=body[i + 1],
                     name=ALERTS.get(body[i + 1], 'unknown'),
                     encrypted=enc, **extra)
        elif ctype == HANDSHAKE:
            self.hsbuf += body
            while len(self.hsbuf) >= 4:
                n = int.from_bytes(self.hsbuf[1:4], 'big')
                if len(self.hsbuf) < 4 + n:
                    break
                msg, self.hsbuf = self.hsbuf[:4 + n], self.hsbuf[4 + n:]
                self.handshake(msg[0], msg[4:], msg)
        elif ctype == CCS and not enc and self.phase in ('hello', 'enc_hs') \
                and body == b'\x01':
            pass                      # middlebox compatibility: drop it (5)
        elif ctype == APPDATA and enc:
            emit('data', bytes=len(body),
                 text=body[:200].decode('latin-1'), **extra)
        else:
            emit('record', type=ctype, len=len(body), encrypted=enc)

    def handshake(self, htype, body, raw):
        if htype == SERVER_HELLO and self.phase in ('hello', 'raw'):
            return self.server_hello(body, raw)
        if self.phase == 'enc_hs':
            return self.encrypted_handshake(htype, body, raw)
        if self.phase == 'app':
            if htype == NEW_SESSION_TICKET:
                self.tickets += 1
                emit('ticket')
                return
            if htype == KEY_UPDATE and len(body) == 1:
                emit('keyupdate', request=body[0])
                # the server switched keys right after this message
                self.prev_rc = None
                self.rc.update()
                if body[0] == 1:
                    # 4.6.3: answer with our own update_not_requested
                    self.send_hs(hs_msg(KEY_UPDATE, b'\x00'),
                                 'keyupdate-reply')
                    self.wc.update()
                return
        emit('handshake_msg', type=htype, len=len(body))

    def server_hello(self, body, raw):
        try:
            legacy = struct.unpack('!H', body[:2])[0]
            srandom = body[2:34]
            sidlen = body[34]
            suite = struct.unpack('!H', body[35 + sidlen:37 + sidlen])[0]
            elen = struct.unpack('!H', body[38 + sidlen:40 + sidlen])[0]
            exts = parse_exts(body[40 + sidlen:40 + sidlen + elen])
        except (IndexError, struct.error):
            emit('error', msg='cannot parse ServerHello')
            self.phase = 'dead'
            return
        version = legacy
        if 43 in exts and len(exts[43]) == 2:
            version = struct.unpack('!H', exts[43])[0]
        vname = VERSION_NAMES.get(version, '0x%04x' % version)
        if srandom == HRR_RANDOM:
            return self.hello_retry(suite, exts, raw, vname)
        info = {'version': vname, 'cipher': '0x%04x' % suite}
        if version != 0x0304:
            # 4.1.3 downgrade sentinels in the last 8 bytes of the random
            if srandom[-8:] == b'DOWNGRD\x01':
                info['downgrade'] = '1.2'
            elif srandom[-8:] == b'DOWNGRD\x00':
                info['downgrade'] = '1.1'
            emit('server_hello', **info)
            self.phase = 'raw'        # no TLS 1.2 handshake: just watch
            return
        ks = exts.get(51, b'')
        gid = struct.unpack('!H', ks[:2])[0] if len(ks) >= 2 else None
        info['group'] = GROUP_NAMES.get(gid, '0x%04x' % (gid or 0))
        emit('server_hello', **info)
        if self.phase == 'raw':
            return
        if suite not in SUITES or gid not in self.shares:
            emit('error', msg='server chose a suite/group we did not offer')
            self.phase = 'dead'
            return
        try:
            n = struct.unpack('!H', ks[2:4])[0]
            z = shared_secret(gid, self.shares[gid], ks[4:4 + n])
        except Exception as e:      # a bad server share
            emit('error', msg='key exchange failed: %s' % e)
            self.phase = 'dead'
            return
        self.suite, self.group = suite, gid
        h = self.h = SUITES[suite][2]
        self.transcript = (self.transcript if self.hrr else self.ch1) + raw
        zeros = bytes(h().digest_size)
        early = hkdf_extract(h, b'', zeros)
        hs = hkdf_extract(h, derive_secret(h, early, b'derived', b''), z)
        self.c_hs = derive_secret(h, hs, b'c hs traffic', self.transcript)
        s_hs = derive_secret(h, hs, b's hs traffic', self.transcript)
        self.s_hs = s_hs
        self.master = hkdf_extract(h, derive_secret(h, hs, b'derived', b''),
                                   zeros)
        self.rc = Protection(suite, s_hs)
        self.phase = 'enc_hs'

    def hello_retry(self, suite, exts, raw, vname):
        if self.hrr or self.phase == 'raw' or suite not in SUITES:
            emit('hello_retry_request', version=vname, cipher='0x%04x' % suite)
            emit('error', msg='unexpected HelloRetryRequest')
            self.phase = 'dead'
            return
        self.hrr = 1
        ks = exts.get(51, b'')
        gid = struct.unpack('!H', ks[:2])[0] if len(ks) >= 2 else None
        self.cookie = exts.get(44)
        emit('hello_retry_request',
             group=GROUP_NAMES.get(gid, '0x%04x' % (gid or 0)), cipher='0x%04x' % suite, cookie=int(self.cookie is not None))
        if gid is None or gid not in self.o.groups or gid in self.share_groups:
            emit('error', msg='HelloRetryRequest asks for an unusable group')
            self.phase = 'dead'
            return
        # 4.4.1: the transcript restarts with message_hash(Hash(ClientHello1))
        h = SUITES[suite][2]
        self.transcript = hs_msg(MESSAGE_HASH, h(self.ch1).digest()) + raw
        self.share_groups = [gid]
        try:
            ch2 = self.client_hello()
        except ValueError as e:
            emit('error', msg=str(e))
            self.phase = 'dead'
            return
        self.transcript += ch2
        if self.o.client_ccs and not self.ccs_sent:
            self.send_ccs('client_ccs')   # D.4: before the second flight
        self.send_hello(ch2, False)

    def encrypted_handshake(self, htype, body, raw):
        h = self.h
        if htype == ENCRYPTED_EXTENSIONS:
            e = parse_exts(body[2:])
            if 16 in e and len(e[16]) > 3:
                self.alpn = e[16][3:3 + e[16][2]].decode('latin-1')
        elif htype == CERTIFICATE_REQUEST:
            self.cert_req = body[1:1 + body[0]]    # certificate_request_context
        elif htype == FINISHED:
            fk = expand_label(h, self.s_hs, b'finished', b'', h().digest_size)
            want = hmac.new(fk, h(self.transcript).digest(), h).digest()
            if not hmac.compare_digest(want, body):
                emit('error', msg='server Finished does not verify')
                self.phase = 'dead'
                return
            self.transcript += raw
            return self.client_flight()
        elif htype not in (CERTIFICATE, CERTIFICATE_VERIFY):
            emit('handshake_msg', type=htype, len=len(body))
        self.transcript += raw

    def client_flight(self):
        o, h = self.o, self.h
        # application secrets: transcript ClientHello..server Finished
        c_ap = derive_secret(h, self.master, b'c ap traffic', self.transcript)
        s_ap = derive_secret(h, self.master, b's ap traffic', self.transcript)
        self.prev_rc, self.rc = self.rc, Protection(self.suite, s_ap)
        if o.client_ccs and not self.ccs_sent:
            self.send_ccs('client_ccs')
        self.wc = Protection(self.suite, self.c_hs)
        msgs = b''
        if self.cert_req is not None:
            # no client certificate: an empty Certificate message (4.4.2)
            msgs = hs_msg(CERTIFICATE, vec8(self.cert_req) + bytes(3))
            self.transcript += msgs
        fk = expand_label(h, self.c_hs, b'finished', b'', h().digest_size)
        mac = hmac.new(fk, h(self.transcript).digest(), h).digest()
        fin = hs_msg(FINISHED, mac)
        if o.finished_plus_keyupdate:
            # violates 5.1: Finished must end its record (key change follows)
            self.send_hs(msgs + fin + hs_msg(KEY_UPDATE, b'\x00'),
                         'client_finished+keyupdate')
            self.wc = Protection(self.suite, c_ap)
            self.wc.update()
        else:
            self.send_hs(msgs + fin, 'client_finished')
            self.wc = Protection(self.suite, c_ap)
        self.phase = 'app'
        emit('handshake', version='1.3', cipher='0x%04x' % self.suite,
             group=GROUP_NAMES.get(self.group, '0x%04x' % self.group),
             hrr=self.hrr, tickets=self.tickets, alpn=self.alpn)

    # -- the run

    def handshake_run(self):
        o = self.o
        if o.hello_hex:
            data = bytes.fromhex(o.hello_hex)
            self.send(data)
            emit('sent', what='hello_hex', bytes=len(data))
        else:
            self.ch1 = self.client_hello()
            self.send_hello(self.ch1, True)
        ok = self.pump(o.timeout, sliding=True,
                       until=lambda: self.phase in ('app', 'raw', 'dead'))
        if not ok:
            self.end('timeout', after=o.timeout)
        return self.phase == 'app'

    def action(self, a):
        wc, pad = self.wc, self.o.record_pad
        if a.startswith('get:'):
            host = self.o.sni or 'localhost'
            req = 'GET %s HTTP/1.1\r\nHost: %s\r\n\r\n' % (a[4:], host)
            self.send(wc.seal(APPDATA, req.encode(), pad))
        elif a.startswith('data:'):
            raw = codecs.decode(a[5:], 'unicode_escape').encode('latin-1')
            self.send(wc.seal(APPDATA, raw, pad))
        elif a.startswith('sleep:'):
            self.pump(float(a[6:]))
            return
        elif a in ('keyupdate', 'keyupdate-req'):
            req = b'\x01' if a == 'keyupdate-req' else b'\x00'
            self.send(wc.seal(HANDSHAKE, hs_msg(KEY_UPDATE, req), pad))
            wc.update()                 # our next record uses the new key
        elif a == 'keyupdate2':
            # two KeyUpdates in one record: the first must end its record
            self.send(wc.seal(HANDSHAKE, hs_msg(KEY_UPDATE, b'\x00') * 2, pad))
            wc.update()
            wc.update()
        elif a == 'keyupdate-bad-len':
            self.send(wc.seal(HANDSHAKE, hs_msg(KEY_UPDATE, b'\x00\x00'), pad))
        elif a == 'keyupdate-bad-val':
            self.send(wc.seal(HANDSHAKE, hs_msg(KEY_UPDATE, b'\x05'), pad))
        elif a == 'ccs':
            # a plaintext CCS after Finished is unexpected_message (5)
            self.send(record(CCS, 0x0303, b'\x01'))
        elif a == 'big-plain':
            # TLSInnerPlaintext of 2^14+1+100 bytes: record_overflow (5.2)
            self.send(wc.seal(APPDATA, b'A' * (MAX_PLAIN + 100), 0))
        elif a == 'big-cipher':
            n = MAX_PLAIN + 256 + 1
            self.send(struct.pack('!BHH', APPDATA, 0x0303, n) + os.urandom(n))
        elif a == 'bad-mac':
            r = bytearray(wc.seal(APPDATA, b'GET / HTTP/1.1\r\n\r\n', pad))
            r[-1] ^= 0x01
            self.send(bytes(r))
        elif a == 'close':
            self.send(wc.seal(ALERT, b'\x01\x00', pad))
        elif a == 'shutdown':
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                self.end('reset')
        emit('sent', what=a)
        if self.collect is None:
            self.pump(0.1)              # report what came back, don't block


# ------------------------------------------------------------------ options

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog='tlsraw.py', description='raw TLS 1.3 test client')
    p.add_argument('--host', default='127.0.0.1')
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--sni', default='localhost', help="'' for none")
    p.add_argument('--timeout', type=float, default=3.0)
    p.add_argument('--hello-frag', type=int, metavar='N')
    p.add_argument('--hello-zero', action='store_true')
    p.add_argument('--hello-pad', type=int, metavar='SIZE')
    p.add_argument('--hello-one-write', action='store_true',
                   help='the default')
    p.add_argument('--hello-write-each', action='store_true')
    p.add_argument('--versions', default='1.3')
    p.add_argument('--no-sv', action='store_true',
                   help='omit supported_versions')
    p.add_argument('--groups', default='x25519,secp256r1')
    p.add_argument('--share', default='x25519',
                   help="groups to send key shares for, or 'none'")
    p.add_argument('--bad-share', action='store_true')
    p.add_argument('--fallback-scsv', action='store_true')
    p.add_argument('--ciphers', help='hex codes: 1301,0x1302')
    p.add_argument('--alpn', help='protocols, e.g. http/1.1')
    p.add_argument('--no-psk-modes', action='store_true')
    p.add_argument('--client-ccs', action='store_true',
                   help='send the middlebox-compat CCS before Finished')
    p.add_argument('--record-pad', type=int, default=0, metavar='N',
                   help='zero padding in every encrypted record we send')
    p.add_argument('--truncate', type=int, metavar='N')
    p.add_argument('--hello-hex', metavar='HEX')
    p.add_argument('--finished-plus-keyupdate', action='store_true')
    p.add_argument('--actions-one-write', action='store_true',
                   help='the records of all actions leave in one send()')
    p.add_argument('actions', nargs='*', metavar='ACTION')
    o = p.parse_args(argv)

    def group(name):
        n = name.strip().lower()
        if n in GROUPS:
            return GROUPS[n]
        try:
            return int(n, 16)
        except ValueError:
            p.error('unknown group %r' % name)
    try:
        o.versions = [VERSIONS[v.strip()] for v in o.versions.split(',')]
        o.ciphers = (None if o.ciphers is None else
                     [int(c, 16) for c in o.ciphers.split(',')])
        if o.hello_hex:
            o.hello_hex = ''.join(c for c in o.hello_hex if c not in ' :\n')
            bytes.fromhex(o.hello_hex)
    except (KeyError, ValueError) as e:
        p.error('bad --versions, --ciphers or --hello-hex: %s' % e)
    o.groups = [group(g) for g in o.groups.split(',') if g]
    o.share = [] if o.share == 'none' else [group(g) for g in o.share.split(',')]
    for g in o.share:
        if g not in (0x001d, 0x001e) and g not in EC_CURVES:
            p.error('cannot make a key share for group 0x%04x' % g)
    o.alpn = o.alpn.split(',') if o.alpn else None
    if o.hello_frag is not None and not 1 <= o.hello_frag <= MAX_PLAIN:
        p.error('--hello-frag must be 1..16384')
    if o.hello_pad is not None and o.hello_pad > 65535 + 100:
        p.error('--hello-pad: the extensions block is limited to 64 KB')
    for a in o.actions:
        if a in ACTION_WORDS or a.startswith(('get:', 'data:')):
            continue
        if a.startswith('sleep:'):
            try:
                float(a[6:])
                continue
            except ValueError:
                pass
        p.error('unknown action %r' % a)
    return o


def main(argv):
    o = parse_args(argv)
    try:
        sock = socket.create_connection((o.host, o.port), timeout=o.timeout)
    except OSError as e:
        emit('error', msg='connect: %s' % e)
        return 1
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c = Client(o, sock)
    try:
        if c.handshake_run():
            if o.actions_one_write:
                c.collect = []
            for a in o.actions:
                c.action(a)
            if c.collect is not None:
                data, c.collect = b''.join(c.collect), None
                c.send(data)
        # at the end: wait for more records, an alert, EOF or a reset
        if not c.pump(o.timeout, sliding=True):
            c.end('timeout', after=o.timeout)
    except Ended:
        pass
    finally:
        sock.close()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
