"""Grids of simulations: points from a TOML spec (`points`), running them on
processes or Dask (`runner`), and the results file that makes a sweep resumable
(`results_file`)."""
