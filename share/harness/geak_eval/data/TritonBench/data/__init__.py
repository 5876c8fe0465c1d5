"""Stand-in for GEAK-eval's package of this name (see eval-deviations.md)."""
