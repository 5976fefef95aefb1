# The Python-style bot of bench/bots: http.client over ssl, with the
# headers python-requests sends, in its order, on one kept-alive
# connection from a given local address. It reads one request a line on
# stdin ({"method","path","body"}) and answers one a line on stdout
# ({"status","body"} or {"error"}); the benchmark solves the proof of work
# natively and counts this process's CPU time as the bot's.
import http.client
import json
import ssl
import sys
import zlib

host, port, local, cafile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=cafile)
ctx.set_alpn_protocols(["http/1.1"])
conn = None

BASE = [
    ("User-Agent", "python-requests/2.32.3"),
    ("Accept-Encoding", "gzip, deflate"),
    ("Accept", "*/*"),
    ("Connection", "keep-alive"),
]


def request(method, path, body):
    global conn
    if conn is None:
        conn = http.client.HTTPSConnection(host, port, context=ctx, source_address=(local, 0), timeout=30)
    conn.putrequest(method, path, skip_accept_encoding=True)
    for k, v in BASE:
        conn.putheader(k, v)
    data = None
    if body:
        data = body.encode()
        conn.putheader("Content-Length", str(len(data)))
        conn.putheader("Content-Type", "application/json")
    conn.endheaders(data)
    r = conn.getresponse()
    raw = r.read()
    enc = (r.getheader("Content-Encoding") or "").lower()
    if enc == "gzip":
        raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS)
    elif enc == "deflate":
        raw = zlib.decompress(raw)
    if r.will_close:
        conn.close()
        conn = None
    return r.status, raw.decode("utf-8", "replace")


for line in sys.stdin:
    req = json.loads(line)
    try:
        status, body = request(req["method"], req["path"], req.get("body"))
        out = {"status": status, "body": body}
    except Exception as e:  # the benchmark reports it
        if conn is not None:
            conn.close()
        conn = None
        out = {"error": repr(e)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
