"""Writing files: every output goes through the atomic writers of `io` (a complete
file or none, never a half-written one)."""
