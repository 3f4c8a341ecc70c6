"""Timeline pictures with matplotlib, from span columns (Timeline.columns(), a pandas DataFrame, or
the span records of a JSON report), colored by kind like the SVG Gantt chart of viz/."""

import colorsys

# Hues of viz/kind_colors.cc (degrees); SEND/RECV are grey.
_HUES = {"F": 214, "B": 26, "I": 130, "W": 285, "R": 352}
_COMM = {"SEND_F": "#6b6b6b", "SEND_B": "#6b6b6b", "RECV_F": "#b0b0b0", "RECV_B": "#b0b0b0"}


def kind_color(kind):
    """The fill color of an action kind ('F', 'B', 'I', 'W', 'R', 'SEND_F', ...) as '#rrggbb'."""
    if kind in _COMM:
        return _COMM[kind]
    r, g, b = colorsys.hls_to_rgb(_HUES.get(kind, 0) / 360.0, 0.55, 0.68)
    return "#{:02x}{:02x}{:02x}".format(round(r * 255), round(g * 255), round(b * 255))


def plot_spans(ax, spans, title=None, time_unit_ns=1_000_000, show_comm=True, label_min_fraction=0.02):
    """Draws one row per device (device 0 on top) of compute spans, with thin send/recv strips under
    each row when show_comm. `spans` needs device, lane, kind, start_ns, end_ns (and microbatch for
    labels), as columns or records. Times are rebased to the first span and divided by
    time_unit_ns (default: milliseconds). Labels are drawn on spans wider than label_min_fraction
    of the makespan. Returns the axes."""
    import pandas

    frame = spans if isinstance(spans, pandas.DataFrame) else pandas.DataFrame(spans)
    if frame.empty:
        return ax
    origin = frame.start_ns.min()
    makespan = (frame.end_ns.max() - origin) / time_unit_ns
    num_devices = int(frame.device.max()) + 1
    for row in frame.itertuples():
        start = (row.start_ns - origin) / time_unit_ns
        width = (row.end_ns - row.start_ns) / time_unit_ns
        base = num_devices - 1 - row.device
        if row.lane == "compute":
            ax.broken_barh([(start, width)], (base + 0.2, 0.75), facecolors=kind_color(row.kind),
                           edgecolor="white", linewidth=0.5)
            if width >= label_min_fraction * makespan and hasattr(row, "microbatch"):
                ax.text(start + width / 2, base + 0.575, f"{row.kind}{row.microbatch}", ha="center",
                        va="center", fontsize=7)
        elif show_comm:
            offset = 0.1 if row.lane == "send" else 0.0
            ax.broken_barh([(start, width)], (base + offset, 0.08), facecolors=kind_color(row.kind))
    ax.set_yticks([num_devices - 1 - d + 0.575 for d in range(num_devices)])
    ax.set_yticklabels([f"device {d}" for d in range(num_devices)])
    ax.set_xlim(0, makespan)
    ax.set_xlabel("time (ms)" if time_unit_ns == 1_000_000 else f"time (x{time_unit_ns} ns)")
    if title:
        ax.set_title(title)
    return ax
