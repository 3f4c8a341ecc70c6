"""Keyword arguments renamed to match the command line (plan's batch=/devices= as `pipeworks plan
--batch --devices`): the old names stay accepted with a DeprecationWarning naming the new one."""
import functools
import warnings

# function name -> {old keyword: new keyword}
RENAMED = {
    "plan": {"batch_size": "batch", "num_devices": "devices", "threads": "sweep_threads"},
    "sweep": {"batch_sizes": "batch", "stage_counts": "stages", "microbatch_counts": "microbatches",
              "threads": "sweep_threads"},
}


def accepting_old_keywords(function, renamed):
    """`function` taking each old keyword of `renamed` as its new one, with a DeprecationWarning."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        for old, new in renamed.items():
            if old not in kwargs:
                continue
            if new in kwargs:
                raise TypeError(f"{function.__name__}() got both {old}= and {new}=; {old}= is the old name of {new}=")
            warnings.warn(f"{function.__name__}({old}=) is deprecated; use {new}=", DeprecationWarning, stacklevel=2)
            kwargs[new] = kwargs.pop(old)
        return function(*args, **kwargs)

    return wrapper
