#!/usr/bin/env python3
# A collector that lies, for t0710: it listens on SOCK and answers the
# shim's hello as MODE says, then tells on standard output what it got.
#   listen    takes the connection, reads what comes: "hello N bytes"
#   ring      a sealed page whose ring size points far past the mapping
#   nrings    a sealed page with more rings than the mapping holds
#   unsealed  a right layout in a memfd that can be made shorter
#   short     a welcome that says the region is longer than the memfd
#   drop      root binds, NOBODY listens (os.setuid after bind): a live
#             socket served by another user; answers "sites" with a forgery
# It prints "ready" once listening, and gives up after 5 s.
import fcntl
import os
import socket
import struct
import sys

mode, path = sys.argv[1], sys.argv[2]
MAGIC = 0x6D73636F70653031
VERSION = 5
HELLO = 8 + 4 * 4 + 256 + 8 * 2  # struct msc_hello

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
if mode == "drop":
    os.setuid(65534)
s.listen(4)
s.settimeout(5)
print("ready", flush=True)
try:
    c, _ = s.accept()
except socket.timeout:
    print("nobody came", flush=True)
    sys.exit(0)
c.settimeout(5)
if mode == "drop":
    try:
        c.recv(64)
        c.sendall(b'{"type":"site","pid":1,"bytes":1073741824,"allocs":1,"fn":"forged"}\n')
    except OSError:
        pass
    print("answered", flush=True)
    sys.exit(0)
got = b""
try:
    while len(got) < HELLO:
        b = c.recv(HELLO - len(got))
        if not b:
            break
        got += b
except OSError:
    pass
print("hello %d bytes" % len(got), flush=True)
if mode == "listen" or len(got) < HELLO:
    sys.exit(0)

size = 1 << 20
ring_size, nrings, told = 4096, 2, size
if mode == "ring":
    ring_size = 1 << 31
elif mode == "nrings":
    nrings = 4000
elif mode == "short":
    told = 64 << 20
seal = mode != "unsealed"
fd = os.memfd_create("fake", os.MFD_CLOEXEC | (os.MFD_ALLOW_SEALING if seal else 0))
os.ftruncate(fd, size)
# struct msc_ctl's first fields: magic, version, ring_size, nrings, ts_kind,
# depth, unwind, flags, collector_pid (this one's lie: pid 1)
ctl = struct.pack("<QIIIIIIII", MAGIC, VERSION, ring_size, nrings, 2, 64, 0, 0, 1)
os.pwrite(fd, ctl, 0)
if seal:
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
welcome = struct.pack("<QiIQ", MAGIC, 0, 0, told)
socket.send_fds(c, [welcome], [fd])
print("sent %s" % mode, flush=True)
