"""Open a dump in Model Explorer in a headless browser and check that the page shows the graph.

    python tools/model_explorer_check.py [--hlo DUMP] [--png OUT.png] [--chromium PATH]

Writes the dump's graph file and its bytes-read node data with hlo-index, starts
``model-explorer --no_open_in_browser`` on 127.0.0.1 with both, takes a headless Chromium
screenshot of the page the server names (after ``--wait`` seconds), and checks the screenshot:
the graph pane must be drawn and hold pixels of the bytes-read reds (the graph is drawn with
WebGL, so the page's DOM does not hold it). Nothing here needs the network: the server's version check and the
page's web fonts fail quietly offline. Exit 0 when the graph shows, 1 when it does not, 2 when a step failed.
Run by ``make model-explorer-check``; not part of the test suite (it needs the
``model-explorer`` extra and a Chromium).
"""

from __future__ import annotations

import argparse
import http.server
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GPT12 = ROOT / ".." / "shared" / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1600,1000",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_png(path: Path) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows of raw pixel bytes, bytes per pixel) of an 8-bit RGB or RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), "only 8-bit RGB / RGBA"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def graph_pixels(path: Path) -> tuple[int, float]:
    """(pixels in the bytes-read reds, share of pixels drawn) in the graph pane of the screenshot:
    left of the side panel, below the toolbar, above the legend."""
    width, height, rows, bpp = read_png(path)
    red = drawn = total = 0
    for row in rows[height // 10 : height * 17 // 20]:
        for x in range(0, (width * 3 // 4) * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            total += 1
            drawn += r < 240 or g < 240 or b < 240
            red += r > 150 and g < 200 and b < 190 and r - g > 60  # the red half of the gradient
    return red, drawn / total


def delayed_page(url: str, seconds: int) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A page showing ``url`` in a full-window frame whose load event comes ``seconds`` later (it
    holds an image served that late): headless Chromium's --screenshot waits for the load event,
    and Model Explorer's own page is loaded long before it has laid the graph out."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/late.gif"):
                time.sleep(seconds)
                body, kind = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "image/gif"
            else:
                body = (
                    f'<html><body style="margin:0"><iframe src="{url}" style="border:0;width:100vw;'
                    f'height:100vh"></iframe><img src="/late.gif" style="display:none"></body></html>'
                ).encode()
                kind = "text/html"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hlo", default=str(GPT12))
    parser.add_argument("--png", default="/tmp/model_explorer_check.png")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "")
    parser.add_argument("--wait", type=int, default=60, help="seconds the page gets to lay out the graph")
    args = parser.parse_args()
    if not args.chromium:
        print("error: no chromium (apt-get install -y chromium)", file=sys.stderr)
        return 2
    explorer = shutil.which("model-explorer", path=os.path.dirname(sys.executable)) or shutil.which("model-explorer")
    if not explorer:
        print("error: no model-explorer (pip install 'hlo-index[model-explorer]')", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="me_check_"))
    graph, prefix = work / "graph.json", work / "figures"
    run = [sys.executable, "-m", "hlo_index"]
    subprocess.run(run + ["graph", args.hlo, "-o", str(graph)], check=True)
    subprocess.run(run + ["analyze", args.hlo, "--format", "model-explorer-node-data", "-o", str(prefix)], check=True)
    port = free_port()
    server = subprocess.Popen(
        [
            explorer,
            str(graph),
            f"--node_data_paths={prefix}.bytes-read.json",
            "--no_open_in_browser",
            "--host=127.0.0.1",
            f"--port={port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = None
        deadline = time.time() + 120
        while url is None and time.time() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            found = re.search(rf"http://127\.0\.0\.1:{port}/\S*", line)
            url = found.group(0) if found else None
        if url is None:
            print("error: the server named no address", file=sys.stderr)
            return 2
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/check_health", timeout=10) as r:
            assert r.read() == b"model_explorer_ok"
        page, page_url = delayed_page(url, args.wait)
        png = Path(args.png)
        try:
            subprocess.run(
                [
                    args.chromium,
                    *CHROMIUM_FLAGS,
                    f"--user-data-dir={work / 'chromium-profile'}",
                    f"--timeout={(args.wait + 60) * 1000}",
                    f"--screenshot={png}",
                    page_url,
                ],
                check=True,
                timeout=args.wait + 120,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            page.shutdown()
        red, drawn = graph_pixels(png)
        print(f"{png}: {100 * drawn:.1f}% of the graph pane drawn, {red} pixels in the bytes-read reds")
        if drawn < 0.005 or red < 100:
            print("error: the page does not show the graph coloured by bytes read", file=sys.stderr)
            return 1
        return 0
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
