#!/usr/bin/env python3
"""Writes the hash files and wordlist of docs/clients.md's hashcat runs into DIR (default .).

  scripts/hashcat-hashes.py [DIR]

0, 100, 1400, 1700: MD5, SHA1, SHA2-256, SHA2-512 of `hashcat`; 1000: MD4 of UTF-16LE
`hashcat` (hashcat's wiki example); 500: md5crypt, salt 28772684; 3200: bcrypt cost 5 (both
hashcat's wiki examples); 22000 (`WPA*02*` line) and 2500 (`.hccapx` record): a WPA2 M1+M2
handshake, key version 2 (HMAC-SHA1 MIC), PSK `hashcat1`, ESSID `vkcl-test`.
"""
import hashlib
import hmac
import os
import struct
import sys


def md4(msg):
    """RFC 1320 (OpenSSL 3 no longer gives hashlib an MD4)."""
    rol = lambda x, n: ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF
    ml = len(msg) * 8
    msg += b"\x80" + b"\x00" * ((55 - len(msg)) % 64) + struct.pack("<Q", ml)
    h = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476]
    rounds = [
        (lambda x, y, z: (x & y) | (~x & z), 0, range(16), (3, 7, 11, 19)),
        (lambda x, y, z: (x & y) | (x & z) | (y & z), 0x5A827999,
         [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15], (3, 5, 9, 13)),
        (lambda x, y, z: x ^ y ^ z, 0x6ED9EBA1,
         [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15], (3, 9, 11, 15)),
    ]
    for off in range(0, len(msg), 64):
        x = struct.unpack("<16I", msg[off:off + 64])
        a, b, c, d = h
        for f, k, order, shifts in rounds:
            for i, idx in enumerate(order):
                t = rol((a + f(b, c, d) + x[idx] + k) & 0xFFFFFFFF, shifts[i % 4])
                a, b, c, d = d, t, b, c
        h = [(v + w) & 0xFFFFFFFF for v, w in zip(h, (a, b, c, d))]
    return struct.pack("<4I", *h).hex()


def wpa(psk=b"hashcat1", essid=b"vkcl-test"):
    pmk = hashlib.pbkdf2_hmac("sha1", psk, essid, 4096, 32)
    ap, sta = bytes.fromhex("001122334455"), bytes.fromhex("66778899aabb")
    anonce, snonce = bytes(range(32)), bytes(range(100, 132))
    data = min(ap, sta) + max(ap, sta) + min(anonce, snonce) + max(anonce, snonce)
    ptk = b"".join(hmac.new(pmk, b"Pairwise key expansion\x00" + data + bytes([i]),
                            hashlib.sha1).digest() for i in range(4))
    rsn = bytes.fromhex("30140100000fac040100000fac040100000fac020000")
    # M2: RSN descriptor, key info 0x010a (version 2, pairwise, MIC), replay counter 1,
    # SNonce, MIC zero while it is computed (and in both hashcat formats)
    body = (bytes([2]) + struct.pack(">HHQ", 0x010A, 0, 1) + snonce + bytes(16 + 8 + 8 + 16)
            + struct.pack(">H", len(rsn)) + rsn)
    eapol = bytes([1, 3]) + struct.pack(">H", len(body)) + body
    mic = hmac.new(ptk[:16], eapol, hashlib.sha1).digest()[:16]
    line = "WPA*02*%s*%s*%s*%s*%s*%s*00\n" % (
        mic.hex(), ap.hex(), sta.hex(), essid.hex(), anonce.hex(), eapol.hex())
    hccapx = (struct.pack("<II", 0x58504348, 4) + bytes([0, len(essid)]) + essid.ljust(32, b"\0")
              + bytes([2]) + mic + ap + anonce + sta + snonce
              + struct.pack("<H", len(eapol)) + eapol.ljust(256, b"\0"))
    assert len(hccapx) == 393
    return line, hccapx


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    w = lambda name, data: open(os.path.join(out, name), "wb" if isinstance(data, bytes) else "w").write(data)
    pw = b"hashcat"
    w("words.txt", "abc\nqwerty\nhashcat\n123456\nfoo\npassword1\nhashcat1\n")
    for mode, algo in (("0", "md5"), ("100", "sha1"), ("1400", "sha256"), ("1700", "sha512")):
        w(mode + ".hash", hashlib.new(algo, pw).hexdigest() + "\n")
    ntlm = md4("hashcat".encode("utf-16le"))
    assert ntlm == "b4b9b02e6f09a9bd760f388b67351e2b"
    w("1000.hash", ntlm + "\n")
    # libcrypt's md5crypt and bcrypt give these (crypt('hashcat', salt)); fixed here so that
    # Python 3.13, which has no crypt module, writes them too
    w("500.hash", "$1$28772684$iEwNOgGugqO9.bIz5sk8k/\n")
    w("3200.hash", "$2b$05$LhayLxezLhK1LhWvKxCyLOj0j1u.Kj0jZ0pEmm134uzrQlFvQJLF6\n")
    line, hccapx = wpa()
    w("22000.hash", line)
    w("2500.hccapx", hccapx)


if __name__ == "__main__":
    main()
