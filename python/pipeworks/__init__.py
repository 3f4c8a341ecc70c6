"""pipeworks: describe, simulate, plan and draw pipeline-parallel training schedules (GPipe, 1F1B,
interleaved, zero-bubble and V-shaped), with data and tensor parallelism beside the pipeline.

The compiled extension ``pipeworks._pipeworks`` holds the bindings of the C++ libraries (sched,
sim, viz); this package re-exports them and adds a few conveniences for notebooks:

    >>> import pipeworks as pw
    >>> s = pw.generate("gpipe", num_stages=4, num_microbatches=8)
    >>> r = pw.simulate(s, pw.uniform_cost_model(4, forward_ns=1_000_000, backward_ns=2_000_000))
    >>> r.makespan_ns == (8 + 4 - 1) * 3_000_000
    True

Times are integer nanoseconds (``*_ns``), memory integer bytes (``*_bytes``). Failures raise
``pipeworks.Error`` (a ``ValueError``) carrying the project's located message.
"""

from . import _pipeworks
from ._pipeworks import *  # noqa: F401,F403  (the bindings are the public API)
from ._pipeworks import Error, Timeline
from .plotting import kind_color, plot_spans
from .renamed_keywords import RENAMED as _RENAMED
from .renamed_keywords import accepting_old_keywords as _accepting_old_keywords

plan = _accepting_old_keywords(_pipeworks.plan, _RENAMED["plan"])
sweep = _accepting_old_keywords(_pipeworks.sweep, _RENAMED["sweep"])

__all__ = [name for name in dir(_pipeworks) if not name.startswith("_")] + [
    "as_timelines",
    "kind_color",
    "plot_spans",
    "plot_timeline",
    "svg_image",
    "spans_frame",
    "sweep_frame",
]


def as_timelines(timelines):
    """A list of Timelines from one Timeline, a SimResult, or an iterable of either."""
    if isinstance(timelines, Timeline):
        return [timelines]
    if isinstance(timelines, _pipeworks.SimResult):
        return [timelines.timeline]
    return [t.timeline if isinstance(t, _pipeworks.SimResult) else t for t in timelines]


def svg_image(timelines, **options):
    """The SVG Gantt chart of one or several timelines as an IPython SVG object (draws inline in
    Jupyter). ``options`` are those of ``svg_gantt`` (width_px, row_height_px, title, ...)."""
    from IPython.display import SVG

    return SVG(data=_pipeworks.svg_gantt(as_timelines(timelines), **options))


def plot_timeline(ax, timeline, title=None, **options):
    """Draws a Timeline (or SimResult) on matplotlib axes; see plot_spans for the options."""
    t = as_timelines(timeline)[0]
    return plot_spans(ax, t.columns(), title=t.name if title is None else title, **options)


def spans_frame(timeline):
    """The spans of a Timeline (or SimResult) as a pandas DataFrame, one row per span."""
    import pandas

    return pandas.DataFrame(as_timelines(timeline)[0].columns())


def sweep_frame(result):
    """The rows of a SweepResult (or Plan) as a pandas DataFrame, one row per configuration."""
    import pandas

    if isinstance(result, _pipeworks.Plan):
        result = result.sweep
    return pandas.DataFrame(result.columns())
