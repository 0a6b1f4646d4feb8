#!/usr/bin/env python3
"""Stand-in for gslbd's control API and health checker in the checks stage of tools/bench (stdlib only).

  loadpeer.py HTTP_PORT CHECK_PORT RATE

The checks stage measures gslbd's QPS while 500 services are tcp-checked and 1,000 reports/s are posted to its
control API. The load generator (check listener and reporter, in the bench process) shares CPU 0 with dnsperf,
and dnsperf is the bottleneck: a baseline without the generator would charge the generator's CPU to gslbd.
So the baseline runs the same generator against this process instead of gslbd: it answers the reports like
gslbd's API (HTTP/1.1 keep-alive, `{"ok":true}`) and connects to the check listener RATE times a second like
gslbd's tcp checks (connect, close). It runs on gslbd's CPU (the kernel's share of the loopback traffic lands
where gslbd's would) but as SCHED_IDLE: it takes only what gslbd's DNS worker leaves idle, so the baseline is
gslbd undisturbed, and idle and loaded differ only in gslbd doing the server-side work itself.
"""

import os
import socket
import sys
import threading
import time

RESPONSE_BODY = b'{"ok":true}\n'
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Date: Thu, 01 Jan 2026 00:00:00 GMT\r\nContent-Length: " + str(len(RESPONSE_BODY)).encode()
            + b"\r\n\r\n" + RESPONSE_BODY)


def serve(conn):
    """One keep-alive connection: answer every complete request (head + Content-Length body) with RESPONSE."""
    buf = b""
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            while True:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                length = 0
                for line in buf[:end].split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v)
                if len(buf) < end + 4 + length:
                    break
                buf = buf[end + 4 + length:]
                conn.sendall(RESPONSE)
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def http_sink(lsock):
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def checker(port, rate):
    """RATE connects a second to the check listener, evenly paced (gslbd spreads its checks over the interval)."""
    interval = 1.0 / rate
    nxt = time.monotonic()
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            s.close()
        except OSError:
            pass
        nxt += interval
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        elif delay < -1:
            nxt = time.monotonic()  # fell behind by a second: don't burst


def main():
    http_port, check_port, rate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    if hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # before any thread: they inherit it
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", http_port))
    lsock.listen(64)
    if rate > 0:
        threading.Thread(target=checker, args=(check_port, rate), daemon=True).start()
    http_sink(lsock)


if __name__ == "__main__":
    main()
