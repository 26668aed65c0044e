"""The k-th smallest of a job's task completions when the job has many tasks.

The engines find a job's quorum completion with methods that are fastest for the few
tasks of a replicated store (an insertion sort, or a branch-free transposition sort)
but take time quadratic in the number of tasks: a (10^4, 10^4, 1) job costs 10^8
steps. Beyond `SMALL` tasks they call `kth_smallest`, an in-place quickselect
(expected linear time). It returns the same exact value, so results do not change.
"""

from __future__ import annotations

import numba

#: Tasks up to which the engines keep their quadratic small-job methods.
SMALL = 32


@numba.njit(cache=True)
def kth_smallest(values, count, k):
    """The k-th smallest (1-based) of ``values[:count]``, reordering them: Hoare's
    selection with a median-of-three pivot."""
    low, high = 0, count - 1
    target = k - 1
    while low < high:
        middle = (low + high) // 2
        # median of three to the middle, so sorted or reversed input stays linear
        if values[middle] < values[low]:
            values[middle], values[low] = values[low], values[middle]
        if values[high] < values[low]:
            values[high], values[low] = values[low], values[high]
        if values[high] < values[middle]:
            values[high], values[middle] = values[middle], values[high]
        pivot = values[middle]
        i, j = low, high
        while i <= j:
            while values[i] < pivot:
                i += 1
            while values[j] > pivot:
                j -= 1
            if i <= j:
                values[i], values[j] = values[j], values[i]
                i += 1
                j -= 1
        if target <= j:
            high = j
        elif target >= i:
            low = i
        else:
            return values[target]
    return values[target]
