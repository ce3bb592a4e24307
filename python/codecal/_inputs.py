"""Turning what a user passes (numpy arrays, pandas Series, lists) into the
contiguous float64 and uint8 arrays the engine reads, with a ValueError that
names the argument and the first bad position for anything it cannot take.

Not here: any statistics. The engine checks the same things again.
"""

import numpy as np


def confidence_array(values, name="confidence"):
    """A 1-D float64 array of probabilities in [0, 1], no NaN, not empty."""
    array = _numbers(values, name)
    bad = np.flatnonzero(np.isnan(array))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is NaN; every confidence must be a probability in [0, 1]")
    bad = np.flatnonzero((array < 0.0) | (array > 1.0))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is {float(array[bad[0]])!r}, outside [0, 1]")
    return np.ascontiguousarray(array, dtype=np.float64)


def correct_array(values, length, name="correct"):
    """A 1-D uint8 array of 0/1 labels of `length` items holding both classes."""
    array = np.asarray(values)
    if array.dtype != np.bool_:
        array = _numbers(values, name)
        bad = np.flatnonzero((array != 0.0) & (array != 1.0))
        if bad.size:
            raise ValueError(f"{name}[{bad[0]}] is {float(array[bad[0]])!r}; labels are 0/1 or True/False")
    _check_shape(array, name)
    if array.shape[0] != length:
        raise ValueError(f"{name} has {array.shape[0]} items, confidence has {length}")
    labels = np.ascontiguousarray(array, dtype=np.uint8)
    if labels.min() == labels.max():
        kind = "correct (1)" if labels[0] else "wrong (0)"
        raise ValueError(f"{name}: every item is {kind}; calibration needs both correct and wrong items")
    return labels


def group_list(values, length, name):
    """One non-empty text label per item."""
    array = np.asarray(values, dtype=object)
    _check_shape(array, name)
    if array.shape[0] != length:
        raise ValueError(f"{name} has {array.shape[0]} items, confidence has {length}")
    labels = []
    for index, value in enumerate(array.tolist()):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            raise ValueError(f"{name}[{index}] is missing; every item needs a group")
        text = str(value)
        if not text.strip():
            raise ValueError(f"{name}[{index}] is empty; every item needs a group")
        labels.append(text)
    return labels


def by_columns(by, length):
    """`by` as (name, labels) pairs: a dict of columns, a DataFrame, or one Series or array."""
    if by is None:
        return []
    if hasattr(by, "columns"):  # a pandas DataFrame: one group column per column
        by = {name: by[name] for name in by.columns}
    if isinstance(by, dict):
        return [(str(name), group_list(values, length, f"by[{name!r}]")) for name, values in by.items()]
    name = getattr(by, "name", None) or "by"
    return [(str(name), group_list(by, length, "by"))]


def _numbers(values, name):
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: not numbers ({error})") from None
    _check_shape(array, name)
    return array


def _check_shape(array, name):
    if array.ndim != 1:
        raise ValueError(f"{name}: expected one value per item (a 1-D array), got shape {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty")
