#!/usr/bin/env python3
"""Pictures at scale, rendered: writes the SVG Gantt chart of a K = 16, M = 128 pipeline with
`pipeworks simulate --svg` and the predicted-vs-measured chart of a small `pipeworks run --predict
--svg`, checks that every label is legible (font size, inside the picture, row labels apart, each
fitting its column, the title naming the configuration), then renders each in headless Chromium
and checks the PNG (the picture's own size, not blank, kept small).

    render_in_chromium.py PIPEWORKS CHROMIUM WORKDIR
"""
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SVG_NS = "{http://www.w3.org/2000/svg}"
MIN_FONT_PX = 9        # smaller text is not legible on a screen at 100%
SANS_EM = 0.6          # the chart's own width estimate per character (viz/svg_gantt.cc)
MAX_PNG_BYTES = 400_000


def fail(message):
    sys.exit(f"render_in_chromium: {message}")


# (file name, pipeworks arguments, its title, its row labels)
CHARTS = [
    ("k16_m128", ["simulate", "--model", "uniform", "--layers", "32", "--cluster", "multinode", "--nodes", "2",
                  "-K", "16", "-M", "128", "--batch", "128", "--schedule", "1f1b"],
     "uniform on multinode: 1f1b, K=16, M=128, batch 128, recompute off (predicted)", 16),
    ("predicted_vs_measured", ["run", "--predict", "--model", "mlp", "--depth", "6", "--width", "16", "-K", "4",
                               "-M", "16", "--batch", "32", "--schedule", "1f1b", "--steps", "2", "--warmup", "1",
                               "--intra-op-threads", "1", "--profile-repetitions", "2", "--replay-rounds", "2"],
     "mlp on cpu: 1f1b, K=4, M=16, batch 32, recompute off (predicted vs measured)", 2 * 4),
]


def write_svg(exe, arguments, path):
    cmd = [exe, *arguments, "--svg", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr}")


def check_labels(path, expected_title, expected_rows):
    root = ET.parse(path).getroot()
    width, height = float(root.get("width")), float(root.get("height"))
    texts = [(t, "".join(t.itertext())) for t in root.iter(SVG_NS + "text")]
    title = texts[0][1]
    if title != expected_title:
        fail(f"the title does not name the configuration: {title!r}")
    rows = []
    for t, text in texts:
        size = float(t.get("font-size"))
        x, y = float(t.get("x")), float(t.get("y"))
        if size < MIN_FONT_PX:
            fail(f"{text!r} is drawn at {size} px (at least {MIN_FONT_PX})")
        if not (0 <= x <= width and 0 <= y <= height):
            fail(f"{text!r} at ({x}, {y}) lies outside the {width} x {height} picture")
        if re.fullmatch(r"d\d+ s\d+ \[\d+,\d+\)", text):
            rows.append((y, size, x, text))
    if len(rows) != expected_rows:
        fail(f"expected {expected_rows} row labels naming device, stage and layers, found {[r[3] for r in rows]}")
    rows.sort()
    for (y0, s0, _, a), (y1, _, _, b) in zip(rows, rows[1:]):
        if y0 < y1 < y0 + s0:
            fail(f"row labels {a!r} and {b!r} overlap ({y1 - y0} px apart at {s0} px)")
    for y, size, x, text in rows:  # right-aligned at x: they must start right of the picture's edge
        if x - len(text) * size * SANS_EM < 0:
            fail(f"row label {text!r} does not fit left of x = {x}")
    if not any(text == "micro-batch 0" for _, text in texts):
        fail("the legend does not read shades as micro-batches")
    return int(width), int(height)


def png_size(path):
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        fail(f"{path} is not a PNG")
    return struct.unpack(">II", data[16:24]), len(data)


def render(chromium, svg, png, width, height):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1",
           f"--window-size={width},{height}", f"--screenshot={png}", svg.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not png.exists():
        fail(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-2000:]}")
    (w, h), size = png_size(png)
    if (w, h) != (width, height):
        fail(f"Chromium rendered {w} x {h}, the picture is {width} x {height}")
    if not 20_000 < size < MAX_PNG_BYTES:  # a blank page compresses to a few KB
        fail(f"the render is {size} bytes (expected a drawn chart under {MAX_PNG_BYTES} bytes)")
    return size


def main():
    if len(sys.argv) != 4:
        fail(__doc__.strip().splitlines()[-1].strip())
    exe, chromium, workdir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    workdir.mkdir(parents=True, exist_ok=True)
    for name, arguments, title, rows in CHARTS:
        svg, png = workdir / f"{name}.svg", workdir / f"{name}.png"
        png.unlink(missing_ok=True)
        write_svg(exe, arguments, svg)
        width, height = check_labels(svg, title, rows)
        size = render(chromium, svg, png, width, height)
        print(f"render_in_chromium: {svg.name}: every label legible; rendered {width} x {height}, {size} bytes")


if __name__ == "__main__":
    main()
