"""Random numbers by purpose: `streams` holds the one table of stream purposes (every
random number is a function of (seed, purpose, index)); `samplepath` draws a run's
arrivals, placements and service times from those streams in blocks."""
