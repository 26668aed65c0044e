"""From sojourn times to statistics: batch means and intervals (`statistics`),
streaming percentile sketches (`sketch`), run length and warm-up (`convergence`),
and the result of a run (`result`)."""
